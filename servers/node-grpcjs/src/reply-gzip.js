'use strict';
// gzip-compressed replies for clients that accept them (grpc-accept-encoding: gzip), which the contract
// asks of every server. grpc-js servers cannot do this (grpc/grpc-node#1823: its serializeMessage always
// writes the "compressed" flag 0, and grpc.default_compression_algorithm only acts on clients), and its
// public API hides grpc-accept-encoding from handlers and interceptors. So this wraps the one internal
// function through which grpc-js's server starts every call, `getServerInterceptingCall(interceptors,
// stream, headers, ...)`: for a call that accepts gzip, the call's HTTP/2 stream announces
// `grpc-encoding: gzip` and every message frame it writes is re-framed compressed.
// Checked against @grpc/grpc-js 1.14.7, the version package.json pins.

const { gzipSync } = require('node:zlib');
const internals = require('@grpc/grpc-js/build/src/server-interceptors');

const startCall = internals.getServerInterceptingCall;
if (typeof startCall !== 'function' || startCall.length !== 6) {
  throw new Error('@grpc/grpc-js changed: getServerInterceptingCall is not the function reply-gzip.js wraps');
}

/** Whether a grpc-accept-encoding header value lists gzip. */
function acceptsGzip(value) {
  return typeof value === 'string' && value.split(',').some((v) => v.trim().toLowerCase() === 'gzip');
}

/** Announces gzip in the reply headers (trailers-only answers included: harmless there). */
function respondWithGzip(stream) {
  const respond = stream.respond;
  stream.respond = function (headers, options) {
    return respond.call(this, { ...headers, 'grpc-encoding': 'gzip' }, options);
  };
}

/** grpc-js writes one whole frame per write: flag byte 0, 4-byte length, message. */
function compressFrames(stream) {
  const write = stream.write;
  stream.write = function (frame, ...rest) {
    const message = gzipSync(frame.subarray(5));
    const compressed = Buffer.allocUnsafe(message.length + 5);
    compressed.writeUInt8(1, 0);
    compressed.writeUInt32BE(message.length, 1);
    message.copy(compressed, 5);
    return write.call(this, compressed, ...rest);
  };
}

internals.getServerInterceptingCall = function (interceptors, stream, headers, ...rest) {
  if (acceptsGzip(headers['grpc-accept-encoding'])) {
    respondWithGzip(stream);
    compressFrames(stream);
  }
  return startCall.call(this, interceptors, stream, headers, ...rest);
};
