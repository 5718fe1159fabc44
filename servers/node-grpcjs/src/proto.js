'use strict';
// The contract's services, loaded at start from the repository's contract/proto/ folder with @grpc/proto-loader.

const { isUtf8 } = require('node:buffer');
const { readdirSync } = require('node:fs');
const { join } = require('node:path');
const protoLoader = require('@grpc/proto-loader');
// The protobufjs that proto-loader decodes with (package.json pins the version its lock resolves).
const protobuf = require('protobufjs');

const PROTO_ROOT = join(__dirname, '..', '..', '..', 'contract', 'proto');
const PACKAGE_DIR = join('callbench', 'v1');

const LOADER_OPTIONS = {
  keepCase: false, // lowerCamelCase fields, as in REST JSON and the shared workloads (driverId, firstName)
  enums: String, // enum values by name; an unknown number stays a number, which the echo workload refuses
  defaults: false, // absent fields stay absent: messages are echoed as sent
  // int64 fields stay Long objects (exact); the services turn ids and coordinates into numbers.
  includeDirs: [PROTO_ROOT],
};

/**
 * protobufjs decodes invalid UTF-8 in a string field into U+FFFD without a word; the contract (and
 * proto3) want the message refused. Every callbench request is decoded with this reader instead.
 */
class StrictUtf8Reader extends protobuf.BufferReader {
  string() {
    const bytes = this.bytes();
    if (!isUtf8(bytes)) {
      throw new Error('invalid UTF-8 in a string field');
    }
    return bytes.toString('utf8');
  }
}

/** The package definition of every contract/proto/callbench/v1/*.proto file, with strict request decoding. */
function loadContract() {
  const files = readdirSync(join(PROTO_ROOT, PACKAGE_DIR))
    .filter((f) => f.endsWith('.proto'))
    .map((f) => join(PACKAGE_DIR, f));
  const definition = protoLoader.loadSync(files, LOADER_OPTIONS);
  for (const [name, service] of Object.entries(definition)) {
    if (!name.startsWith('callbench.v1.') || service.format !== undefined) {
      continue; // message and enum types
    }
    for (const method of Object.values(service)) {
      const decode = method.requestDeserialize;
      // A decode failure becomes INTERNAL, as in grpc-go and tonic.
      method.requestDeserialize = (buffer) => decode(new StrictUtf8Reader(buffer));
    }
  }
  return definition;
}

module.exports = { loadContract, LOADER_OPTIONS };
