#!/usr/bin/env node
// A command agent that tries the sandbox's limits (tests/unit/sandbox-limits-call.test.ts,
// tests/workflow/sandbox-limits.test.ts): `node limits-agent.mjs <mode> [args]`.
//   fork-bomb                 a shell fork bomb that never stops (each shell also prints a network error)
//   alloc <MiB> [procs]       touch MiB of memory in all, split over procs processes, hold it a moment, exit 0
//   spawn <n> [ms]            start n sleeping processes at once, wait for them (ms each, default 2000), exit 0
//   cpu <procs> <ms>          keep procs processes busy for ms, exit 0
//   hostile-builders <cmd…>   the first iteration's builder call fork-bombs, the second's touches 3 GiB;
//                             any other call runs cmd…
//   honest-builders <cmd…>    every builder call first does honest work within the default limits
//                             (300 processes at once, 1 GiB over 4 processes), then runs cmd…; other calls run cmd…
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
  return exited(bomb);
}

/** Touches `mib` MiB (in this process, or split over `procs` of them), holds it 1.5 s; the exit code. */
async function alloc(mib, procs) {
  if (procs > 1) {
    const kids = Array.from({ length: procs }, () =>
      spawn(process.execPath, [process.argv[1], 'alloc', String(Math.ceil(mib / procs)), '1'], { stdio: 'inherit' }),
    );
    const codes = await Promise.all(kids.map(exited));
    console.log(`limits-agent: ${procs} processes done (${codes.join(',')})`);
    return codes.every((c) => c === 0) ? 0 : 1;
  }
  const held = [];
  for (let got = 0; got < mib; got += 64) {
    held.push(Buffer.alloc(64 * MIB, 1));
    if ((got + 64) % 512 === 0) console.log(`limits-agent: ${got + 64} MiB touched`);
  }
  console.log(`limits-agent: holding ${mib} MiB`);
  await wait(1500);
  console.log(`limits-agent: done (${held.length} blocks)`);
  return 0;
}

async function spawnMany(n, ms) {
  const kids = Array.from({ length: n }, () => spawn('sleep', [String(ms / 1000)], { stdio: 'ignore' }));
  console.log(`limits-agent: ${kids.length} processes started`);
  const codes = await Promise.all(kids.map(exited));
  console.log(`limits-agent: ${codes.filter((c) => c === 0).length} of ${n} processes ended well`);
  return codes.every((c) => c === 0) ? 0 : 1;
}

async function cpu(procs, ms) {
  const loop = `const end = Date.now() + ${ms}; let x = 0; while (Date.now() < end) x++; console.log('busy', x > 0)`;
  const kids = Array.from({ length: procs }, () => spawn(process.execPath, ['-e', loop], { stdio: 'inherit' }));
  const codes = await Promise.all(kids.map(exited));
  return codes.every((c) => c === 0) ? 0 : 1;
}

async function run(cmd) {
  const child = spawn(cmd[0], cmd.slice(1), { stdio: 'inherit' });
  return exited(child);
}

const builder = (process.env.VIGIL_ROLE ?? 'iteration') === 'iteration';

async function hostileBuilders(cmd) {
  if (builder && process.env.VIGIL_ITERATION === '1') return forkBomb();
  if (builder && process.env.VIGIL_ITERATION === '2') return alloc(3072, 1);
  return run(cmd);
}

async function honestBuilders(cmd) {
  if (builder) {
    const spawned = await spawnMany(300, 2000);
    const held = await alloc(1024, 4);
    if (spawned !== 0 || held !== 0) return 1;
  }
  return run(cmd);
}

const modes = {
  'fork-bomb': () => forkBomb(),
  alloc: () => alloc(Number(args[0]), Number(args[1] ?? 1)),
  spawn: () => spawnMany(Number(args[0]), Number(args[1] ?? 2000)),
  cpu: () => cpu(Number(args[0]), Number(args[1])),
  'hostile-builders': () => hostileBuilders(args),
  'honest-builders': () => honestBuilders(args),
};
if (!modes[mode]) {
  console.error(`limits-agent: unknown mode ${mode}`);
  process.exit(2);
}
process.exit(await modes[mode]());
