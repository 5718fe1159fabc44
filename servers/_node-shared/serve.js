'use strict';
// Runs a server in one process (--workers 1) or in N processes sharing the port through node's cluster
// module; announces `listening on HOST:PORT` once every process accepts calls, stops on SIGINT/SIGTERM.

const cluster = require('node:cluster');
const { fail } = require('./args');
const { selfSigned } = require('./tls');

/** How long open calls get to finish on SIGINT/SIGTERM. */
const STOP_GRACE_MS = 900;

/**
 * `start(args)` binds args.host:args.port, serves, and resolves to `{ port, close }` (close: async, stops it).
 * With --workers N > 1 this process becomes the cluster primary: it only forks, watches and stops the N
 * workers, which run `start` themselves (the primary accepts connections and hands them out round-robin).
 * With --tls, `args.pem` is the certificate and key to serve (`{ cert, key }`, one for every process).
 */
async function serve(args, start) {
  if (args.tls) {
    args.pem = selfSigned();
  }
  if (args.workers === 1) {
    const server = await startOrExit(args, start);
    announce(args.host, server.port);
    onStopSignal(() => stop(server));
  } else if (cluster.isPrimary) {
    supervise(args);
  } else {
    const server = await startOrExit(args, start);
    process.send({ listening: server.port });
    onStopSignal(() => stop(server));
  }
}

async function startOrExit(args, start) {
  try {
    return await start(args);
  } catch (e) {
    return fail(`cannot serve on ${hostPort(args.host, args.port)}: ${e.message}`);
  }
}

function supervise(args) {
  let stopping = false;
  let listening = 0;
  for (let i = 0; i < args.workers; i++) {
    cluster.fork().on('message', (message) => {
      if (message && typeof message.listening === 'number' && ++listening === args.workers) {
        announce(args.host, message.listening);
      }
    });
  }
  // A worker that dies on its own is a crash: stop everything rather than hide it behind a restart.
  cluster.on('exit', (worker, code, signal) => {
    if (!stopping) {
      stopping = true;
      process.stderr.write(`error: worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); stopping\n`);
      stopWorkers().then(() => process.exit(code || 1));
    }
  });
  onStopSignal(() => {
    stopping = true;
    return stopWorkers();
  });
}

/** SIGTERM to every worker, then waits for them (SIGKILL past the grace period). */
function stopWorkers() {
  const workers = Object.values(cluster.workers);
  const exited = workers.map((w) => new Promise((resolve) => (w.isDead() ? resolve() : w.once('exit', resolve))));
  workers.forEach((w) => w.process.kill('SIGTERM'));
  const timer = setTimeout(() => workers.forEach((w) => w.process.kill('SIGKILL')), STOP_GRACE_MS + 100);
  return Promise.all(exited).finally(() => clearTimeout(timer));
}

async function stop(server) {
  const grace = new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref());
  await Promise.race([server.close().catch(() => {}), grace]);
}

/** Runs `stop` on the first SIGINT or SIGTERM, then exits 0. */
function onStopSignal(stopFn) {
  let stopping = false;
  const handler = () => {
    if (!stopping) {
      stopping = true;
      Promise.resolve(stopFn()).finally(() => process.exit(0));
    }
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

function hostPort(host, port) {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The line the harness waits for (stdout is synchronous for files and pipes on Linux). */
function announce(host, port) {
  process.stdout.write(`listening on ${hostPort(host, port)}\n`);
}

module.exports = { serve };
