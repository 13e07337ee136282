/**
 * A dev server asked to listen beyond this machine (TEMPORAL_ADDRESS=0.0.0.0:7233, --ip with a
 * network address) says so, and how to keep it on loopback, before it starts (workers/dev-server.ts,
 * `vigil server`/`up`/`demo` through cli/processes.ts). The server itself is a stand-in that exits
 * at once: nothing listens on another interface during the test.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { Endpoint } from '../../cli/endpoint.js';
import { startServer } from '../../cli/processes.js';
import { exposureWarning, freePort, isLoopbackHost } from '../../workers/dev-server.js';
import { TEMPORAL_CLI_VERSION } from '../../workers/temporal-cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-exposure-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('exposureWarning', () => {
  it.each(['127.0.0.1', '127.0.0.2', '127.10.20.30', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1'])(
    'says nothing for the loopback address %s',
    (ip) => {
      expect(isLoopbackHost(ip)).toBe(true);
      expect(exposureWarning(ip, 7233, 8233)).toBeNull();
    },
  );

  it.each([
    ['0.0.0.0', 'every network interface (0.0.0.0)'],
    ['::', 'every network interface (::)'],
    ['192.168.1.20', '192.168.1.20, which is not a loopback address'],
    ['10.0.0.5', '10.0.0.5, which is not a loopback address'],
    ['build-box.internal', 'build-box.internal, which is not a loopback address'],
  ])('warns for %s, and says how to keep it on loopback', (ip, where) => {
    expect(isLoopbackHost(ip)).toBe(false);
    const w = exposureWarning(ip, 7300, 8300) as string;
    expect(w).toContain(`listens on ${where}: anyone who can reach this machine on port 7300 (and the Web UI on 8300) can start runs`);
    expect(w).toContain('To keep it on this machine, set TEMPORAL_ADDRESS=127.0.0.1:7300 (or pass --ip 127.0.0.1)');
    expect(exposureWarning(ip, 7300, null)).toContain('on port 7300 can start runs');
  });
});

describe('vigil server on a non-loopback address', () => {
  const saved = process.env.TEMPORAL_CLI;
  afterEach(() => {
    if (saved === undefined) delete process.env.TEMPORAL_CLI;
    else process.env.TEMPORAL_CLI = saved;
    vi.restoreAllMocks();
  });

  /** Starts the server of `TEMPORAL_ADDRESS=<address>` with a CLI that refuses to start; what it wrote to stderr. */
  async function stderrOfStart(host: string): Promise<string> {
    const cli = path.join(dir, 'temporal');
    writeFileSync(
      cli,
      `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "temporal version ${TEMPORAL_CLI_VERSION} (stand-in)"; exit 0; fi\necho ` +
        `"stand-in: not starting" >&2\nexit 3\n`,
      { mode: 0o755 },
    );
    process.env.TEMPORAL_CLI = cli;
    const port = await freePort();
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const ep: Endpoint = { address: `${host}:${port}`, namespace: 'default', taskQueue: 'vigil', uiUrl: `http://localhost:${port + 1000}` };
    await expect(startServer(ep, { db: path.join(dir, `${host}.db`), headless: true })).rejects.toThrow(/exited while starting/);
    return written.join('');
  }

  it('warns, before starting, that TEMPORAL_ADDRESS=0.0.0.0 listens on every interface', async () => {
    const err = await stderrOfStart('0.0.0.0');
    expect(err).toMatch(
      new RegExp(
        [
          /^vigil: warning: the Temporal dev server listens on every network interface \(0\.0\.0\.0\): .* set TEM/.source,
          /PORAL_ADDRESS=127\.0\.0\.1:\d+ \(or pass --ip 127\.0\.0\.1\)/.source,
        ].join(''),
        'm',
      ),
    );
  });

  it('says nothing on 127.0.0.1', async () => {
    expect(await stderrOfStart('127.0.0.1')).not.toContain('warning');
  });
});
