//! Request templates (`--template`): a body or gRPC message (as JSON) with per-call values filled
//! in, the same for REST and gRPC.
//!
//! `{{call}}` the call's number in the run (from 0), `{{caller}}` the caller's (concurrency slot,
//! from 0), `{{int A B}}` a random integer from A to B, `{{string N}}` N random letters and digits,
//! `{{uuid}}` a random version-4 UUID. Random values come from the seeded generator over the run's seed, the
//! call's number and the placeholder's place: the same seed gives the same requests.

use crate::error::LoadError;
use callbench_engine::call_data::Turn;
use callbench_primitives::rng::Rng;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Call,
    Caller,
    Int(i64, i64),
    String(usize),
    Uuid,
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

/// The longest `{{string N}}`.
const MAX_STRING: usize = 1 << 20;

impl Template {
    /// Parses `text`; an unknown or malformed placeholder is a one-line error.
    pub fn parse(text: &str) -> Result<Template, LoadError> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                parts.push(Part::Text(rest[..open].to_string()));
            }
            let after = &rest[open + 2..];
            let close = after.find("}}").ok_or_else(|| format!("template: {{{{ at {:?} is never closed", clip(rest)));
            let close = close.map_err(LoadError::Data)?;
            parts.push(placeholder(after[..close].trim()).map_err(LoadError::Data)?);
            rest = &after[close + 2..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_string()));
        }
        Ok(Template { parts })
    }

    /// Whether any value changes from call to call.
    pub fn varies(&self) -> bool {
        self.parts.iter().any(|p| !matches!(p, Part::Text(_)))
    }

    /// The text of the call at `turn`, its random values drawn from `seed`.
    pub fn render(&self, turn: Turn, seed: u64) -> String {
        let mut out = String::new();
        for (place, part) in self.parts.iter().enumerate() {
            let mut random = generator(seed, turn.call, place as u64);
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Call => out.push_str(&turn.call.to_string()),
                Part::Caller => out.push_str(&turn.caller.to_string()),
                Part::Int(low, high) => {
                    let span = (*high as i128 - *low as i128 + 1) as u128;
                    let value = *low as i128 + (random.next_u64() as u128 % span) as i128;
                    out.push_str(&value.to_string());
                }
                Part::String(n) => {
                    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
                    out.extend((0..*n).map(|_| ALPHABET[(random.next_u64() % ALPHABET.len() as u64) as usize] as char));
                }
                Part::Uuid => out.push_str(&uuid(random.next_u64(), random.next_u64())),
            }
        }
        out
    }

    /// The texts whose values reach every placeholder's extremes (the lowest and the highest
    /// integers, the largest call and caller numbers a run of `calls` by `callers` can give): a
    /// template that makes a good request for these makes one for every call.
    pub fn extremes(&self, calls: u64, callers: usize) -> [String; 2] {
        let side = |high: bool| {
            let mut out = String::new();
            for part in &self.parts {
                match part {
                    Part::Text(text) => out.push_str(text),
                    Part::Call => out.push_str(&if high { calls.saturating_sub(1) } else { 0 }.to_string()),
                    Part::Caller => out.push_str(&if high { callers.saturating_sub(1) } else { 0 }.to_string()),
                    Part::Int(low, top) => out.push_str(&if high { top } else { low }.to_string()),
                    Part::String(n) => out.push_str(&"z".repeat(*n)),
                    Part::Uuid => out.push_str(&uuid(u64::MAX, u64::MAX)),
                }
            }
            out
        };
        [side(false), side(true)]
    }
}

fn placeholder(inside: &str) -> Result<Part, String> {
    let words: Vec<&str> = inside.split_whitespace().collect();
    let number = |w: &str| w.parse::<i64>().map_err(|_| format!("template: {{{{{inside}}}}}: {w:?} is not an integer"));
    match words.as_slice() {
        ["call"] => Ok(Part::Call),
        ["caller"] => Ok(Part::Caller),
        ["uuid"] => Ok(Part::Uuid),
        ["int", low, high] => {
            let (low, high) = (number(low)?, number(high)?);
            if low > high {
                return Err(format!("template: {{{{{inside}}}}}: the lowest is above the highest"));
            }
            Ok(Part::Int(low, high))
        }
        ["string", n] => match n.parse::<usize>() {
            Ok(n) if (1..=MAX_STRING).contains(&n) => Ok(Part::String(n)),
            _ => Err(format!("template: {{{{{inside}}}}}: a length from 1 to {MAX_STRING}")),
        },
        _ => Err(format!("template: unknown placeholder {{{{{inside}}}}}: call, caller, int A B, string N or uuid")),
    }
}

fn clip(text: &str) -> String {
    text.chars().take(24).collect()
}

/// The generator of one placeholder of one call (the one seeded generator, `callbench_primitives::rng`).
fn generator(seed: u64, call: u64, place: u64) -> Rng {
    Rng::new(seed ^ call.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ place.wrapping_mul(0xD1B5_4A32_D192_ED03))
}

/// A version-4 UUID (RFC 9562 §5.4) from 128 random bits.
fn uuid(high: u64, low: u64) -> String {
    let high = (high & !0xF000) | 0x4000; // version 4
    let low = (low & !(0b11 << 62)) | (0b10 << 62); // variant 10
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xFFFF,
        high & 0xFFFF,
        low >> 48,
        low & 0xFFFF_FFFF_FFFF
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(call: u64, caller: usize) -> Turn {
        Turn { call, caller }
    }

    #[test]
    fn text_without_placeholders_is_itself() {
        let t = Template::parse(r#"{"id": 1}"#).unwrap();
        assert!(!t.varies());
        assert_eq!(t.render(turn(5, 1), 9), r#"{"id": 1}"#);
    }

    #[test]
    fn call_and_caller_are_the_turns() {
        let t = Template::parse(r#"{"n": {{call}}, "by": {{ caller }}}"#).unwrap();
        assert!(t.varies());
        assert_eq!(t.render(turn(41, 3), 0), r#"{"n": 41, "by": 3}"#);
    }

    #[test]
    fn random_values_stay_in_their_range_and_vary() {
        let t = Template::parse("{{int -2 2}}").unwrap();
        let seen: std::collections::BTreeSet<i64> =
            (0..200).map(|call| t.render(turn(call, 0), 7).parse().unwrap()).collect();
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), [-2, -1, 0, 1, 2]);
        let full = Template::parse(&format!("{{{{int {} {}}}}}", i64::MIN, i64::MAX)).unwrap();
        assert_ne!(full.render(turn(0, 0), 1), full.render(turn(1, 0), 1));
    }

    #[test]
    fn the_same_seed_makes_the_same_requests() {
        let t = Template::parse("{{string 12}}/{{uuid}}/{{int 1 1000000}}").unwrap();
        assert_eq!(t.render(turn(3, 0), 42), t.render(turn(3, 1), 42)); // random values follow the call, not the caller
        assert_ne!(t.render(turn(3, 0), 42), t.render(turn(3, 0), 43));
        assert_ne!(t.render(turn(3, 0), 42), t.render(turn(4, 0), 42));
    }

    #[test]
    fn strings_and_uuids_have_their_form() {
        let t = Template::parse("{{string 16}} {{uuid}}").unwrap();
        let text = t.render(turn(9, 0), 1);
        let (s, u) = text.split_once(' ').unwrap();
        assert!(s.len() == 16 && s.chars().all(|c| c.is_ascii_alphanumeric()));
        let groups: Vec<&str> = u.split('-').collect();
        assert_eq!(groups.iter().map(|g| g.len()).collect::<Vec<_>>(), [8, 4, 4, 4, 12]);
        assert!(groups[2].starts_with('4'), "version 4: {u}");
        assert!("89ab".contains(&groups[3][..1]), "variant 10: {u}");
    }

    #[test]
    fn extremes_reach_each_end() {
        let t = Template::parse(r#"{"a": {{int 5 9}}, "n": {{call}}}"#).unwrap();
        assert_eq!(t.extremes(100, 4), [r#"{"a": 5, "n": 0}"#, r#"{"a": 9, "n": 99}"#]);
    }

    #[test]
    fn bad_placeholders_are_one_line_errors() {
        for (text, says) in [
            ("{{nope}}", "unknown placeholder {{nope}}"),
            ("{{int 3}}", "unknown placeholder"),
            ("{{int 9 1}}", "the lowest is above the highest"),
            ("{{int a 1}}", "\"a\" is not an integer"),
            ("{{string 0}}", "a length from 1"),
            ("x {{call", "is never closed"),
        ] {
            let LoadError::Data(e) = Template::parse(text).unwrap_err() else { panic!("{text}: a data error") };
            assert!(e.contains(says) && !e.contains('\n'), "{text}: {e}");
        }
    }
}
