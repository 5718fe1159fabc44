'use strict';
// Unit tests of --tls's certificate: node --test servers/_node-shared/test/

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { test } = require('node:test');
const { selfSigned } = require('../tls');

test('the certificate is for localhost, 127.0.0.1 and ::1, signed by its own key', () => {
  delete process.env.CALLBENCH_TLS_PEM;
  const pem = selfSigned();
  const cert = new crypto.X509Certificate(pem.cert);
  assert.equal(cert.checkHost('localhost'), 'localhost');
  assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
  assert.equal(cert.checkIP('::1'), '::1');
  assert.ok(cert.checkPrivateKey(crypto.createPrivateKey(pem.key)));
  assert.ok(cert.verify(cert.publicKey), 'self-signed');
  assert.equal(cert.publicKey.asymmetricKeyDetails.namedCurve, 'prime256v1');
});

test('cluster workers serve the certificate the primary made', () => {
  delete process.env.CALLBENCH_TLS_PEM;
  const first = selfSigned();
  assert.deepEqual(selfSigned(), first); // a forked worker inherits the environment
  delete process.env.CALLBENCH_TLS_PEM;
  assert.notEqual(selfSigned().cert, first.cert); // a new server, a new certificate
});
