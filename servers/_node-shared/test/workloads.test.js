'use strict';
// Unit tests of the shared workloads: node --test servers/_node-shared/test/

const assert = require('node:assert/strict');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { test } = require('node:test');
const { auth, cars, echo, life, limits, records } = require('../workloads');

const sortCells = (cells) => cells.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1]);
const code = (fn) => {
  try {
    fn();
  } catch (e) {
    return e.code;
  }
  return 'OK';
};

test('sha512 matches the FIPS 180 vector', () => {
  assert.equal(
    auth.sha512Hex('abc'),
    'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
  );
});

test('both auth modes agree', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cb-node-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'users.json');
  const users = Array.from({ length: 10 }, (_, i) => ({ id: i + 1, hash: auth.sha512Hex(`password-${i + 1}`) }));
  writeFileSync(path, JSON.stringify(users));
  for (const mode of auth.MODES) {
    const store = auth.UserStore.open(path, mode);
    assert.equal((await store.test(10, 'abc')).hash, auth.sha512Hex('abc'));
    await assert.rejects(store.test(0, 'abc'), { code: 'NOT_FOUND' });
    await assert.rejects(store.test(1, ''), { code: 'INVALID_ARGUMENT' });
    await assert.rejects(store.test(1, 'é'.repeat(513)), { code: 'INVALID_ARGUMENT' });
    assert.equal((await store.test(1, 'é'.repeat(512))).hash.length, 128);
  }
  assert.throws(() => auth.UserStore.open(path, 'lazy'));
});

test('cars: the seed message passes, the contract rejects the rest', () => {
  const seed = () => ({
    car: { make: 'toyota', model: 'corolla', trim: '4DR Sedan', color: 'gray', year: 2012, mileage: 120000 },
    driver: { firstname: 'John', lastname: 'Smith', driverId: 'someId' },
  });
  const m = seed();
  assert.equal(cars.send(m), m);
  const bad = [
    (m) => (m.car.year = 1885),
    (m) => (m.car.year = 2101),
    (m) => delete m.car.year,
    (m) => delete m.driver,
    (m) => (m.car = null),
    (m) => (m.car.make = ''),
    (m) => (m.car.make = 'x'.repeat(limits.MAX_STRING_BYTES + 1)),
    (m) => (m.driver.driverId = 'é'.repeat(129)),
    (m) => (m.car.mileage = limits.MAX_MILEAGE + 1),
  ];
  for (const change of bad) {
    const m = seed();
    change(m);
    assert.equal(code(() => cars.send(m)), 'INVALID_ARGUMENT', JSON.stringify(m));
  }
});

test('echo rejects non-finite numbers and unknown kinds', () => {
  assert.equal(code(() => echo.echo({ records: [{}, { kind: 'KIND_LARGE', location: {} }] })), 'OK');
  assert.equal(code(() => echo.echo({ records: [{ score: NaN }] })), 'INVALID_ARGUMENT');
  assert.equal(code(() => echo.echo({ records: [{ location: { longitude: -Infinity } }] })), 'INVALID_ARGUMENT');
  assert.equal(code(() => echo.echo({ records: [{ kind: 9 }] })), 'INVALID_ARGUMENT');
});

test('life: blinker, glider, duplicates', () => {
  const horizontal = [[0, 1], [1, 1], [2, 1]];
  const vertical = [[1, 0], [1, 1], [1, 2]];
  assert.deepEqual(life.step(horizontal, 1).board, vertical);
  assert.deepEqual(life.step(horizontal, 2).board, horizontal);
  assert.deepEqual(life.step([...horizontal, [2, 1], [1, 1]], 1).board, vertical);
  const glider = [[1, 0], [2, 1], [0, 2], [1, 2], [2, 2]];
  assert.deepEqual(life.step(glider, 4).board, sortCells(glider.map(([x, y]) => [x + 1, y + 1])));
});

test('life: boards too wide for number keys give the same answers', () => {
  const far = 1_000_000_000;
  const board = [[-far, -far], [-far + 1, -far], [-far + 2, -far], [far, far - 1], [far, far], [far, far - 2]];
  const expected = [[-far + 1, -far - 1], [-far + 1, -far], [-far + 1, -far + 1], [far - 1, far - 1], [far, far - 1], [far + 1, far - 1]];
  assert.deepEqual(life.step(board, 1).board, expected);
});

test('life: the acorn settles at generation 5206 with 633 cells', () => {
  let board = life.setup().board;
  assert.deepEqual(board.slice(0, 4), [[0, 2], [1, 0], [1, 2], [3, 1]]);
  for (let generation = 0; generation < 5206; ) {
    const n = Math.min(5206 - generation, limits.MAX_NTIMES);
    board = life.step(board, n).board;
    generation += n;
  }
  assert.equal(board.length, 633);
});

test('life: limits', () => {
  const acorn = life.setup().board;
  assert.equal(code(() => life.step(acorn, 0)), 'INVALID_ARGUMENT');
  assert.equal(code(() => life.step(acorn, 1001)), 'INVALID_ARGUMENT');
  assert.equal(code(() => life.step(acorn, undefined)), 'INVALID_ARGUMENT');
  assert.equal(code(() => life.step([[limits.MAX_COORDINATE + 1, 0]], 1)), 'INVALID_ARGUMENT');
  const big = Array.from({ length: limits.MAX_BOARD_CELLS + 1 }, (_, i) => [i * 3, 0]);
  assert.equal(code(() => life.step(big, 1)), 'INVALID_ARGUMENT');
  const line = Array.from({ length: 5000 }, (_, i) => [i, 0]);
  assert.equal(code(() => life.step(line, 32)), 'INVALID_ARGUMENT');
});

test('records: a summary counts and remembers the ends, refusing what echo refuses', () => {
  const summary = records.UploadSummary.of(Array.from({ length: 5 }, (_, i) => records.downloaded(i)));
  assert.deepEqual({ ...summary }, { count: 5, activeCount: 3, firstId: 1, lastId: 5, sampleCount: 15 });
  assert.deepEqual({ ...records.UploadSummary.of([]) }, { count: 0, activeCount: 0, firstId: 0, lastId: 0, sampleCount: 0 });
  assert.deepEqual({ ...records.UploadSummary.of([{}]) }, { count: 1, activeCount: 0, firstId: 0, lastId: 0, sampleCount: 0 });
  for (const bad of [{ score: Infinity }, { location: { latitude: NaN } }, { kind: 9 }, { kind: 'KIND_HUGE' }]) {
    assert.throws(() => records.UploadSummary.of([{ id: 1 }, bad]), { code: 'INVALID_ARGUMENT', message: /^record 1: / });
  }
});

test('records: downloads follow the contract\'s rule and range', () => {
  assert.deepEqual(records.downloaded(3), {
    id: 4,
    name: 'record-000003',
    score: 1.5,
    active: false,
    kind: 'KIND_SMALL',
    location: { city: 'Springfield', latitude: 39.78, longitude: -89.65 },
    tags: ['alpha', 'beta'],
    samples: [3, 4, 5],
  });
  assert.equal(records.downloaded(0).kind, 'KIND_SMALL');
  assert.equal(records.downloaded(1).kind, 'KIND_MEDIUM');
  assert.equal(records.downloaded(1_000_000).name, 'record-1000000');
  assert.equal(records.downloadCount(0), 0);
  assert.equal(records.downloadCount(limits.MAX_DOWNLOAD), 100_000);
  for (const count of [-1, limits.MAX_DOWNLOAD + 1, 1.5, NaN, undefined]) {
    assert.equal(code(() => records.downloadCount(count)), 'INVALID_ARGUMENT', String(count));
  }
});
