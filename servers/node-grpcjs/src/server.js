'use strict';
// The grpc-js server: the contract's services, health, reflection, the 4 MiB limit.

const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { ReflectionService } = require('@grpc/reflection');
const health = require('grpc-health-check');
const { MAX_BODY_BYTES } = require('../../_node-shared/workloads/limits');
const { forReflection } = require('./descriptors');
const { LOADER_OPTIONS, loadContract } = require('./proto');
const { contractServices } = require('./services');
require('./reply-gzip'); // grpc-js cannot compress replies by itself

/**
 * Builds and binds the server (over TLS with `pem`); resolves to the bound port. Requests compressed with gzip or deflate are
 * inflated (within the same 4 MiB limit) by grpc-js itself; replies are gzip-compressed for clients that
 * accept it by reply-gzip.js.
 */
async function startServer(host, port, users, pem) {
  const contract = loadContract();
  const server = new grpc.Server({
    // grpc-js's default too; a bigger message is RESOURCE_EXHAUSTED, exactly 4 MiB passes.
    'grpc.max_receive_message_length': MAX_BODY_BYTES,
  });
  const implementations = contractServices(users);
  for (const [name, implementation] of Object.entries(implementations)) {
    server.addService(contract[name], implementation);
  }

  const statuses = { '': 'SERVING' };
  for (const name of Object.keys(implementations)) {
    statuses[name] = 'SERVING';
  }
  new health.HealthImplementation(statuses).addToServer(server);

  // Reflection (v1 and v1alpha) describes the contract and the health service, with map entries
  // named as protoc names them (see descriptors.js).
  const healthProto = protoLoader.loadSync(health.protoPath, LOADER_OPTIONS);
  new ReflectionService(forReflection({ ...contract, ...healthProto })).addToServer(server);

  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const boundPort = await new Promise((resolve, reject) => {
    server.bindAsync(address, credentials(pem), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return { server, port: boundPort };
}

/** Plaintext (h2c), or with `pem` node's TLS (TLS 1.2 and 1.3, ALPN h2); client certificates are not asked for. */
function credentials(pem) {
  if (!pem) {
    return grpc.ServerCredentials.createInsecure();
  }
  const keyCert = { private_key: Buffer.from(pem.key), cert_chain: Buffer.from(pem.cert) };
  return grpc.ServerCredentials.createSsl(null, [keyCert], false);
}

module.exports = { startServer };
