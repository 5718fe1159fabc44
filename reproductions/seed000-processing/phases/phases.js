'use strict';
// Seed 000's auth work in Node.js, as processing/node/auth.js does it, each phase timed apart.
//
//     node phases.js --users PATH --id N --password P [--iterations K] [--warmup W]
//
// One iteration: fs.readFileSync (utf8), JSON.parse, Array.find, crypto SHA-512 hex. No free
// phase: V8 collects the parsed users later, in whichever phase its collector runs (its time
// lands there). stdout: `hash <hex>`, then `phases <read> <parse> <search> <hash> -` in ns
// (process.hrtime.bigint) per timed iteration.
const crypto = require('crypto');
const fs = require('fs');

function options(argv) {
  const o = { iterations: 1, warmup: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (!['--users', '--id', '--password', '--iterations', '--warmup'].includes(flag)) {
      throw new Error(`unknown argument ${flag}`);
    }
    const name = flag.slice(2);
    o[name] = name === 'users' || name === 'password' ? value : Number.parseInt(value, 10);
  }
  for (const name of ['users', 'id', 'password']) {
    if (o[name] === undefined || Number.isNaN(o[name])) throw new Error(`--${name} is required`);
  }
  if (!(o.iterations >= 1 && o.warmup >= 0)) throw new Error('--iterations must be >= 1, --warmup >= 0');
  return o;
}

function main() {
  let o;
  try {
    o = options(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`error ${e.message}\n`);
    return 2;
  }
  const clock = process.hrtime.bigint;
  const lines = [];
  let last = null;
  for (let i = 0; i < o.warmup + o.iterations; i++) {
    const t0 = clock();
    const text = fs.readFileSync(o.users, 'utf8');
    const t1 = clock();
    const users = JSON.parse(text);
    const t2 = clock();
    const user = users.find(u => u.id === o.id);
    const t3 = clock();
    const hash = crypto.createHash('sha512').update(o.password, 'utf8').digest('hex');
    const t4 = clock();
    // Checked outside the timed phases: every result is used.
    if (user === undefined || user.id !== o.id || (last !== null && hash !== last)) {
      process.stderr.write(`error user ${o.id} not found or an inconsistent result\n`);
      return 2;
    }
    last = hash;
    if (i >= o.warmup) lines.push(`phases ${t1 - t0} ${t2 - t1} ${t3 - t2} ${t4 - t3} -`);
  }
  process.stdout.write([`hash ${last}`, ...lines].join('\n') + '\n');
  return 0;
}

process.exitCode = main();
