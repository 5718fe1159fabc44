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
  for (const service of ['', 'callbench.v1.Auth', 'callbench.v1.Students', 'callbench.v1.Cars', 'callbench.v1.Life', 'callbench.v1.Echo']) {
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
  for (const name of ['callbench.v1.Auth', 'callbench.v1.Echo', 'grpc.health.v1.Health']) {
    assert.ok(names.includes(name), `${name} in ${names}`);
  }
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
