//! The documented limits of the contract (see contract/README.md). Every
//! server in every language enforces the same numbers.

/// Largest accepted request body (REST) or message (gRPC): 4 MiB.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Users are 1..=USER_COUNT.
pub const USER_COUNT: i64 = 10_000;
pub const MAX_PASSWORD_BYTES: usize = 1024;

pub const MAX_STRING_BYTES: usize = 256;
pub const MIN_CAR_YEAR: u32 = 1886;
pub const MAX_CAR_YEAR: u32 = 2100;
pub const MAX_MILEAGE: u32 = 10_000_000;

pub const MIN_NTIMES: u32 = 1;
pub const MAX_NTIMES: u32 = 1000;
pub const MAX_BOARD_CELLS: usize = 10_000;
pub const MAX_COORDINATE: i64 = 1_000_000_000;
/// A step fails once the population grows past this, which bounds its cost.
pub const MAX_POPULATION: usize = 50_000;
