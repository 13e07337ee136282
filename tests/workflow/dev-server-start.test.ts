/**
 * Starting the embedded server: a server that panics while starting (the 1.32 start-up race in
 * its worker service) is started again, a bounded number of times; any other failure is reported
 * at once with the server's own words. The CLI is real; the wrapper script only decides whether
 * a given start panics before handing over to it.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, inject, it } from 'vitest';
import { freePort, START_ATTEMPTS_ON_PANIC, startDevServer } from '../../workers/dev-server.js';

const PANIC = `panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x20 pc=0xa69a6c]

goroutine 2938 [running]:
google.golang.org/grpc.(*Server).Serve(0x29bafe9f9d48, {0x0, 0x0})`;

/** A `temporal` that panics on its first `panics` starts, then is the real CLI. */
const flakyCli = (dir: string, panics: number, failure = PANIC, code = 2): string => {
  const counter = path.join(dir, 'starts');
  writeFileSync(counter, '0');
  const script = path.join(dir, 'temporal');
  writeFileSync(
    script,
    `#!/usr/bin/env bash
n=$(( $(cat '${counter}') + 1 )); echo "$n" > '${counter}'
if [ "$n" -le ${panics} ]; then
  cat <<'OUT'
Temporal CLI (wrapper)
${failure}
OUT
  exit ${code}
fi
exec '${inject('temporalCli')}' "$@"
`,
  );
  chmodSync(script, 0o755);
  return script;
};

const starts = (dir: string): number => Number(readFileSync(path.join(dir, 'starts'), 'utf8').trim());

it('starts the server again after a panic while starting, and the server then answers', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-devstart-'));
  const server = await startDevServer({
    cliPath: flakyCli(dir, START_ATTEMPTS_ON_PANIC - 1),
    dbFile: path.join(dir, 'temporal.db'),
    port: await freePort(),
    headless: true,
  });
  try {
    expect(starts(dir)).toBe(START_ATTEMPTS_ON_PANIC);
    const log = readFileSync(server.logFile, 'utf8');
    expect(log.match(/^panic: /gm)).toHaveLength(START_ATTEMPTS_ON_PANIC - 1);
  } finally {
    await server.stop();
  }
});

it('gives up after a bounded number of panics and shows the last one', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-devstart-'));
  const started = startDevServer({
    cliPath: flakyCli(dir, 99),
    dbFile: path.join(dir, 'temporal.db'),
    port: await freePort(),
    headless: true,
  });
  await expect(started).rejects.toThrow(
    new RegExp(`exited while starting \\(attempt ${START_ATTEMPTS_ON_PANIC} of ${START_ATTEMPTS_ON_PANIC}\\)[\\s\\S]*panic: runtime error`),
  );
  expect(starts(dir)).toBe(START_ATTEMPTS_ON_PANIC);
});

it('reports any other start failure at once, without starting again', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-devstart-'));
  const started = startDevServer({
    cliPath: flakyCli(dir, 99, 'Error: unable to open database file: permission denied', 1),
    dbFile: path.join(dir, 'temporal.db'),
    port: await freePort(),
    headless: true,
  });
  await expect(started).rejects.toThrow(/exited while starting\nserver log[\s\S]*unable to open database file/);
  expect(starts(dir)).toBe(1);
});
