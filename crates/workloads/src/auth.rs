//! Seed 000's auth workload: find the user by id, SHA-512 hex of the password.

use crate::error::{Result, WorkloadError};
use crate::limits::MAX_PASSWORD_BYTES;
use crate::users::User;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha512};
use std::path::PathBuf;

/// REST body of `PUT /auth/{id}`.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct AuthBody {
    pub password: String,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
pub struct AuthResponse {
    pub hash: String,
}

/// How a server finds users.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// users.json parsed once at start into a map (the default).
    Preloaded,
    /// users.json read, parsed and searched linearly on every call: what seed 000 measured.
    PerRequest,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "preloaded" => Ok(Mode::Preloaded),
            "per-request" => Ok(Mode::PerRequest),
            other => Err(format!("unknown mode '{other}' (expected preloaded or per-request)")),
        }
    }
}

pub enum UserStore {
    Preloaded(FxHashMap<i64, String>),
    PerRequest(PathBuf),
}

impl UserStore {
    /// Opens the store; in preloaded mode reads and parses the file now.
    pub fn open(path: impl Into<PathBuf>, mode: Mode) -> std::io::Result<Self> {
        let path = path.into();
        match mode {
            Mode::Preloaded => {
                let users = read_users(&path)?;
                Ok(UserStore::Preloaded(users.into_iter().map(|u| (u.id, u.hash)).collect()))
            }
            Mode::PerRequest => {
                read_users(&path)?; // fail at start, not on the first call
                Ok(UserStore::PerRequest(path))
            }
        }
    }

    pub fn mode(&self) -> Mode {
        match self {
            UserStore::Preloaded(_) => Mode::Preloaded,
            UserStore::PerRequest(_) => Mode::PerRequest,
        }
    }

    /// The auth call: NOT_FOUND for an unknown id, INVALID_ARGUMENT for a bad password.
    pub fn test(&self, id: i64, password: &str) -> Result<AuthResponse> {
        check_password(password)?;
        let found = match self {
            UserStore::Preloaded(users) => users.contains_key(&id),
            UserStore::PerRequest(path) => {
                let users = read_users(path).map_err(|e| WorkloadError::internal(format!("cannot read users: {e}")))?;
                users.iter().any(|u| u.id == id)
            }
        };
        if !found {
            return Err(WorkloadError::not_found(format!("no user with id {id}")));
        }
        Ok(AuthResponse { hash: sha512_hex(password) })
    }
}

fn read_users(path: &std::path::Path) -> std::io::Result<Vec<User>> {
    let text = std::fs::read_to_string(path)?;
    serde_json::from_str(&text).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

fn check_password(password: &str) -> Result<()> {
    if password.is_empty() {
        return Err(WorkloadError::invalid("password must not be empty"));
    }
    if password.len() > MAX_PASSWORD_BYTES {
        return Err(WorkloadError::invalid(format!("password is longer than {MAX_PASSWORD_BYTES} bytes")));
    }
    Ok(())
}

/// Lowercase hex SHA-512.
pub fn sha512_hex(text: &str) -> String {
    hex::encode(Sha512::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(mode: Mode) -> UserStore {
        let path = std::env::temp_dir().join(format!("cb-users-{}-{mode:?}.json", std::process::id()));
        crate::users::write_users_json(&path).unwrap();
        UserStore::open(path, mode).unwrap()
    }

    #[test]
    fn sha512_matches_the_fips_180_vector() {
        assert_eq!(sha512_hex("abc"), "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
    }

    #[test]
    fn both_modes_agree() {
        for mode in [Mode::Preloaded, Mode::PerRequest] {
            let s = store(mode);
            assert_eq!(s.test(9999, "abc").unwrap().hash, sha512_hex("abc"));
            assert_eq!(s.test(0, "abc").unwrap_err().kind, crate::ErrorKind::NotFound);
            assert_eq!(s.test(10_001, "abc").unwrap_err().kind, crate::ErrorKind::NotFound);
            assert_eq!(s.test(1, "").unwrap_err().kind, crate::ErrorKind::InvalidArgument);
            let long = "x".repeat(MAX_PASSWORD_BYTES + 1);
            assert_eq!(s.test(1, &long).unwrap_err().kind, crate::ErrorKind::InvalidArgument);
        }
    }
}
