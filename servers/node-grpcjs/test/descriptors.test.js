'use strict';
// Map entries in the descriptors reflection serves are named as protoc names them:
//   node --test servers/node-grpcjs/test/

const assert = require('node:assert/strict');
const { test } = require('node:test');
const protoLoader = require('@grpc/proto-loader');
const health = require('grpc-health-check');
const { FileDescriptorProto } = require('protobufjs/ext/descriptor');
const { forReflection, mapEntryName } = require('../src/descriptors');
const { LOADER_OPTIONS } = require('../src/proto');

test('entry names follow protoc', () => {
  assert.equal(mapEntryName('statuses'), 'StatusesEntry');
  assert.equal(mapEntryName('by_user_id'), 'ByUserIdEntry');
  assert.equal(mapEntryName('camelCase'), 'CamelCaseEntry');
});

test("the health service's map entry is renamed and its field points at it", () => {
  const loaded = protoLoader.loadSync(health.protoPath, LOADER_OPTIONS);
  const [bin] = forReflection(loaded)['grpc.health.v1.HealthListResponse'].fileDescriptorProtos;
  const file = FileDescriptorProto.decode(bin);
  const list = file.messageType.find((m) => m.name === 'HealthListResponse');
  assert.deepEqual(list.nestedType.map((t) => t.name), ['StatusesEntry']);
  assert.ok(list.nestedType[0].options.mapEntry);
  assert.equal(list.field[0].typeName, '.grpc.health.v1.HealthListResponse.StatusesEntry');
  // Everything else is as proto-loader made it.
  const before = FileDescriptorProto.decode(loaded['grpc.health.v1.HealthListResponse'].fileDescriptorProtos[0]);
  assert.deepEqual(file.service, before.service);
  assert.equal(file.messageType.length, before.messageType.length);
});
