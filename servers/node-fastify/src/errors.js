'use strict';
// The contract's error responses: a status and `{"error": {"code", "message"}}` (contract/README.md).

const { WorkloadError, errorBody } = require('../../_node-shared/workloads/errors');

/** Error codes of the statuses fastify and its plugins answer with (gRPC status names where one fits). */
const CODES = {
  400: 'INVALID_ARGUMENT',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'RESOURCE_EXHAUSTED',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

/**
 * fastify's error handler: workload errors carry their status; fastify's own errors (validation, body
 * parsing, limits, media type, request decompression) carry `statusCode`. Anything else is a bug: 500.
 */
function errorHandler(err, request, reply) {
  if (err.bodyRead) {
    // fastify closes the connection after any body parsing error, in case the client is still sending;
    // a body that was read to its end but is not valid JSON leaves nothing unread.
    reply.removeHeader('connection');
  }
  if (err.bodyUnread) {
    // A streamed upload refused before its end (a limit, a broken stream): the rest is not read, so the
    // connection cannot be kept.
    reply.header('connection', 'close');
  }
  if (err instanceof WorkloadError) {
    reply.code(err.httpStatus).send(errorBody(err.code, err.message));
    return;
  }
  const status = err.validation ? 400 : err.statusCode;
  if (status >= 400 && status < 500) {
    reply.code(status).send(errorBody(CODES[status] ?? 'INVALID_ARGUMENT', err.message));
    return;
  }
  process.stderr.write(`error: ${request.method} ${request.url}: ${err.stack ?? err}\n`);
  reply.code(500).send(errorBody('INTERNAL', 'internal error'));
}

function notFoundHandler(request, reply) {
  reply.code(404).send(errorBody('NOT_FOUND', `no route for ${request.method} ${request.url}`));
}

/** The handler of a known path called with another method. */
function methodNotAllowed(allowed) {
  return (request, reply) => {
    reply.code(405).header('Allow', allowed).send(errorBody('METHOD_NOT_ALLOWED', `${request.method} not allowed; use ${allowed}`));
  };
}

module.exports = { errorHandler, notFoundHandler, methodNotAllowed };
