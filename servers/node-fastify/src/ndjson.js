'use strict';
// NDJSON both ways: a streamed upload read line by line as it arrives, each line parsed and validated as the
// JSON bodies are (strict UTF-8, fastify's JSON parser, the route's ajv), within the contract's limits; and a
// download made line by line as the socket takes it, never built whole.

const { isUtf8 } = require('node:buffer');
const { Readable } = require('node:stream');
const { MAX_BODY_BYTES, MAX_UPLOAD_BYTES } = require('../../_node-shared/workloads/limits');

const NEWLINE = 0x0a;
/** About how much of a download is made at a time (a stream's default high-water mark). */
const DOWNLOAD_CHUNK = 16 * 1024;

/**
 * Reads the NDJSON body of `request` (the stream ndjsonBodies handed on): every line that is not blank is
 * parsed, checked against `schema` and given to `onValue`, which may throw. Resolves once the body has ended.
 * A bad line (400, or onValue's error) stops the parsing, but the rest of the body is still read (within the
 * upload limit) so that the connection stays usable; the error comes once it has ended. A line over 4 MiB or
 * an upload over 64 MiB is 413 at once, and the connection is closed (the client may still be sending).
 */
function readNdjson(request, schema, onValue) {
  const stream = request.body;
  const parseJson = request.server.getDefaultJsonParser('error', 'ignore');
  const validate = request.compileValidationSchema(schema);
  let lineNumber = 0;
  const parseLine = (bytes) => {
    lineNumber++;
    if (isBlank(bytes)) {
      return;
    }
    if (!isUtf8(bytes)) {
      throw badLine(lineNumber, 'not valid UTF-8');
    }
    let value;
    let parsed = false;
    parseJson(request, bytes.toString('utf8'), (err, json) => {
      parsed = !err;
      value = json;
    });
    if (!parsed) {
      throw badLine(lineNumber, 'not valid JSON');
    }
    if (!validate(value)) {
      const [first] = validate.errors;
      throw badLine(lineNumber, `record${first.instancePath} ${first.message}`);
    }
    onValue(value);
  };

  return new Promise((resolve, reject) => {
    const parts = []; // the start of the line still being read
    let partsLength = 0;
    let total = 0;
    let failure = null;
    let settled = false;
    const settle = (err) => {
      if (settled) {
        return;
      }
      settled = true;
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      if (err === null) {
        resolve();
        return;
      }
      if (err !== failure) {
        stream.pause(); // no more of it is read: the reply closes the connection
        err.bodyUnread = true;
      }
      reject(err);
    };
    const guard = (fn) => {
      if (failure === null) {
        try {
          fn();
        } catch (err) {
          failure = err;
        }
      }
    };
    const onData = (chunk) => {
      total += chunk.length;
      if (total > MAX_UPLOAD_BYTES) {
        settle(tooLarge(`an upload is limited to ${MAX_UPLOAD_BYTES} bytes`));
        return;
      }
      let start = 0;
      for (let end = chunk.indexOf(NEWLINE); end !== -1 && failure === null; end = chunk.indexOf(NEWLINE, start)) {
        if (partsLength + end - start > MAX_BODY_BYTES) {
          settle(tooLarge(`a line is limited to ${MAX_BODY_BYTES} bytes`));
          return;
        }
        const piece = chunk.subarray(start, end);
        const line = partsLength === 0 ? piece : Buffer.concat([...parts.splice(0), piece]);
        partsLength = 0;
        start = end + 1;
        guard(() => parseLine(line));
      }
      if (failure === null && start < chunk.length) {
        partsLength += chunk.length - start;
        if (partsLength > MAX_BODY_BYTES) {
          settle(tooLarge(`a line is limited to ${MAX_BODY_BYTES} bytes`));
          return;
        }
        parts.push(chunk.subarray(start));
      }
    };
    const onEnd = () => {
      if (partsLength > 0) {
        guard(() => parseLine(Buffer.concat(parts))); // the last line may end without a newline
      }
      settle(failure);
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    // A broken compressed stream carries its status (400); a client gone mid-upload has no one to answer.
    stream.on('error', (err) => settle(err.statusCode ? err : cutOff()));
    stream.resume(); // @fastify/compress hands on its inflating stream paused
  });
}

/** Whether a line holds only JSON whitespace (a record's line has a `{` first, so this stops at once). */
function isBlank(bytes) {
  for (const b of bytes) {
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) {
      return false;
    }
  }
  return true;
}

function badLine(lineNumber, why) {
  const err = new Error(`line ${lineNumber}: ${why}`);
  err.statusCode = 400;
  return err;
}

function tooLarge(message) {
  const err = new Error(message);
  err.statusCode = 413;
  return err;
}

function cutOff() {
  const err = new Error('the upload was cut off');
  err.statusCode = 400;
  return err;
}

/** A stream of `count` lines, `line(i)` and a newline each, made as the reader asks for them. */
function ndjsonLines(count, line) {
  let i = 0;
  return new Readable({
    read() {
      let text = '';
      while (i < count && text.length < DOWNLOAD_CHUNK) {
        text += `${line(i++)}\n`;
      }
      if (text.length > 0) {
        this.push(text);
      }
      if (i === count) {
        this.push(null);
      }
    },
  });
}

module.exports = { readNdjson, ndjsonLines };
