'use strict';
// The contract's routes: one method each (405 for the others), each handler calls its workload.

const { cars, echo, life, limits, records, students } = require('../../_node-shared/workloads');
const { ndjsonBodies, requireContentType } = require('./body');
const { methodNotAllowed } = require('./errors');
const { ndjsonLines, readNdjson } = require('./ndjson');
const s = require('./schemas');

const NDJSON = 'application/x-ndjson';

const requireJson = requireContentType('application/json');

function routes(fastify, users) {
  const route = (method, url, schema, handler) => {
    fastify.route({ method, url, schema, handler, preValidation: schema.body ? requireJson : undefined });
    allowOnly(fastify, method, url);
  };

  route('PUT', '/auth/:id', { params: s.authParams, body: s.authRequest, response: { 200: s.authResponse } },
    // Runs on the event loop even in per-request mode (async file read, then parse and search).
    async (request) => users.test(Number(request.params.id), request.body.password));
  route('GET', '/students', { response: { 200: s.studentsResponse } }, async () => students.list());
  route('POST', '/cars', { body: s.carMessage, response: { 200: s.carMessage } }, async (request) => cars.send(request.body));
  route('GET', '/life/setup', { response: { 200: s.board } }, async () => life.setup());
  route('POST', '/life/step', { body: s.stepRequest, response: { 200: s.board } },
    async (request) => life.step(request.body.board, request.body.ntimes));
  route('POST', '/echo', { body: s.echoRequest, response: { 200: s.echoMessage } }, async (request) => echo.echo(request.body));
  route('POST', '/records/batch', { body: s.echoRequest, response: { 200: s.uploadSummary } },
    async (request) => records.UploadSummary.of(request.body.records));
  // The streamed upload has its own body parser (NDJSON, unread), so it lives in a context of its own.
  fastify.register(async (ndjson) => {
    ndjsonBodies(ndjson, limits.MAX_UPLOAD_BYTES);
    ndjson.route({
      method: 'POST',
      url: '/records/upload',
      schema: { response: { 200: s.uploadSummary } },
      preValidation: requireContentType(NDJSON),
      handler: async (request) => {
        const summary = new records.UploadSummary();
        await readNdjson(request, s.record, (record) => summary.add(record));
        return summary;
      },
    });
    allowOnly(ndjson, 'POST', '/records/upload');
  });
  // NDJSON written as it goes: fastify pipes the stream to the socket, chunked.
  route('GET', '/records', { querystring: s.downloadQuery }, async (request, reply) => {
    const count = records.downloadCount(Number(request.query.count));
    const line = reply.compileSerializationSchema(s.record);
    reply.type(NDJSON);
    return ndjsonLines(count, (i) => line(records.downloaded(i)));
  });
  route('GET', '/health', { response: { 200: s.health } }, async () => ({ status: 'SERVING' }));
}

/**
 * fastify answers a known path with an unknown method 404; the contract wants 405. Every other method gets
 * a route that answers 405 in onRequest, before any body is read (HEAD stays with GET, as fastify exposes it).
 */
function allowOnly(fastify, method, url) {
  const others = fastify.supportedMethods.filter((m) => m !== method && !(method === 'GET' && m === 'HEAD'));
  fastify.route({
    method: others,
    url,
    exposeHeadRoute: false,
    onRequest: methodNotAllowed(method),
    handler: methodNotAllowed(method),
  });
}

module.exports = { routes };
