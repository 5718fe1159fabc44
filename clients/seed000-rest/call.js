// Seed 000's REST call as VS Code's REST Client 0.24.6 would have made it. The article shows a `.http`
// file, whose syntax VS Code's REST Client reads (and JetBrains' HTTP client too): which editor sent it
// is inferred, not stated. The REST Client of January 2022 (src/utils/httpClient.ts) sends with got 9.6.0 with decompress on, certificates not checked, no retries, no proxy, on the
// default https agent. VS Code 1.63 (January 2022) ran extensions on Node 14, whose default agent
// keeps no connection (it sends `Connection: close`): a new TCP and TLS connection per call, and a
// name lookup per call (Node does not cache lookups). Node 20's default agent keeps connections, so
// the agent of Node 14 is put back.
//
// node call.js URL [--body JSON] [--method PUT] [--duration-ms N] [--calls N]
//              [--agent new-connection|keep-alive] [--connection-header close|keep-alive]
// --agent keep-alive keeps the connection for the next call (Node 20's default agent); --connection-header
// sends that header instead of the agent's own (new-connection: close; keep-alive: keep-alive), so each
// connection behaviour can be measured with and without `Connection: close`.
// One JSON line per call: {"us": total, "ok": bool, "status": code, "phases": got's timings.phases}.
'use strict';
const http = require('http');
const https = require('https');
const got = require('got');

function args(argv) {
  const a = {
    url: null, method: 'PUT', body: null, durationMs: 10000, calls: Infinity,
    agent: 'new-connection', connectionHeader: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    switch (argv[i]) {
      case '--method': a.method = next(); break;
      case '--body': a.body = next(); break;
      case '--duration-ms': a.durationMs = Number(next()); break;
      case '--calls': a.calls = Number(next()); break;
      case '--agent': a.agent = next(); break;
      case '--connection-header': a.connectionHeader = next(); break;
      default:
        if (argv[i].startsWith('--') || a.url) throw new Error(`unexpected argument ${argv[i]}`);
        a.url = argv[i];
    }
  }
  if (!a.url) throw new Error('usage: call.js URL [--method M] [--body JSON] [--duration-ms N] [--calls N]');
  if (!(a.durationMs > 0) || !(a.calls > 0)) throw new Error('--duration-ms and --calls must be positive');
  if (!['new-connection', 'keep-alive'].includes(a.agent)) throw new Error(`--agent ${a.agent}: new-connection or keep-alive`);
  if (a.connectionHeader !== null && !['close', 'keep-alive'].includes(a.connectionHeader)) {
    throw new Error(`--connection-header ${a.connectionHeader}: close or keep-alive`);
  }
  return a;
}

async function main() {
  const a = args(process.argv.slice(2));
  // Node 14's default agents: no keep-alive, so `Connection: close` on every request. With a
  // `Connection: keep-alive` header they still close the connection after the answer (the client first).
  const keepAlive = a.agent === 'keep-alive';
  http.globalAgent = new http.Agent({ keepAlive });
  https.globalAgent = new https.Agent({ keepAlive });
  const headers = a.body ? { 'content-type': 'application/json' } : {};
  if (a.connectionHeader) headers.connection = a.connectionHeader;
  const options = {
    method: a.method,
    headers,
    body: a.body ?? undefined,
    encoding: null,
    decompress: true,
    followRedirect: true,
    throwHttpErrors: false,
    retry: 0,
    rejectUnauthorized: false,
    timeout: 60000,
  };
  const end = Date.now() + a.durationMs;
  for (let n = 0; n < a.calls && Date.now() < end; n++) {
    const start = process.hrtime.bigint();
    let line;
    try {
      const r = await got(a.url, options);
      const us = Number(process.hrtime.bigint() - start) / 1000;
      const ok = r.statusCode >= 200 && r.statusCode < 300;
      line = { us, ok, status: r.statusCode, phases: r.timings.phases };
    } catch (e) {
      line = { us: Number(process.hrtime.bigint() - start) / 1000, ok: false, error: String(e.message).slice(0, 200) };
    }
    process.stdout.write(JSON.stringify(line) + '\n');
  }
}

main().catch((e) => {
  process.stderr.write(`seed000-rest: ${e.message}\n`);
  process.exit(2);
});
