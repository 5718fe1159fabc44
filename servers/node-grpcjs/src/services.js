'use strict';
// The contract's gRPC services: convert the request, call the shared workload, convert the reply
// (the streaming calls of callbench.v1.Records are in records.js).

const { cars, echo, life, students } = require('../../_node-shared/workloads');
const { toBoard, toNumber, toStatus } = require('./convert');
const records = require('./records');

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
    'callbench.v1.Records': { Upload: records.upload, Converse: records.converse, Download: records.download },
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

module.exports = { contractServices };
