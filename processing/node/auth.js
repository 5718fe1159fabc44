'use strict';
// Seed 000's processing step in Node.js: read user.json, JSON.parse all of it, find the user
// by id with Array.find, SHA-512 hex of the password. Timed per iteration with hrtime.bigint.
const crypto = require('crypto');
const fs = require('fs');

const USAGE = 'usage: auth.js --users PATH --id N --password P [--iterations K] [--warmup W]';

// One iteration, the article's code: the file is read and parsed on every call.
function authenticate(usersPath, inputId, inputPassword) {
  const users = JSON.parse(fs.readFileSync(usersPath, 'utf8'));
  const user = users.find(u => u.id === inputId);
  if (user === undefined) return null;
  const hash = crypto.createHash('sha512').update(inputPassword, 'utf8').digest('hex');
  return { user, hash };
}

function parseArgs(argv) {
  const opts = { iterations: 1, warmup: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    switch (flag) {
      case '--users': opts.users = value; break;
      case '--id': opts.id = integer(flag, value, -Number.MAX_SAFE_INTEGER); break;
      case '--password': opts.password = value; break;
      case '--iterations': opts.iterations = integer(flag, value, 1); break;
      case '--warmup': opts.warmup = integer(flag, value, 0); break;
      default: throw new Error(`unknown argument ${flag}`);
    }
  }
  for (const name of ['users', 'id', 'password']) {
    if (opts[name] === undefined) throw new Error(`--${name} is required`);
  }
  return opts;
}

function integer(flag, text, min) {
  if (!/^-?[0-9]+$/.test(text)) throw new Error(`${flag}: not an integer: ${text}`);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`${flag}: out of range: ${text}`);
  return n;
}

function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`error ${e.message}; ${USAGE}\n`);
    return 2;
  }
  const times = [];
  let last = null;
  for (let i = 0; i < opts.warmup + opts.iterations; i++) {
    const start = process.hrtime.bigint();
    const result = authenticate(opts.users, opts.id, opts.password);
    const elapsed = process.hrtime.bigint() - start;
    // Checked outside the timed part: every result is used, so no work can be skipped.
    if (result === null) {
      process.stderr.write(`error user ${opts.id} not found\n`);
      return 2;
    }
    if (result.user.id !== opts.id || (last !== null && result.hash !== last)) {
      process.stderr.write('error inconsistent result\n');
      return 1;
    }
    last = result.hash;
    if (i >= opts.warmup) times.push(elapsed);
  }
  const lines = [`hash ${last}`];
  for (const ns of times) lines.push(`ns ${ns}`);
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}

try {
  process.exitCode = main();
} catch (e) {
  process.stderr.write(`error ${e.message}\n`);
  process.exitCode = 1;
}
