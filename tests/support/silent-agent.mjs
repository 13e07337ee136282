#!/usr/bin/env node
// A command agent for the silence watchdog (tests/workflow/silence.test.ts):
// `node silent-agent.mjs <mode> <mark> <cmd…>`.
//   hung-builder <mark> <cmd…>    the first iteration's builder call prints nothing and changes nothing:
//                                 it sleeps, with a child (`sh -c 'sleep 600' <mark>`) and a grandchild
//                                 that left its session; any other call runs cmd…
//   quiet-builder <secs> <cmd…>   the first iteration's builder call prints nothing for <secs> seconds
//                                 but writes a file in the repository every second, then runs cmd…;
//                                 any other call runs cmd…
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';

const [mode, arg, ...cmd] = process.argv.slice(2);
const wait = (ms) => new Promise((r) => setTimeout(r, ms));
const first = (process.env.VIGIL_ROLE ?? 'iteration') === 'iteration' && process.env.VIGIL_ITERATION === '1';

async function run(argv) {
  const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit' });
  return new Promise((r) => child.once('exit', (code, signal) => r(code ?? (signal ? 1 : 0))));
}

async function hung(mark) {
  spawn('/bin/sh', ['-c', 'sleep 600', mark], { stdio: 'ignore' });
  spawn('setsid', ['/bin/sh', '-c', 'sleep 600', mark], { stdio: 'ignore', detached: true });
  await wait(600_000);
  return 0;
}

async function quiet(secs) {
  mkdirSync('notes', { recursive: true });
  for (let i = 1; i <= secs; i++) {
    writeFileSync('notes/progress.txt', `step ${i}\n`);
    await wait(1000);
  }
  return run(cmd);
}

let code;
if (mode === 'hung-builder') code = first ? await hung(arg) : await run(cmd);
else if (mode === 'quiet-builder') code = first ? await quiet(Number(arg)) : await run(cmd);
else {
  console.error(`silent-agent: unknown mode ${mode}`);
  code = 2;
}
process.exit(code);
