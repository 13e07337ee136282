/**
 * Starting the embedded server: a server that panics while starting (the 1.32 start-up race in
 * its worker service), or finds a port the CLI picked itself taken, is started again, a bounded
 * number of times; any other failure is reported at once with the server's own words. The CLI is
 * real; the wrapper script only decides whether a given start panics, or is handed a port that is
 * in use, before handing over to it. `freePort` keeps the port it hands out from the kernel's next
 * picks.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect, inject, it } from 'vitest';
import { freePort, START_ATTEMPTS, startDevServer } from '../../workers/dev-server.js';

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
    cliPath: flakyCli(dir, START_ATTEMPTS - 1),
    dbFile: path.join(dir, 'temporal.db'),
    port: await freePort(),
    headless: true,
  });
  try {
    expect(starts(dir)).toBe(START_ATTEMPTS);
    const log = readFileSync(server.logFile, 'utf8');
    expect(log.match(/^panic: /gm)).toHaveLength(START_ATTEMPTS - 1);
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
    new RegExp(`exited while starting \\(attempt ${START_ATTEMPTS} of ${START_ATTEMPTS}\\)[\\s\\S]*panic: runtime error`),
  );
  expect(starts(dir)).toBe(START_ATTEMPTS);
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

/** A `temporal` whose first `taken` starts get `--http-port <port>` added, then is the real CLI. */
const takenPortCli = (dir: string, taken: number, port: number): string => {
  const counter = path.join(dir, 'starts');
  writeFileSync(counter, '0');
  const script = path.join(dir, 'temporal');
  writeFileSync(
    script,
    `#!/usr/bin/env bash
n=$(( $(cat '${counter}') + 1 )); echo "$n" > '${counter}'
if [ "$n" -le ${taken} ]; then exec '${inject('temporalCli')}' "$@" --http-port ${port}; fi
exec '${inject('temporalCli')}' "$@"
`,
  );
  chmodSync(script, 0o755);
  return script;
};

/** A listener on a port of 127.0.0.1, as another process's would be. */
const holdPort = async (): Promise<{ port: number; close: () => Promise<void> }> => {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const address = srv.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  return { port: address.port, close: () => new Promise((resolve) => srv.close(() => resolve())) };
};

it('starts the server again when a port the CLI picked itself was taken meanwhile', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-devstart-'));
  const held = await holdPort();
  try {
    const server = await startDevServer({
      cliPath: takenPortCli(dir, 1, held.port),
      dbFile: path.join(dir, 'temporal.db'),
      port: await freePort(),
      headless: true,
    });
    try {
      expect(starts(dir)).toBe(2);
      expect(readFileSync(server.logFile, 'utf8')).toContain(`127.0.0.1:${held.port}: bind: address already in use`);
    } finally {
      await server.stop();
    }
  } finally {
    await held.close();
  }
});

it('gives up on a port that stays taken, and says which', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-devstart-'));
  const held = await holdPort();
  try {
    const started = startDevServer({
      cliPath: takenPortCli(dir, 99, held.port),
      dbFile: path.join(dir, 'temporal.db'),
      port: await freePort(),
      headless: true,
    });
    await expect(started).rejects.toThrow(
      new RegExp(`\\(attempt ${START_ATTEMPTS} of ${START_ATTEMPTS}\\)[\\s\\S]*${held.port}: bind: address already in use`),
    );
    expect(starts(dir)).toBe(START_ATTEMPTS);
  } finally {
    await held.close();
  }
});

/** The TCP states of sockets whose local port is `port` (the kernel's table; 06 is TIME_WAIT). */
const tcpStates = (port: number): string[] =>
  readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f.length > 3 && Number.parseInt(f[1]!.split(':')[1]!, 16) === port)
    .map((f) => f[3]!);

it("freePort leaves its port in TIME_WAIT, out of the kernel's next picks, and a server can still bind it", async () => {
  const port = await freePort();
  expect(tcpStates(port)).toContain('06');
  const srv = net.createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', resolve);
  });
  await new Promise<void>((resolve) => srv.close(() => resolve()));
});
