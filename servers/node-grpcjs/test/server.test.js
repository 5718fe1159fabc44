'use strict';
// The server started on port 0 and called with grpc-js clients:
//   node --test servers/node-grpcjs/test/   (after the build; writes a users file of its own)

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const http2 = require('node:http2');
const { join } = require('node:path');
const { after, before, test } = require('node:test');
const { gunzipSync } = require('node:zlib');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { LOADER_OPTIONS, loadContract } = require('../src/proto');

const MAIN = join(__dirname, '..', 'src', 'main.js');
const MiB4 = 4 * 1024 * 1024;
const GZIP = { 'grpc.default_compression_algorithm': 2 };

// One scratch folder for every server of this file, removed when the tests end.
const SCRATCH = mkdtempSync(join(tmpdir(), 'cb-grpcjs-'));
after(() => rmSync(SCRATCH, { recursive: true, force: true }));
let files = 0;

function usersFile() {
  const path = join(SCRATCH, `users-${++files}.json`);
  const sha = (t) => createHash('sha512').update(t).digest('hex');
  writeFileSync(path, JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ id: i + 1, hash: sha(`password-${i + 1}`) }))));
  return path;
}

/** Starts the server; resolves to { child, port } once it says `listening on`. */
function startServer(...flags) {
  const child = spawn(process.execPath, [MAIN, '--port', '0', '--users', usersFile(), ...flags], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on 127\.0\.0\.1:(\d+)\n/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
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

const contract = loadContract();
const Client = (name) => grpc.makeGenericClientConstructor(contract[name], name);
const rawMethod = { path: '/callbench.v1.Echo/Echo', requestSerialize: (b) => b, responseDeserialize: (b) => b };

function call(client, method, request) {
  return new Promise((resolve) => client[method](request, (err, reply) => resolve(err ? { code: err.code } : { code: 0, reply })));
}

function rawCall(port, path, bytes, options = {}) {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), options);
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, (b) => b, (b) => b, bytes, (err, reply) => {
      client.close();
      resolve(err ? { code: err.code } : { code: 0, reply });
    });
  });
}

/** An EchoMessage of one record whose name makes the message `size` bytes (2 MiB..256 MiB). */
function echoOfSize(size) {
  // records (field 1) holding a Record whose name (field 2) is the string: two tags, two 4-byte lengths.
  const nameLength = size - 10;
  const varint4 = (n) => [0x80 | (n & 0x7f), 0x80 | ((n >> 7) & 0x7f), 0x80 | ((n >> 14) & 0x7f), n >> 21];
  const head = [0x0a, ...varint4(nameLength + 5), 0x12, ...varint4(nameLength)];
  return Buffer.concat([Buffer.from(head), Buffer.alloc(nameLength, 'a')]);
}

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await stopServer(server.child);
});

test('every service answers, plain and gzip', async () => {
  for (const options of [{}, GZIP]) {
    const target = `127.0.0.1:${server.port}`;
    const auth = new (Client('callbench.v1.Auth'))(target, grpc.credentials.createInsecure(), options);
    const ok = await call(auth, 'Test', { id: 42, password: 'password-42' });
    assert.equal(ok.reply.hash, createHash('sha512').update('password-42').digest('hex'));
    assert.equal((await call(auth, 'Test', { id: 101, password: 'x' })).code, grpc.status.NOT_FOUND);
    assert.equal((await call(auth, 'Test', { id: 1, password: '' })).code, grpc.status.INVALID_ARGUMENT);
    auth.close();

    const life = new (Client('callbench.v1.Life'))(target, grpc.credentials.createInsecure(), options);
    const board = await call(life, 'Step', { ntimes: 1, board: [{ x: 0, y: 1 }, { x: 1, y: 1 }, { x: 2, y: 1 }] });
    assert.deepEqual(board.reply.board.map(({ x, y }) => [Number(x), Number(y)]), [[1, 0], [1, 1], [1, 2]]);
    life.close();

    const echo = new (Client('callbench.v1.Echo'))(target, grpc.credentials.createInsecure(), options);
    const message = { records: [{ id: '-9223372036854775808', name: 'é', kind: 'KIND_LARGE', samples: ['9223372036854775807'] }] };
    const echoed = await call(echo, 'Echo', message);
    assert.equal(echoed.reply.records[0].id.toString(), '-9223372036854775808');
    assert.equal(echoed.reply.records[0].samples[0].toString(), '9223372036854775807');
    assert.equal(echoed.reply.records[0].kind, 'KIND_LARGE');
    echo.close();
  }
});

/** One raw HTTP/2 call: resolves to { headers, flag, message } of the reply's first frame. */
function http2Call(port, path, message, extraHeaders) {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), message]);
  frame.writeUInt32BE(message.length, 1);
  const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...extraHeaders });
  req.end(frame);
  return new Promise((resolve, reject) => {
    let headers;
    const chunks = [];
    req.on('response', (h) => (headers = h));
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      session.close();
      const body = Buffer.concat(chunks);
      resolve({ headers, flag: body[0], message: body.subarray(5) });
    });
    req.on('error', reject);
  });
}

test('replies are gzip-compressed when the client accepts gzip, and only then', async () => {
  const path = '/callbench.v1.Students/List';
  const plain = await http2Call(server.port, path, Buffer.alloc(0), {});
  assert.equal(plain.flag, 0);
  const gz = await http2Call(server.port, path, Buffer.alloc(0), { 'grpc-accept-encoding': 'identity, gzip' });
  assert.equal(gz.flag, 1);
  assert.equal(gz.headers['grpc-encoding'], 'gzip');
  assert.deepEqual(gunzipSync(gz.message), plain.message);
  const other = await http2Call(server.port, path, Buffer.alloc(0), { 'grpc-accept-encoding': 'deflate' });
  assert.equal(other.flag, 0);
});

test('4 MiB messages pass, one byte more is RESOURCE_EXHAUSTED, also inflated from gzip', async () => {
  for (const options of [{}, GZIP]) {
    assert.equal((await rawCall(server.port, rawMethod.path, echoOfSize(MiB4), options)).code, 0);
    assert.equal((await rawCall(server.port, rawMethod.path, echoOfSize(MiB4 + 1), options)).code, grpc.status.RESOURCE_EXHAUSTED);
  }
});

test('invalid UTF-8 and undecodable messages are refused', async () => {
  for (const bytes of [[0x0a, 0x04, 0x12, 0x02, 0xc3, 0x28], [0xff, 0xff, 0xff]]) {
    assert.equal((await rawCall(server.port, rawMethod.path, Buffer.from(bytes))).code, grpc.status.INTERNAL);
  }
});

test('health and reflection', async () => {
  const healthProto = protoLoader.loadSync(require('grpc-health-check').protoPath, LOADER_OPTIONS);
  const Health = grpc.makeGenericClientConstructor(healthProto['grpc.health.v1.Health'], 'Health');
  const client = new Health(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  const services = ['Auth', 'Students', 'Cars', 'Life', 'Echo', 'Records'].map((name) => `callbench.v1.${name}`);
  for (const service of ['', ...services]) {
    assert.equal((await call(client, 'Check', { service })).reply.status, 'SERVING', service);
  }
  client.close();

  const reflectionProto = protoLoader.loadSync(
    require.resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto'),
    LOADER_OPTIONS,
  );
  const Reflection = grpc.makeGenericClientConstructor(reflectionProto['grpc.reflection.v1.ServerReflection'], 'Reflection');
  const reflection = new Reflection(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  const stream = reflection.ServerReflectionInfo();
  const answer = new Promise((resolve) => stream.on('data', resolve));
  stream.write({ listServices: '' });
  const names = (await answer).listServicesResponse.service.map((s) => s.name);
  stream.end();
  reflection.close();
  for (const name of [...services, 'grpc.health.v1.Health']) {
    assert.ok(names.includes(name), `${name} in ${names}`);
  }
});

/** Every message of a call that streams its answer, and its status code. */
function streamed(call) {
  const messages = [];
  call.on('data', (m) => messages.push(m));
  return new Promise((resolve) => {
    let code;
    let done = false;
    const settle = () => code !== undefined && done && resolve({ code, messages });
    call.on('status', (s) => {
      code = s.code;
      settle();
    });
    call.on('end', () => {
      done = true;
      settle();
    });
    call.on('error', () => {
      done = true;
      settle();
    });
  });
}

/** The next message a streaming call answers. */
const next = (call) => new Promise((resolve) => call.once('data', resolve));

const recordsClient = (options = {}) =>
  new (Client('callbench.v1.Records'))(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), options);

test('records: Upload answers the summary of every record sent, plain and gzip', async () => {
  const upload = (client, records) =>
    new Promise((resolve) => {
      const call = client.Upload((err, reply) => resolve(err ? { code: err.code, details: err.details } : { code: 0, reply }));
      records.forEach((r) => call.write(r));
      call.end();
    });
  const zero = { count: 0, activeCount: 0, firstId: 0, lastId: 0, sampleCount: 0 };
  const numbers = (summary) => ({ ...zero, ...Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, Number(v)])) });
  for (const options of [{}, GZIP]) {
    const client = recordsClient(options);
    const none = await upload(client, []);
    assert.equal(none.code, 0);
    assert.deepEqual(numbers(none.reply), zero);
    const one = await upload(client, [{ id: 7, active: true, samples: [1, 2] }]);
    assert.deepEqual(numbers(one.reply), { count: 1, activeCount: 1, firstId: 7, lastId: 7, sampleCount: 2 });
    const many = Array.from({ length: 1000 }, (_, i) => ({ id: i + 1, active: i % 4 === 0, kind: 'KIND_LARGE', samples: [i] }));
    const summary = await upload(client, many);
    assert.deepEqual(numbers(summary.reply), { count: 1000, activeCount: 250, firstId: 1, lastId: 1000, sampleCount: 1000 });
    const ids = await upload(client, [{ id: '-9223372036854775808' }, { id: '9223372036854775807' }]);
    assert.equal(ids.reply.firstId.toString(), '-9223372036854775808');
    assert.equal(ids.reply.lastId.toString(), '9223372036854775807');
    const bad = await upload(client, [{ id: 1 }, { id: 2, kind: 9 }, ...many]);
    assert.equal(bad.code, grpc.status.INVALID_ARGUMENT);
    assert.match(bad.details, /^record 1: /);
    client.close();
  }
});

test('records: Converse answers each message before the next one is sent', async () => {
  for (const options of [{}, GZIP]) {
    const client = recordsClient(options);
    const call = client.Converse();
    const outcome = streamed(call);
    for (let i = 1; i <= 5; i++) {
      const answer = next(call);
      const message = { records: Array.from({ length: i }, (_, j) => ({ id: j, name: `m${i}`, kind: 'KIND_MEDIUM', tags: ['t'] })) };
      call.write(message);
      const echoed = await answer; // the server does not wait for more input
      assert.equal(echoed.records.length, i);
      assert.equal(echoed.records[i - 1].name, `m${i}`);
      assert.equal(echoed.records[0].kind, 'KIND_MEDIUM');
    }
    call.end();
    const { code, messages } = await outcome;
    assert.equal(code, 0);
    assert.equal(messages.length, 5);

    const empty = client.Converse();
    const emptyOutcome = streamed(empty);
    empty.end();
    assert.deepEqual(await emptyOutcome, { code: 0, messages: [] });
    client.close();
  }
});

/** One streaming call over raw HTTP/2: resolves to the trailers and every message of the reply. */
function http2Stream(port, path, messages, extraHeaders = {}) {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...extraHeaders });
  for (const message of messages) {
    const frame = Buffer.concat([Buffer.alloc(5), message]);
    frame.writeUInt32BE(message.length, 1);
    req.write(frame);
  }
  req.end();
  return new Promise((resolve, reject) => {
    const chunks = [];
    let trailers;
    req.on('data', (c) => chunks.push(c));
    req.on('trailers', (t) => (trailers = t));
    req.on('end', () => {
      session.close();
      const body = Buffer.concat(chunks);
      const frames = [];
      for (let at = 0; at < body.length; at += 5 + body.readUInt32BE(at + 1)) {
        frames.push(body.subarray(at + 5, at + 5 + body.readUInt32BE(at + 1)));
      }
      resolve({ trailers, frames });
    });
    req.on('error', reject);
  });
}

test('records: Converse ends with INVALID_ARGUMENT after the answers to the messages before', async () => {
  // Counted over raw HTTP/2: a grpc-js client may drop the last messages before an error status
  // (grpc/grpc-node#2764), which grpcurl and a raw client do receive.
  const method = contract['callbench.v1.Records'].Converse;
  const messages = [{ records: [{ id: 1 }] }, {}, { records: [{ id: 3 }, { kind: 9 }] }, { records: [{ id: 4 }] }];
  for (const extraHeaders of [{}, { 'grpc-accept-encoding': 'gzip' }]) {
    const requests = messages.map(method.requestSerialize);
    const { trailers, frames } = await http2Stream(server.port, '/callbench.v1.Records/Converse', requests, extraHeaders);
    assert.equal(trailers['grpc-status'], String(grpc.status.INVALID_ARGUMENT));
    assert.equal(frames.length, 2);
    if (!extraHeaders['grpc-accept-encoding']) {
      assert.equal(Number(method.responseDeserialize(frames[0]).records[0].id), 1);
      assert.equal(frames[1].length, 0); // {}
    }
  }

  const client = recordsClient();
  const call = client.Converse();
  const outcome = streamed(call);
  call.write({ records: [{ kind: 9 }] });
  call.end();
  assert.equal((await outcome).code, grpc.status.INVALID_ARGUMENT);
  client.close();
});

test('records: Download sends count records by the contract\'s rule, 0..100000', async () => {
  const client = recordsClient();
  assert.deepEqual(await streamed(client.Download({ count: 0 })), { code: 0, messages: [] });
  const three = await streamed(client.Download({ count: 3 }));
  assert.equal(three.code, 0);
  assert.deepEqual(three.messages.map((r) => [Number(r.id), r.name, r.score ?? 0, r.active ?? false, r.kind]), [
    [1, 'record-000000', 0, true, 'KIND_SMALL'],
    [2, 'record-000001', 0.5, false, 'KIND_MEDIUM'],
    [3, 'record-000002', 1, true, 'KIND_LARGE'],
  ]);
  assert.deepEqual(three.messages[2].location, { city: 'Springfield', latitude: 39.78, longitude: -89.65 });
  assert.deepEqual(three.messages[2].tags, ['alpha', 'beta']);
  assert.deepEqual(three.messages[2].samples.map(Number), [2, 3, 4]);
  // The largest download over raw HTTP/2 without gzip (a grpc-js client takes its gzip replies slowly).
  const method = contract['callbench.v1.Records'].Download;
  const all = await http2Stream(server.port, '/callbench.v1.Records/Download', [method.requestSerialize({ count: 100000 })]);
  assert.equal(all.trailers['grpc-status'], '0');
  assert.equal(all.frames.length, 100000);
  assert.equal(method.responseDeserialize(all.frames[99999]).name, 'record-099999');
  for (const count of [-1, 100001, '9223372036854775807']) {
    assert.equal((await streamed(client.Download({ count }))).code, grpc.status.INVALID_ARGUMENT, String(count));
  }
  client.close();
});

test('records: a download cancelled half way leaves the server serving', async () => {
  const client = recordsClient();
  const call = client.Download({ count: 100000 });
  call.on('error', () => {});
  await next(call);
  call.cancel();
  assert.equal((await streamed(client.Download({ count: 2 }))).messages.length, 2);
  client.close();
});

test('two workers share the port and stop on SIGTERM', async () => {
  const { child, port } = await startServer('--workers', '2');
  const students = new (Client('callbench.v1.Students'))(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  assert.equal((await call(students, 'List', {})).reply.students.length, 2);
  students.close();
  const started = Date.now();
  assert.deepEqual(await stopServer(child), { code: 0, sig: null });
  assert.ok(Date.now() - started < 1500);
});
