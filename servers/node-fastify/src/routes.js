'use strict';
// The contract's routes: one method each (405 for the others), each handler calls its workload.

const { cars, echo, life, students } = require('../../_node-shared/workloads');
const { requireContentType } = require('./body');
const { methodNotAllowed } = require('./errors');
const s = require('./schemas');

function routes(fastify, users) {
  const route = (method, url, schema, handler) => {
    fastify.route({ method, url, schema, handler, preValidation: schema.body ? requireContentType : undefined });
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
