'use strict';
// JSON schemas of the REST bodies (contract/openapi.yaml). Request schemas check types and required fields
// only: the limits (lengths, ranges, sizes) are the workloads' job, the same for REST and gRPC. Response
// schemas let fastify serialize with fast-json-stringify, which writes only the declared fields.

const int64 = { type: 'integer' };
// proto uint32: serde (the Rust servers) refuses a negative or too large number as a wrong type.
const uint32 = { type: 'integer', minimum: 0, maximum: 4294967295 };
const string = { type: 'string' };
const number = { type: 'number' };
const strings = { type: 'array', items: string };

const authParams = {
  type: 'object',
  // Path parameters stay strings (no type coercion): a decimal int64, else 400.
  properties: { id: { type: 'string', pattern: '^-?[0-9]{1,19}$' } },
};
const authRequest = { type: 'object', required: ['password'], properties: { password: string } };
const authResponse = { type: 'object', properties: { hash: string } };

const address = {
  type: 'object',
  properties: { street: string, city: string, state: string, postalCode: string, country: string },
};
const student = {
  type: 'object',
  properties: {
    id: int64,
    firstName: string,
    lastName: string,
    email: string,
    age: { type: 'integer' },
    gpa: number,
    enrolled: { type: 'boolean' },
    major: string,
    courses: strings,
    address,
    enrollmentDate: string,
    phone: string,
  },
};
const studentsResponse = { type: 'object', properties: { students: { type: 'array', items: student } } };

const carMessage = {
  type: 'object',
  properties: {
    car: {
      type: 'object',
      properties: { make: string, model: string, trim: string, color: string, year: uint32, mileage: uint32 },
    },
    driver: { type: 'object', properties: { firstname: string, lastname: string, driverId: string } },
  },
};

const cell = { type: 'array', items: int64, minItems: 2, maxItems: 2 };
const board = { type: 'object', properties: { board: { type: 'array', items: cell } } };
const stepRequest = {
  type: 'object',
  required: ['ntimes', 'board'],
  properties: { ntimes: uint32, board: { type: 'array', items: cell } },
};

const record = {
  type: 'object',
  properties: {
    id: int64,
    name: string,
    score: number,
    active: { type: 'boolean' },
    kind: { type: 'string', enum: ['KIND_UNSPECIFIED', 'KIND_SMALL', 'KIND_MEDIUM', 'KIND_LARGE'] },
    location: { type: 'object', properties: { city: string, latitude: number, longitude: number } },
    tags: strings,
    samples: { type: 'array', items: int64 },
  },
};
const echoMessage = { type: 'object', properties: { records: { type: 'array', items: record } } };
const echoRequest = { ...echoMessage, required: ['records'] };

const uploadSummary = {
  type: 'object',
  properties: { count: int64, activeCount: int64, firstId: int64, lastId: int64, sampleCount: int64 },
};
// A query value stays a string (no type coercion): a decimal integer, else 400; its range is the workload's.
const downloadQuery = {
  type: 'object',
  required: ['count'],
  properties: { count: { type: 'string', pattern: '^[+-]?[0-9]+$' } },
};

const health = { type: 'object', properties: { status: string } };

module.exports = {
  authParams,
  authRequest,
  authResponse,
  studentsResponse,
  carMessage,
  board,
  stepRequest,
  echoMessage,
  echoRequest,
  record,
  uploadSummary,
  downloadQuery,
  health,
};
