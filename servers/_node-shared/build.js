'use strict';
// The [build] step of the Node.js servers: `npm ci` in the server's folder, skipped when package.json,
// package-lock.json and the node version are those of the last install (a stamp in node_modules/).
// usage: node servers/_node-shared/build.js SERVER_DIR

const { spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: node build.js SERVER_DIR\n');
  process.exit(2);
}

const hash = createHash('sha256');
for (const file of ['package.json', 'package-lock.json']) {
  hash.update(readFileSync(join(dir, file)));
}
hash.update(process.version);
const stamp = hash.digest('hex');
const stampFile = join(dir, 'node_modules', '.callbench-stamp');

if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
  process.exit(0);
}
// Exactly the lock file's versions; no package here needs an install script.
const npm = spawnSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
  cwd: dir,
  stdio: 'inherit',
});
if (npm.status !== 0) {
  process.stderr.write(`error: npm ci failed in ${dir}${npm.error ? `: ${npm.error.message}` : ''}\n`);
  process.exit(1);
}
writeFileSync(stampFile, stamp);
