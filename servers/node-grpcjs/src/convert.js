'use strict';
// Between grpc-js's shapes and the shared workloads': int64 Longs as numbers, cells as pairs, workload errors
// as gRPC statuses.

const { status } = require('@grpc/grpc-js');
const { errors } = require('../../_node-shared/workloads');

/** int64 fields are Long objects (absent: undefined); ids and coordinates beyond 2^53 are refused anyway. */
function toNumber(value) {
  if (value == null) {
    return 0;
  }
  return typeof value === 'number' ? value : value.toNumber();
}

/** The workloads' [x, y] pairs as callbench.v1.Cell messages. */
function toBoard({ board }) {
  return { board: board.map(([x, y]) => ({ x, y })) };
}

/** A workload error as its status; anything else is a bug, logged and answered INTERNAL. */
function toStatus(err) {
  if (err instanceof errors.WorkloadError) {
    return { code: err.grpcCode, details: err.message };
  }
  process.stderr.write(`error: ${err.stack ?? err}\n`);
  return { code: status.INTERNAL, details: 'internal error' };
}

module.exports = { toNumber, toBoard, toStatus };
