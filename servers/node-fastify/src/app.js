'use strict';
// The fastify application: settings, plugins, body parsing, error handling, routes.

const compress = require('@fastify/compress');
const fastify = require('fastify');
const { MAX_BODY_BYTES } = require('../../_node-shared/workloads/limits');
const { strictJsonBodies } = require('./body');
const { errorHandler, notFoundHandler } = require('./errors');
const { routes } = require('./routes');

/** `pem` (`{ cert, key }`, or none): serve HTTPS with node's TLS, HTTP/1.1 only (ALPN http/1.1), as without TLS. */
async function buildApp(users, pem) {
  const app = fastify({
    ...(pem ? { https: { cert: pem.cert, key: pem.key } } : {}),
    logger: false, // no access log
    bodyLimit: MAX_BODY_BYTES, // exactly 4 MiB passes, more is 413 (also the inflated size of a gzip body)
    // fastify's ajv coerces types ("2012" -> 2012, 1 -> [1]) and fills defaults; the contract wants a
    // string where a number belongs to be 400, and the body as sent.
    ajv: { customOptions: { coerceTypes: false, useDefaults: false, removeAdditional: false } },
  });
  // Replies compressed when the client accepts it (Accept-Encoding), and request bodies with
  // Content-Encoding gzip/deflate/br inflated on the way in. The plugin leaves replies under 1 KiB alone
  // (GET /students is 812 bytes); 32 bytes, as tower-http, makes it compress what the Rust servers do.
  // NDJSON (GET /records) is not in its list of compressible types; JSON still is (its mime-db fallback).
  await app.register(compress, { threshold: 32, customTypes: /^application\/x-ndjson(?:;|$)/ });
  strictJsonBodies(app);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  routes(app, users);
  return app;
}

module.exports = { buildApp };
