'use strict';
// Request bodies: application/json only (parameters such as charset allowed), strict UTF-8.

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
 * preValidation hook of the routes with a body: fastify skips parsing a PUT/POST without Content-Type and
 * body, so the missing media type would show up as a validation error (400); the contract wants 415.
 */
function requireContentType(request, reply, done) {
  if (request.headers['content-type'] === undefined) {
    const err = new Error('Content-Type must be application/json');
    err.statusCode = 415;
    done(err);
    return;
  }
  done();
}

module.exports = { strictJsonBodies, requireContentType };
