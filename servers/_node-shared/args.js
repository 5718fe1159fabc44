'use strict';
// The serving flags of the contract (contract/README.md, "Serving"), as the Rust servers take them.

const { parseArgs } = require('node:util');
const { MODES } = require('./workloads/auth');

const USAGE = 'usage: [--host 127.0.0.1] [--port 8080] [--workers 1] [--mode preloaded|per-request] [--users users.json] [--tls]';

/** Parses the flags; exits with a one-line message on bad ones. */
function serveArgs(argv = process.argv.slice(2)) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'string', default: '8080' },
        workers: { type: 'string', default: '1' },
        mode: { type: 'string', default: 'preloaded' },
        users: { type: 'string', default: 'users.json' },
        tls: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (e) {
    fail(`${e.message}\n${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const port = integer('port', values.port, 0, 65535);
  const workers = integer('workers', values.workers, 1, 1024);
  if (!MODES.includes(values.mode)) {
    fail(`unknown mode '${values.mode}' (expected preloaded or per-request)`);
  }
  return { host: values.host, port, workers, mode: values.mode, users: values.users, tls: values.tls };
}

function integer(name, text, min, max) {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < min || n > max) {
    fail(`--${name} must be an integer in ${min}..${max}, not '${text}'`);
  }
  return n;
}

function fail(message) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(2);
}

module.exports = { serveArgs, fail };
