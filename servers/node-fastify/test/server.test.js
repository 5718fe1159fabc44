'use strict';
// The server started on port 0 and called over HTTP/1.1 (node's fetch):
//   node --test servers/node-fastify/test/   (after the build; writes a users file of its own)

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { request } = require('node:http');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { after, before, test } = require('node:test');
const { gzipSync } = require('node:zlib');

const MAIN = join(__dirname, '..', 'src', 'main.js');
const MiB4 = 4 * 1024 * 1024;
const sha512 = (t) => createHash('sha512').update(t).digest('hex');

// One scratch folder for every server of this file, removed when the tests end.
const SCRATCH = mkdtempSync(join(tmpdir(), 'cb-fastify-'));
after(() => rmSync(SCRATCH, { recursive: true, force: true }));
let files = 0;

function usersFile() {
  const path = join(SCRATCH, `users-${++files}.json`);
  writeFileSync(path, JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ id: i + 1, hash: sha512(`password-${i + 1}`) }))));
  return path;
}

/** Starts the server; resolves to { child, base } once it says `listening on`. */
function startServer(...flags) {
  const child = spawn(process.execPath, [MAIN, '--port', '0', '--users', usersFile(), ...flags], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (127\.0\.0\.1:\d+)\n/.exec(out);
      if (m) resolve({ child, base: `http://${m[1]}` });
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

function stopServer(child, signal = 'SIGTERM') {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code, sig) => resolve({ code, sig }));
    child.kill(signal);
  });
}

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await stopServer(server.child);
});

const json = { 'content-type': 'application/json' };
const echoOf = (size) => {
  const head = '{"records":[{"name":"';
  const tail = '"}]}';
  return head + 'a'.repeat(size - head.length - tail.length) + tail;
};

test('auth, statuses of bad input, error body', async () => {
  const put = (path, body, headers = json) => fetch(server.base + path, { method: 'PUT', headers, body });
  const ok = await put('/auth/7', '{"password":"abc","id":99}');
  assert.equal(ok.status, 200);
  assert.match(ok.headers.get('content-type'), /^application\/json/);
  assert.deepEqual(await ok.json(), { hash: sha512('abc') });
  assert.equal((await put('/auth/101', '{"password":"abc"}')).status, 404);
  assert.equal((await put('/auth/abc', '{"password":"abc"}')).status, 400);
  assert.equal((await put('/auth/1', '{"password":5}')).status, 400);
  assert.equal((await put('/auth/1', '{"password":"abc"}', { 'content-type': 'text/plain' })).status, 415);
  assert.equal((await put('/auth/1', '{"password":"abc"}', { 'content-type': 'application/jsonx' })).status, 415);
  const missing = await fetch(`${server.base}/auth/1`, { method: 'PUT' });
  assert.equal(missing.status, 415);
  assert.equal((await missing.json()).error.code, 'UNSUPPORTED_MEDIA_TYPE');
  const wrongMethod = await fetch(`${server.base}/auth/1`);
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers.get('allow'), 'PUT');
  assert.equal((await fetch(`${server.base}/students/`)).status, 404);
  const strict = await fetch(`${server.base}/cars`, {
    method: 'POST',
    headers: json,
    body: '{"car":{"make":"a","model":"b","year":"2012"},"driver":{}}',
  });
  assert.equal(strict.status, 400);
  assert.equal((await strict.json()).error.code, 'INVALID_ARGUMENT');
});

test('unknown fields are dropped, defaults stay absent', async () => {
  const body = '{"car":{"make":"a","model":"b","year":2000,"wheels":4},"driver":{},"extra":true}';
  const reply = await fetch(`${server.base}/cars`, { method: 'POST', headers: json, body });
  assert.deepEqual(await reply.json(), { car: { make: 'a', model: 'b', year: 2000 }, driver: {} });
});

test('gzip both ways, inflated bodies limited to 4 MiB', async () => {
  const students = await fetch(`${server.base}/students`, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(students.headers.get('content-encoding'), 'gzip');
  assert.equal((await students.json()).students.length, 2);
  const plain = await fetch(`${server.base}/students`, { headers: { 'accept-encoding': 'identity' } });
  assert.equal(plain.headers.get('content-encoding'), null);

  const post = (body, headers = {}) =>
    fetch(`${server.base}/echo`, { method: 'POST', headers: { ...json, 'content-encoding': 'gzip', ...headers }, body });
  const atLimit = await post(gzipSync(echoOf(MiB4)));
  assert.equal(atLimit.status, 200);
  assert.equal((await atLimit.arrayBuffer()).byteLength, MiB4);
  assert.equal((await post(gzipSync(echoOf(MiB4 + 1)))).status, 413);
  assert.equal((await post('not gzip')).status, 400);
  assert.equal((await post('{}', { 'content-encoding': 'zstd' })).status, 415);
  assert.equal((await post(gzipSync('{"password":"abc"}'))).status, 400); // inflated, then validated
  const raw = await fetch(`${server.base}/auth/3`, {
    method: 'PUT',
    headers: { ...json, 'content-encoding': 'gzip', 'accept-encoding': 'gzip' },
    body: gzipSync('{"password":"abc"}'),
  });
  assert.equal(raw.status, 200);
  // fetch inflates the reply itself; the reply was gzip since the client accepted it.
  assert.equal(raw.headers.get('content-encoding'), 'gzip');
  assert.deepEqual(await raw.json(), { hash: sha512('abc') });
});

test('plain bodies: exactly 4 MiB passes, one byte more is 413', async () => {
  const post = (body) => fetch(`${server.base}/echo`, { method: 'POST', headers: json, body });
  assert.equal((await post(echoOf(MiB4))).status, 200);
  // The 413 comes as soon as the headers announce too much; the server then closes the connection, so a
  // client still sending (fetch) may see a reset instead: send only the headers.
  const status = await new Promise((resolve, reject) => {
    const req = request(`${server.base}/echo`, { method: 'POST', headers: { ...json, 'content-length': MiB4 + 1 } });
    req.on('response', (res) => {
      resolve(res.statusCode);
      req.destroy();
    });
    req.on('error', reject);
    req.flushHeaders();
  });
  assert.equal(status, 413);
  assert.equal((await post(Buffer.from('{"records":[{"name":"\xff"}]}', 'latin1'))).status, 400);
});

const ndjson = { 'content-type': 'application/x-ndjson' };
const lines = (values) => values.map((v) => `${JSON.stringify(v)}\n`).join('');
const summaryOf = (count, activeCount, firstId, lastId, sampleCount) => ({ count, activeCount, firstId, lastId, sampleCount });
const NONE = summaryOf(0, 0, 0, 0, 0);
const thousand = Array.from({ length: 1000 }, (_, i) => ({
  id: i + 1,
  name: `r${i}`,
  active: i % 4 === 0,
  kind: 'KIND_LARGE',
  samples: [i],
}));

/** A request body sent chunked, piece by piece, each on its own turn of the event loop. */
const chunked = (pieces) =>
  new ReadableStream({
    async pull(controller) {
      await new Promise((resolve) => setImmediate(resolve));
      const piece = pieces.shift();
      if (piece === undefined) {
        controller.close();
      } else {
        controller.enqueue(Buffer.from(piece));
      }
    },
  });

test('records: POST /records/batch answers the summary of its records', async () => {
  const post = (body, headers = json) => fetch(`${server.base}/records/batch`, { method: 'POST', headers, body });
  const ok = await post(JSON.stringify({ records: thousand }));
  assert.equal(ok.status, 200);
  assert.match(ok.headers.get('content-type'), /^application\/json/);
  assert.deepEqual(await ok.json(), summaryOf(1000, 250, 1, 1000, 1000));
  assert.deepEqual(await (await post('{"records":[]}')).json(), NONE);
  assert.equal((await post('{}')).status, 400);
  assert.equal((await post('{"records":[{"id":1},{"kind":"KIND_HUGE"}]}')).status, 400);
  assert.equal((await post('{"records":[{"id":"1"}]}')).status, 400);
  assert.equal((await post('{"records":[]}', ndjson)).status, 415);
  assert.equal((await fetch(`${server.base}/records/batch`)).status, 405);
});

test('records: POST /records/upload reads NDJSON, with or without chunks', async () => {
  const post = (body, headers = ndjson) => fetch(`${server.base}/records/upload`, { method: 'POST', headers, body, duplex: 'half' });
  const plain = await post(lines(thousand));
  assert.equal(plain.status, 200);
  assert.deepEqual(await plain.json(), summaryOf(1000, 250, 1, 1000, 1000));
  // Chunked, lines cut across chunks, blank lines, the last line without its newline.
  const text = `\n${lines(thousand.slice(0, 9))}\n  \r\n{"id":77,"active":true,"samples":[1,2]}`;
  const pieces = Array.from({ length: Math.ceil(text.length / 7) }, (_, i) => text.slice(i * 7, i * 7 + 7));
  const streamed = await post(chunked(pieces));
  assert.deepEqual(await streamed.json(), summaryOf(10, 4, 1, 77, 11));
  assert.deepEqual(await (await post('')).json(), NONE);
  assert.deepEqual(await (await post(chunked([]))).json(), NONE);
  const withCharset = await post('{"id":3}', { 'content-type': 'application/x-ndjson; charset=utf-8' });
  assert.deepEqual(await withCharset.json(), summaryOf(1, 0, 3, 3, 0));
  const gzipped = await post(gzipSync(lines(thousand)), { ...ndjson, 'content-encoding': 'gzip' });
  assert.deepEqual(await gzipped.json(), summaryOf(1000, 250, 1, 1000, 1000));

  assert.equal((await post('{"id":3}\n', json)).status, 415);
  assert.equal((await post('{"id":3}\n', { 'content-type': 'application/x-ndjsonx' })).status, 415);
  assert.equal((await fetch(`${server.base}/records/upload`, { method: 'POST' })).status, 415);
  assert.equal((await fetch(`${server.base}/records/upload`, { method: 'PUT', headers: ndjson, body: '{}' })).status, 405);
  const badLines = ['{"id":1}\n{"kind":"KIND_HUGE"}\n{"id":3}\n', '{"id":1}\nnot json\n', '[1]\n', '{"score":"1"}', '{"name":"\xff"}\n'];
  for (const bad of badLines) {
    const refused = await post(Buffer.from(bad, 'latin1'));
    assert.equal(refused.status, 400, bad);
    assert.equal((await refused.json()).error.code, 'INVALID_ARGUMENT');
    assert.notEqual(refused.headers.get('connection'), 'close', 'the body was read to its end');
  }
  assert.equal((await post('not gzip', { ...ndjson, 'content-encoding': 'gzip' })).status, 400);
});

/**
 * Sends `pieces` chunked and then waits, the request never ended; resolves to { status, connection } once the
 * server answers. The pieces end with the byte that crosses a limit, so the server has read all that was sent
 * when it answers and closes (more bytes in flight could turn the close into a reset before the answer is read).
 */
function uploadWithoutEnd(base, pieces) {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/records/upload`, { method: 'POST', headers: { ...ndjson, 'transfer-encoding': 'chunked' } });
    req.on('response', (res) => {
      resolve({ status: res.statusCode, connection: res.headers.connection });
      req.destroy();
    });
    req.on('error', reject);
    const send = () => {
      while (pieces.length > 0) {
        if (!req.write(pieces.shift())) {
          req.once('drain', send);
          return;
        }
      }
    };
    send();
  });
}

test('records: uploads are limited to 4 MiB a line and 64 MiB in all, refused as they stream in', async () => {
  const record = (size) => `{"id":1,"name":"${'a'.repeat(size - 18)}"}`;
  const fullLine = Buffer.from(`${record(MiB4 - 1)}\n`); // 4 MiB with its newline
  const post = (body) => fetch(`${server.base}/records/upload`, { method: 'POST', headers: ndjson, body });
  const lineAtLimit = await post(`${record(MiB4)}\n${record(MiB4)}`);
  assert.deepEqual(await lineAtLimit.json(), summaryOf(2, 0, 1, 1, 0));
  const uploadAtLimit = await post(Buffer.concat(Array(16).fill(fullLine))); // 64 MiB
  assert.deepEqual(await uploadAtLimit.json(), summaryOf(16, 0, 1, 1, 0));

  const longLine = await uploadWithoutEnd(server.base, [`{"id":1}\n${record(MiB4)}`, 'a']);
  assert.deepEqual(longLine, { status: 413, connection: 'close' });
  const tooMuch = await uploadWithoutEnd(server.base, [...Array(16).fill(fullLine), '{']);
  assert.deepEqual(tooMuch, { status: 413, connection: 'close' });
  // An upload announced over 64 MiB is refused before any of it is read.
  const announced = await new Promise((resolve, reject) => {
    const req = request(`${server.base}/records/upload`, { method: 'POST', headers: { ...ndjson, 'content-length': 16 * MiB4 + 1 } });
    req.on('response', (res) => {
      resolve(res.statusCode);
      req.destroy();
    });
    req.on('error', reject);
    req.flushHeaders();
  });
  assert.equal(announced, 413);
  assert.equal((await fetch(`${server.base}/health`)).status, 200);
});

test('records: GET /records?count=N streams N records as NDJSON', async () => {
  const get = (query, headers = {}) => fetch(`${server.base}/records${query}`, { headers });
  const three = await get('?count=3');
  assert.equal(three.status, 200);
  assert.equal(three.headers.get('content-type'), 'application/x-ndjson');
  assert.equal(three.headers.get('transfer-encoding'), 'chunked');
  const location = { city: 'Springfield', latitude: 39.78, longitude: -89.65 };
  const tags = ['alpha', 'beta'];
  assert.equal(await three.text(), lines([
    { id: 1, name: 'record-000000', score: 0, active: true, kind: 'KIND_SMALL', location, tags, samples: [0, 1, 2] },
    { id: 2, name: 'record-000001', score: 0.5, active: false, kind: 'KIND_MEDIUM', location, tags, samples: [1, 2, 3] },
    { id: 3, name: 'record-000002', score: 1, active: true, kind: 'KIND_LARGE', location, tags, samples: [2, 3, 4] },
  ]));
  assert.equal(await (await get('?count=0')).text(), '');
  const all = (await (await get('?count=100000')).text()).split('\n');
  assert.equal(all.length, 100001);
  assert.equal(all[100000], '');
  assert.equal(JSON.parse(all[99999]).name, 'record-099999');
  const badQueries = ['', '?count=', '?count=-1', '?count=100001', '?count=1.5', '?count=abc', '?count=1&count=2'];
  badQueries.push('?count=99999999999999999999');
  for (const query of badQueries) {
    const refused = await get(query);
    assert.equal(refused.status, 400, query);
    assert.equal((await refused.json()).error.code, 'INVALID_ARGUMENT');
  }
  const gzipped = await get('?count=10', { 'accept-encoding': 'gzip' });
  assert.equal(gzipped.headers.get('content-encoding'), 'gzip');
  assert.equal((await gzipped.text()).split('\n').length, 11); // fetch inflates it
  assert.equal((await get('?count=10', { 'accept-encoding': 'identity' })).headers.get('content-encoding'), null);
  assert.equal((await fetch(`${server.base}/records?count=1`, { method: 'POST', headers: json, body: '{}' })).status, 405);
});

test('two workers share the port and stop on SIGTERM', async () => {
  const { child, base } = await startServer('--workers', '2');
  assert.equal((await fetch(`${base}/health`)).status, 200);
  const started = Date.now();
  assert.deepEqual(await stopServer(child), { code: 0, sig: null });
  assert.ok(Date.now() - started < 1500);
});
