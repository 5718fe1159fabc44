//! The deterministic `users.json` of seed 000: USER_COUNT users `{id, hash}`.
//! Same bytes every time, so every language reads the very same file.

use crate::limits::USER_COUNT;
use serde::Deserialize;
use sha2::{Digest, Sha512};

/// One entry of users.json, as in the seed.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct User {
    pub id: i64,
    pub hash: String,
}

/// The bytes of users.json: a JSON array, one user per line.
/// A user's `hash` is the SHA-512 hex of the text `password-<id>`.
pub fn users_json() -> Vec<u8> {
    let mut out = Vec::with_capacity(USER_COUNT as usize * 150);
    out.extend_from_slice(b"[\n");
    for id in 1..=USER_COUNT {
        let hash = hex::encode(Sha512::digest(format!("password-{id}").as_bytes()));
        out.extend_from_slice(format!("{{\"id\":{id},\"hash\":\"{hash}\"}}").as_bytes());
        out.extend_from_slice(if id < USER_COUNT { b",\n" } else { b"\n" });
    }
    out.extend_from_slice(b"]\n");
    out
}

/// Writes users.json to `path` unless a file with the same bytes is there.
pub fn write_users_json(path: &std::path::Path) -> std::io::Result<()> {
    let bytes = users_json();
    if std::fs::read(path).map(|old| old == bytes).unwrap_or(false) {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // A server reading it never sees half a file, whichever thread of ours writes it.
    callbench_atomic_file::write_atomic(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_every_user_once_and_parses() {
        let users: Vec<User> = serde_json::from_slice(&users_json()).unwrap();
        assert_eq!(users.len(), USER_COUNT as usize);
        assert!(users.iter().enumerate().all(|(i, u)| u.id == i as i64 + 1));
        assert!(users.iter().all(|u| u.hash.len() == 128));
    }

    #[test]
    fn same_bytes_every_time() {
        // The digest is in contract/README.md: any generator, in any language, must match it.
        use sha2::Sha256;
        let digest = hex::encode(Sha256::digest(users_json()));
        assert_eq!(digest, "f05aecc030315eb68cf1d208d42bb96f787b020f19f1fbbb9c803191401dc05c");
    }
}
