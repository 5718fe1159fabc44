//! The arithmetic a stated figure is derived by: numbers, `+ - * /` and parentheses, with the
//! usual precedence (`(58221 - 53073) / 4000`).

/// The value of `text`, or why it is not an expression.
pub(crate) fn evaluate(text: &str) -> Result<f64, String> {
    let tokens: Vec<char> = text.chars().collect();
    let mut at = 0;
    let v = sum(&tokens, &mut at)?;
    skip(&tokens, &mut at);
    if at != tokens.len() {
        return Err(format!("unexpected '{}'", tokens[at]));
    }
    Ok(v)
}

/// Past the spaces at `at`.
fn skip(t: &[char], at: &mut usize) {
    while *at < t.len() && t[*at].is_whitespace() {
        *at += 1;
    }
}

fn sum(t: &[char], at: &mut usize) -> Result<f64, String> {
    let mut v = product(t, at)?;
    skip(t, at);
    while *at < t.len() && matches!(t[*at], '+' | '-' | '−') {
        let op = t[*at];
        *at += 1;
        let r = product(t, at)?;
        v = if op == '+' { v + r } else { v - r };
        skip(t, at);
    }
    Ok(v)
}

fn product(t: &[char], at: &mut usize) -> Result<f64, String> {
    let mut v = atom(t, at)?;
    skip(t, at);
    while *at < t.len() && matches!(t[*at], '*' | '/' | '×') {
        let op = t[*at];
        *at += 1;
        let r = atom(t, at)?;
        v = if op == '/' { v / r } else { v * r };
        skip(t, at);
    }
    Ok(v)
}

fn atom(t: &[char], at: &mut usize) -> Result<f64, String> {
    skip(t, at);
    if *at < t.len() && t[*at] == '(' {
        *at += 1;
        let v = sum(t, at)?;
        skip(t, at);
        if *at >= t.len() || t[*at] != ')' {
            return Err("a '(' is not closed".into());
        }
        *at += 1;
        return Ok(v);
    }
    let start = *at;
    while *at < t.len() && (t[*at].is_ascii_digit() || t[*at] == '.') {
        *at += 1;
    }
    let number: String = t[start..*at].iter().collect();
    number.parse().map_err(|_| format!("a number expected at '{}'", t[start..].iter().collect::<String>()))
}

#[cfg(test)]
mod tests {
    use super::evaluate;

    #[test]
    fn precedence_and_parentheses() {
        assert_eq!(evaluate("182 - 102"), Ok(80.0));
        assert!((evaluate("(58221 - 53073) / 4000").unwrap() - 1.287).abs() < 1e-12);
        assert_eq!(evaluate("1 + 2 * 3"), Ok(7.0));
        assert!(evaluate("(1 + 2").is_err() && evaluate("1 +").is_err() && evaluate("1 2").is_err());
    }
}
