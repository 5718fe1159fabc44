'use strict';
// Request bodies: application/json only (parameters such as charset allowed), strict UTF-8; the streamed
// upload takes application/x-ndjson only.

const { isUtf8 } = require('node:buffer');

/**
 * Replaces fastify's body parsers with one for application/json. fastify's own JSON parser decodes the
 * body with replacement characters, so invalid UTF-8 would pass: this one refuses it (400) and then hands
 * the text to fastify's default JSON parser (secure-json-parse, empty and malformed bodies are 400).
 * Without the text/plain parser fastify answers any other content type with 415.
 */
function strictJsonBodies(fastify) {
  const parseJson = fastify.getDefaultJsonParser('error', 'ignore');
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // The whole body has been read: unlike fastify's default, the connection can stay open (see errors.js).
    const refuse = (err) => {
      err.bodyRead = true;
      done(err, undefined);
    };
    if (!isUtf8(body)) {
      const err = new Error('the body is not valid UTF-8');
      err.statusCode = 400;
      refuse(err);
      return;
    }
    parseJson(request, body.toString('utf8'), (err, json) => (err ? refuse(err) : done(null, json)));
  });
}

/**
 * The body parser of POST /records/upload, in a context of its own: application/x-ndjson only (parameters
 * allowed; else 415), handed on unread as a stream (inflated when the request is compressed), which the handler
 * reads line by line (ndjson.js). An upload announced over the upload limit is 413 before any of it is read.
 */
function ndjsonBodies(fastify, maxBytes) {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/x-ndjson', (request, payload, done) => {
    if (Number(request.headers['content-length']) > maxBytes) {
      const err = new Error(`an upload is limited to ${maxBytes} bytes`);
      err.statusCode = 413;
      done(err, undefined); // fastify closes the connection: the client may still be sending
      return;
    }
    done(null, payload);
  });
}

/**
 * preValidation hook of the routes with a body: fastify skips parsing a PUT/POST without Content-Type and
 * body, so the missing media type would show up as a validation error (400); the contract wants 415.
 */
function requireContentType(mediaType) {
  return (request, reply, done) => {
    if (request.headers['content-type'] === undefined) {
      const err = new Error(`Content-Type must be ${mediaType}`);
      err.statusCode = 415;
      done(err);
      return;
    }
    done();
  };
}

module.exports = { strictJsonBodies, ndjsonBodies, requireContentType };
