'use strict';
// The documented limits of the contract (contract/README.md, crates/workloads/src/limits.rs).

module.exports = Object.freeze({
  /** Largest accepted request body (REST) or message (gRPC): 4 MiB. */
  MAX_BODY_BYTES: 4 * 1024 * 1024,
  USER_COUNT: 10_000,
  MAX_PASSWORD_BYTES: 1024,
  MAX_STRING_BYTES: 256,
  MIN_CAR_YEAR: 1886,
  MAX_CAR_YEAR: 2100,
  MAX_MILEAGE: 10_000_000,
  MIN_NTIMES: 1,
  MAX_NTIMES: 1000,
  MAX_BOARD_CELLS: 10_000,
  MAX_COORDINATE: 1_000_000_000,
  /** A step fails once the population grows past this, which bounds its cost. */
  MAX_POPULATION: 50_000,
  /** The most records one download may ask for. */
  MAX_DOWNLOAD: 100_000,
  /** A streamed (NDJSON) upload as a whole; each of its lines is bounded by MAX_BODY_BYTES. */
  MAX_UPLOAD_BYTES: 64 * 1024 * 1024,
});
