#!/usr/bin/env node
// A command agent that tries the sandbox's limits (tests/unit/sandbox-limits-call.test.ts,
// tests/workflow/sandbox-limits.test.ts): `node limits-agent.mjs <mode> [args]`.
//   fork-bomb                 a shell fork bomb that never stops (each shell also prints a network error)
//   alloc <MiB> [procs]       touch MiB of memory in all, split over procs processes, hold it a moment, exit 0
//   spawn <n> [ms]            start n sleeping processes at once, wait for them (ms each, default 2000), exit 0
//   cpu <procs> <ms>          keep procs processes busy for ms, exit 0
//   bomb-first-builder <cmd…> the fork bomb for the first iteration's builder call; any other call runs cmd…
// Every mode prints what it did, so a call's log shows how far it got.
import { spawn } from 'node:child_process';

const [mode, ...args] = process.argv.slice(2);
const MIB = 1024 * 1024;
const wait = (ms) => new Promise((r) => setTimeout(r, ms));
const exited = (child) => new Promise((r) => child.once('exit', (code, signal) => r(code ?? (signal ? 1 : 0))));

/** Never returns: each shell prints a network error (what a dying agent might print) and starts two more. */
async function forkBomb() {
  console.log('limits-agent: starting a fork bomb');
  const bomb = spawn('/bin/sh', ['-c', "b(){ echo 'Error: read ECONNRESET' >&2; b | b & }; b; sleep 600"], { stdio: 'inherit' });
  process.exit(await exited(bomb));
}

async function alloc(mib, procs) {
  if (procs > 1) {
    const kids = Array.from({ length: procs }, () =>
      spawn(process.execPath, [process.argv[1], 'alloc', String(Math.ceil(mib / procs)), '1'], { stdio: 'inherit' }),
    );
    const codes = await Promise.all(kids.map(exited));
    console.log(`limits-agent: ${procs} processes done (${codes.join(',')})`);
    process.exit(codes.every((c) => c === 0) ? 0 : 1);
  }
  const held = [];
  for (let got = 0; got < mib; got += 64) {
    held.push(Buffer.alloc(64 * MIB, 1));
    if ((got + 64) % 512 === 0) console.log(`limits-agent: ${got + 64} MiB touched`);
  }
  console.log(`limits-agent: holding ${mib} MiB`);
  await wait(1500);
  console.log(`limits-agent: done (${held.length} blocks)`);
}

async function spawnMany(n, ms) {
  const kids = Array.from({ length: n }, () => spawn('sleep', [String(ms / 1000)], { stdio: 'ignore' }));
  console.log(`limits-agent: ${kids.length} processes started`);
  const codes = await Promise.all(kids.map(exited));
  console.log(`limits-agent: ${codes.filter((c) => c === 0).length} of ${n} processes ended well`);
  process.exit(codes.every((c) => c === 0) ? 0 : 1);
}

async function cpu(procs, ms) {
  const loop = `const end = Date.now() + ${ms}; let x = 0; while (Date.now() < end) x++; console.log('busy', x > 0)`;
  const kids = Array.from({ length: procs }, () => spawn(process.execPath, ['-e', loop], { stdio: 'inherit' }));
  const codes = await Promise.all(kids.map(exited));
  process.exit(codes.every((c) => c === 0) ? 0 : 1);
}

async function bombFirstBuilder(cmd) {
  if ((process.env.VIGIL_ROLE ?? 'iteration') === 'iteration' && process.env.VIGIL_ITERATION === '1') return forkBomb();
  const child = spawn(cmd[0], cmd.slice(1), { stdio: 'inherit' });
  process.exit(await exited(child));
}

switch (mode) {
  case 'fork-bomb':
    await forkBomb();
    break;
  case 'alloc':
    await alloc(Number(args[0]), Number(args[1] ?? 1));
    break;
  case 'spawn':
    await spawnMany(Number(args[0]), Number(args[1] ?? 2000));
    break;
  case 'cpu':
    await cpu(Number(args[0]), Number(args[1]));
    break;
  case 'bomb-first-builder':
    await bombFirstBuilder(args);
    break;
  default:
    console.error(`limits-agent: unknown mode ${mode}`);
    process.exit(2);
}
