//! gRPC status codes by name (grpc/doc/statuscodes.md), the one table every part of callbench reads.

/// Status names, indexed by code.
pub const NAMES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The name of `code`; None for a code gRPC does not define.
pub fn name(code: i64) -> Option<&'static str> {
    usize::try_from(code).ok().and_then(|c| NAMES.get(c)).copied()
}

/// The code of `name` (`NOT_FOUND` → 5).
pub fn code(name: &str) -> Option<i32> {
    NAMES.iter().position(|n| *n == name).map(|c| c as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_go_both_ways() {
        assert_eq!(name(8), Some("RESOURCE_EXHAUSTED"));
        assert_eq!(name(16), Some("UNAUTHENTICATED"));
        assert_eq!((name(17), name(-1)), (None, None));
        assert_eq!(code("NOT_FOUND"), Some(5));
        assert_eq!(code("nope"), None);
        assert!((0..17).all(|c| code(name(c).unwrap()) == Some(c as i32)));
    }
}
