//! The harness: finds the repo and its servers, starts and stops server
//! processes (never leaving one behind), and checks servers against the
//! contract's vectors (`verify`).

pub mod child;
pub mod load;
pub mod manifest;
pub mod process;
pub mod program;
pub mod repo;
pub mod verify;
pub mod versions;
