'use strict';
// One error type for every workload, with its REST status and gRPC code
// (crates/workloads/src/error.rs).

const KINDS = {
  INVALID_ARGUMENT: { httpStatus: 400, grpcCode: 3 },
  NOT_FOUND: { httpStatus: 404, grpcCode: 5 },
  RESOURCE_EXHAUSTED: { httpStatus: 413, grpcCode: 8 },
  INTERNAL: { httpStatus: 500, grpcCode: 13 },
};

class WorkloadError extends Error {
  /** @param {keyof KINDS} code the gRPC status name, also `error.code` in REST error bodies */
  constructor(code, message) {
    super(message);
    this.name = 'WorkloadError';
    this.code = code;
    this.httpStatus = KINDS[code].httpStatus;
    this.grpcCode = KINDS[code].grpcCode;
  }
}

const invalid = (message) => new WorkloadError('INVALID_ARGUMENT', message);
const notFound = (message) => new WorkloadError('NOT_FOUND', message);
const internal = (message) => new WorkloadError('INTERNAL', message);

/** `{"error": {"code", "message"}}`, the REST error body of the contract. */
const errorBody = (code, message) => ({ error: { code, message } });

module.exports = { WorkloadError, invalid, notFound, internal, errorBody };
