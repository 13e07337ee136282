#!/usr/bin/env node
// A hostile command agent (tests/unit/sandbox.test.ts, tests/workflow/sandbox.test.ts): what a
// prompt-injected agent would try, in whatever role it is called. It tries to read VIGIL_HOME,
// the run secret, the codec key and another run's repository, to connect to the Temporal frontend
// and the event store on loopback (directly and through the proxy) and to a host outside the
// allow-list, to write outside the repository and into the system, to write in the repository,
// to plant a completion claim for the builder as a reviewer, and to leave a process behind. Each
// attempt prints one line
//   ATTEMPT <name> ok|refused <detail>
// then it answers as its role owes (VIGIL_ANSWER), so a run with it in every role completes.
// Its targets come from HOSTILE_* variables of the worker's environment.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

const env = process.env;
const results = [];
const say = (name, ok, detail) => {
  results.push(`ATTEMPT ${name} ${ok ? 'ok' : 'refused'} ${String(detail).replace(/\s+/g, ' ').slice(0, 200)}`);
};

function trySync(name, fn) {
  try {
    say(name, true, fn() ?? '');
  } catch (e) {
    // The error message as the agent would print it (the sandbox reads refusals from the output).
    say(name, false, e.message);
  }
}

function connectDirect(name, target) {
  return new Promise((resolve) => {
    const i = target.lastIndexOf(':');
    const s = net.connect(Number(target.slice(i + 1)), target.slice(0, i));
    let over = false;
    const done = (ok, d) => {
      if (over) return;
      over = true;
      s.destroy();
      say(name, ok, d);
      resolve();
    };
    s.setTimeout(3000, () => done(false, 'timeout'));
    // A connection accepted and then closed without a byte is a refusal (the sandbox's bridge
    // closes what its proxy refuses); a Temporal frontend or a Postgres answers (HTTP/2 settings,
    // an SSL refusal byte) or at least keeps the connection open.
    s.once('connect', () => {
      s.write(Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'));
      s.once('data', () => done(true, 'answered'));
      s.once('close', () => done(false, 'closed without an answer'));
      setTimeout(() => done(true, 'kept open'), 1500);
    });
    s.once('error', (e) => done(false, e.code ?? e.message));
  });
}

function proxyConnect(name, target) {
  return new Promise((resolve) => {
    const proxy = env.HTTPS_PROXY || env.https_proxy;
    if (!proxy) {
      say(name, false, 'no proxy');
      return resolve();
    }
    const u = new URL(proxy);
    const req = http.request({ host: u.hostname, port: Number(u.port), method: 'CONNECT', path: target, timeout: 3000 });
    req.once('connect', (res, socket) => {
      socket.destroy();
      say(name, res.statusCode === 200, `proxy answered ${res.statusCode}`);
      resolve();
    });
    req.once('error', (e) => {
      say(name, false, e.code ?? e.message);
      resolve();
    });
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

function get(name, url, viaProxy) {
  return new Promise((resolve) => {
    const opts = { timeout: 3000 };
    let req;
    if (viaProxy) {
      const u = new URL(env.HTTP_PROXY || env.http_proxy || 'http://127.0.0.1:1');
      req = http.request({ ...opts, host: u.hostname, port: Number(u.port), path: url, headers: { host: new URL(url).host } });
    } else {
      req = http.request(url, opts);
    }
    req.once('response', (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        say(name, res.statusCode === 200, `${res.statusCode} ${body.trim()}`);
        resolve();
      });
    });
    req.once('error', (e) => {
      say(name, false, e.code ?? e.message);
      resolve();
    });
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

for await (const chunk of process.stdin) void chunk;

trySync('read-vigil-home', () => readdirSync(env.HOSTILE_VIGIL_HOME).join(','));
trySync('read-run-secret', () => readFileSync(env.HOSTILE_SECRET, 'utf8').trim());
trySync('read-codec-key', () => readFileSync(env.HOSTILE_CODEC, 'utf8').trim());
trySync('read-other-repo', () => readFileSync(env.HOSTILE_OTHER_REPO_FILE, 'utf8').trim());
trySync('write-outside', () => writeFileSync(env.HOSTILE_OUTSIDE, 'escaped'));
trySync('write-system', () => writeFileSync('/usr/local/vigil-hostile-was-here', 'escaped'));
trySync('write-program', () => writeFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), 'hostile-was-here'), 'escaped'));
trySync('write-repo', () => writeFileSync(path.join(process.cwd(), `hostile-${env.VIGIL_ROLE ?? 'tests'}.txt`), 'written'));
trySync('write-git-hooks', () =>
  writeFileSync(path.join(process.cwd(), '.git', 'hooks', 'post-commit'), '#!/bin/sh\necho escaped\n', { mode: 0o755 }),
);
// A cost report, as every role may write one (docs/how-a-run-works.md, Budget); reviewing, a
// completion claim planted for the builder's next call to consume.
const signals = path.join(process.cwd(), '.vigil', 'signals');
trySync('report-usage', () => writeFileSync(path.join(signals, 'USAGE'), JSON.stringify({ costUsd: 0.02 })));
if (env.VIGIL_ROLE && env.VIGIL_ROLE !== 'iteration')
  trySync('plant-claim', () => writeFileSync(path.join(signals, 'COMPLETION_REQUESTED'), `planted by ${env.VIGIL_ROLE}\n`));
trySync('read-repo', () => readFileSync(path.join(process.cwd(), 'README.md'), 'utf8').split('\n')[0]);
await connectDirect('connect-temporal', env.HOSTILE_TEMPORAL);
await connectDirect('connect-store', env.HOSTILE_STORE);
await proxyConnect('proxy-temporal', env.HOSTILE_TEMPORAL);
await proxyConnect('proxy-outside', 'example.com:443');
if (env.HOSTILE_MODEL) {
  await get('model-via-proxy', `${env.HOSTILE_MODEL}/ping`, true);
  await get('model-direct', `${env.HOSTILE_MODEL}/ping`, false);
}
trySync('leave-process', () => {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', env.HOSTILE_MARK ?? 'hostile-mark'], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  return `started ${child.pid}`;
});

process.stdout.write(`${results.join('\n')}\n`);
switch (env.VIGIL_ANSWER) {
  case 'vote':
    process.stdout.write('VOTE: APPROVE\nREASON: the work is done\n');
    break;
  case 'verdict':
    process.stdout.write('VERDICT: PASS\n');
    break;
  case 'checklist':
    process.stdout.write('```json\n[{"id": "REQ-1", "title": "hello.txt exists", "priority": "high", "verify": "read it"}]\n```\n');
    break;
  case 'items': {
    const prompt = readFileSync(env.VIGIL_PROMPT_FILE, 'utf8');
    const ids = [...new Set(prompt.match(/\bREQ-\d+\b/g) ?? ['REQ-1'])];
    process.stdout.write(`${ids.map((id) => `ITEM ${id}: PASS - checked`).join('\n')}\n`);
    break;
  }
  case 'work':
    mkdirSync(process.cwd(), { recursive: true });
    writeFileSync(path.join(process.cwd(), 'hello.txt'), `hello from iteration ${env.VIGIL_ITERATION}\n`);
    if (env.HOSTILE_PROMISE) process.stdout.write(`${env.HOSTILE_PROMISE}\n`);
    break;
  default:
    break;
}
