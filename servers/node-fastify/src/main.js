'use strict';
// callbench's REST reference server on fastify: the flags, the users file, one process or a cluster.

const { fail, serveArgs } = require('../../_node-shared/args');
const { serve } = require('../../_node-shared/serve');
const { UserStore } = require('../../_node-shared/workloads/auth');
const { buildApp } = require('./app');

async function start({ host, port, mode, users, pem }) {
  let store;
  try {
    store = UserStore.open(users, mode);
  } catch (e) {
    fail(`cannot read users file ${users}: ${e.message} (write it with \`callbench gen-users\`)`);
  }
  const app = await buildApp(store, pem);
  await app.listen({ host, port });
  return { port: app.server.address().port, close: () => app.close() };
}

serve(serveArgs(), start);
