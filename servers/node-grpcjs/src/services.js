'use strict';
// The contract's gRPC services: convert the request, call the shared workload, convert the reply.

const { status } = require('@grpc/grpc-js');
const { cars, echo, errors, life, students } = require('../../_node-shared/workloads');

/** Handlers of every callbench.v1 service, by full service name. */
function contractServices(users) {
  return {
    'callbench.v1.Auth': {
      Test: (call, callback) => {
        const { id, password = '' } = call.request;
        // Runs on the event loop even in per-request mode (async file read, then parse and search).
        users.test(toNumber(id), password).then((reply) => callback(null, reply), (err) => callback(toStatus(err)));
      },
    },
    'callbench.v1.Students': { List: unary(() => students.list()) },
    'callbench.v1.Cars': { Send: unary((request) => cars.send(request)) },
    'callbench.v1.Life': {
      Setup: unary(() => toBoard(life.setup())),
      Step: unary(({ ntimes, board = [] }) => toBoard(life.step(board.map(({ x, y }) => [toNumber(x), toNumber(y)]), ntimes))),
    },
    'callbench.v1.Echo': { Echo: unary((request) => echo.echo(request)) },
  };
}

/** A unary handler from a function of the request that returns the reply or throws. */
function unary(fn) {
  return (call, callback) => {
    let reply;
    try {
      reply = fn(call.request);
    } catch (err) {
      callback(toStatus(err));
      return;
    }
    callback(null, reply);
  };
}

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

function toStatus(err) {
  if (err instanceof errors.WorkloadError) {
    return { code: err.grpcCode, details: err.message };
  }
  process.stderr.write(`error: ${err.stack ?? err}\n`);
  return { code: status.INTERNAL, details: 'internal error' };
}

module.exports = { contractServices };
