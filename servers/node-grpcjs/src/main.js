'use strict';
// callbench's gRPC reference server on @grpc/grpc-js: the flags, the users file, one process or a cluster.

const { fail, serveArgs } = require('../../_node-shared/args');
const { serve } = require('../../_node-shared/serve');
const { UserStore } = require('../../_node-shared/workloads/auth');
const { startServer } = require('./server');

async function start({ host, port, mode, users, pem }) {
  let store;
  try {
    store = UserStore.open(users, mode);
  } catch (e) {
    fail(`cannot read users file ${users}: ${e.message} (write it with \`callbench gen-users\`)`);
  }
  const { server, port: boundPort } = await startServer(host, port, store, pem);
  // tryShutdown lets open calls finish; serve() gives it under a second before exiting anyway.
  return { port: boundPort, close: () => new Promise((resolve) => server.tryShutdown(() => resolve())) };
}

serve(serveArgs(), start);
