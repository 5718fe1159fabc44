'use strict';
// --tls: a fresh self-signed certificate at every start, as the Rust and Go servers make theirs: an ECDSA P-256
// key and a certificate for localhost, 127.0.0.1 and ::1, made by the openssl command line (node's crypto makes
// keys but not certificates). The framework serves it with node's own TLS (TLS 1.2 and 1.3).

const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fail } = require('./args');

const NAMES = ['localhost', '127.0.0.1', '::1'];
// The primary's certificate, inherited by the cluster's workers: every process serves the same one.
const INHERITED = 'CALLBENCH_TLS_PEM';

/** `{ cert, key }` (PEM strings); made once per server, its SHA-256 fingerprint printed on stderr. */
function selfSigned() {
  if (process.env[INHERITED]) {
    return JSON.parse(process.env[INHERITED]);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callbench-tls-'));
  let pem;
  try {
    const altNames = NAMES.map((n) => (/^[0-9]|:/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(',');
    const [cert, key] = [path.join(dir, 'cert.pem'), path.join(dir, 'key.pem')];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', key, '-out', cert, '-days', '3650', '-subj', '/O=callbench (self-signed)/CN=localhost',
      '-addext', `subjectAltName=${altNames}`, '-addext', 'extendedKeyUsage=serverAuth'],
    { stdio: ['ignore', 'ignore', 'pipe'] });
    pem = { cert: fs.readFileSync(cert, 'utf8'), key: fs.readFileSync(key, 'utf8') };
  } catch (e) {
    const why = e.code === 'ENOENT' ? 'the openssl command is missing (apt-get install openssl)'
      : String(e.stderr || e.message).trim().split('\n').pop();
    fail(`cannot make a certificate: ${why}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const fingerprint = new crypto.X509Certificate(pem.cert).fingerprint256;
  process.stderr.write(`tls: self-signed certificate for ${NAMES.join(', ')}, SHA-256 fingerprint ${fingerprint}\n`);
  process.env[INHERITED] = JSON.stringify(pem);
  return pem;
}

module.exports = { selfSigned };
