//! The header fields an HTTP/2 answer may carry (RFC 9113 §8.2, §8.3.2): names in lowercase
//! without separators, values without NUL, CR or LF or surrounding whitespace, `:status` once and
//! first in a head, no pseudo-header in trailers, no connection-specific field. An answer that
//! breaks them is malformed: a stream error of type PROTOCOL_ERROR (§8.1.1).

/// Fields that only make sense on one HTTP/1.1 connection (§8.2.2).
const CONNECTION_SPECIFIC: [&[u8]; 5] =
    [b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"];

/// Checks the fields of one header block as they are decoded, in order.
#[derive(Debug, Default)]
pub struct FieldCheck {
    trailers: bool,
    status: bool,
    regular: bool,
    malformed: bool,
}

impl FieldCheck {
    /// For an answer's head (`trailers` false) or its trailers.
    pub fn new(trailers: bool) -> FieldCheck {
        FieldCheck { trailers, ..FieldCheck::default() }
    }

    pub fn field(&mut self, name: &[u8], value: &[u8]) {
        if self.malformed {
            return;
        }
        self.malformed = !value_ok(value)
            || match name.strip_prefix(b":") {
                Some(pseudo) => !self.pseudo_ok(pseudo, value),
                None => {
                    self.regular = true;
                    !name_ok(name) || CONNECTION_SPECIFIC.contains(&name)
                }
            };
    }

    /// Only `:status`, once, before the regular fields, in a head; three digits.
    fn pseudo_ok(&mut self, pseudo: &[u8], value: &[u8]) -> bool {
        let ok = !self.trailers
            && !self.regular
            && !self.status
            && pseudo == b"status"
            && value.len() == 3
            && value.iter().all(u8::is_ascii_digit);
        self.status = true;
        ok
    }

    /// Whether the block broke a rule (a head without `:status` included).
    pub fn malformed(&self) -> bool {
        self.malformed || (!self.trailers && !self.status)
    }
}

/// A regular field's name: not empty, no control, space, uppercase, colon or non-ASCII byte.
fn name_ok(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&b| !matches!(b, 0x00..=0x20 | b'A'..=b'Z' | b':' | 0x7f..=0xff))
}

/// A value: no NUL, CR or LF, no space or tab at either end.
fn value_ok(value: &[u8]) -> bool {
    let edge = |b: Option<&u8>| matches!(b, Some(b' ' | b'\t'));
    !edge(value.first()) && !edge(value.last()) && !value.iter().any(|&b| matches!(b, 0 | b'\r' | b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(trailers: bool, fields: &[(&str, &str)]) -> bool {
        let mut check = FieldCheck::new(trailers);
        for (name, value) in fields {
            check.field(name.as_bytes(), value.as_bytes());
        }
        !check.malformed()
    }

    #[test]
    fn well_formed_heads_and_trailers_pass() {
        assert!(check(false, &[(":status", "200"), ("content-type", "application/grpc"), ("x-a_b.c~1", "")]));
        assert!(check(false, &[(":status", "404"), ("x-value", "a b\tc"), ("x-utf8", "é")]));
        assert!(check(true, &[("grpc-status", "0"), ("grpc-message", "")]));
        assert!(check(true, &[]), "empty trailers");
    }

    #[test]
    fn each_rule_makes_a_block_malformed() {
        let head = |fields: &[(&str, &str)]| check(false, &[&[(":status", "200")][..], fields].concat());
        for (what, ok) in [
            ("no :status", check(false, &[("content-type", "text/plain")])),
            ("two :status", head(&[(":status", "200")])),
            (":status after a regular field", check(false, &[("x", "1"), (":status", "200")])),
            ("a request's pseudo-header", head(&[(":path", "/")])),
            ("an unknown pseudo-header", head(&[(":x", "1")])),
            ("a pseudo-header in trailers", check(true, &[(":status", "200")])),
            (":status not three digits", check(false, &[(":status", "20x")])),
            (":status of four digits", check(false, &[(":status", "2000")])),
            ("an uppercase name", head(&[("Content-Type", "x")])),
            ("a space in a name", head(&[("x y", "1")])),
            ("a colon in a name", head(&[("x:y", "1")])),
            ("a non-ASCII name", head(&[("é", "1")])),
            ("an empty name", head(&[("", "1")])),
            ("NUL in a value", head(&[("x", "a\0b")])),
            ("CR in a value", head(&[("x", "a\rb")])),
            ("LF in a value", head(&[("x", "a\nb")])),
            ("a value starting with a space", head(&[("x", " a")])),
            ("a value ending with a tab", head(&[("x", "a\t")])),
            ("connection", head(&[("connection", "close")])),
            ("transfer-encoding", head(&[("transfer-encoding", "chunked")])),
            ("keep-alive", head(&[("keep-alive", "timeout=5")])),
            ("proxy-connection", head(&[("proxy-connection", "x")])),
            ("upgrade", head(&[("upgrade", "h2c")])),
        ] {
            assert!(!ok, "{what} passed");
        }
    }
}
