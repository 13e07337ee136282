/**
 * Tests of lib/process-tree.ts against real processes: the token scan finds a carrier that
 * left its process group, whatever the size of its environment, and nothing else; reads of /proc
 * files whose content outgrows the shared buffer come back whole.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { processesWithToken, processStartTime, readProcFile, signalTree, TOKEN_VAR } from '../../lib/process-tree.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** A `sleep` with `env` added to ours, in a session of its own (as an escaped descendant is). */
async function sleeper(env: Record<string, string>): Promise<number> {
  const child = spawn('sleep', ['30'], { env: { ...process.env, ...env }, detached: true, stdio: 'ignore' });
  children.push(child);
  await new Promise<void>((resolve, reject) => child.once('spawn', resolve).once('error', reject));
  // `spawn` fires after fork: wait for the exec, after which /proc shows the new environment.
  for (
    let i = 0;
    i < 100 &&
    !readProcFile(child.pid as number, 'cmdline')
      ?.toString()
      .startsWith('sleep');
    i++
  )
    await new Promise((r) => setTimeout(r, 10));
  return child.pid as number;
}

describe.runIf(process.platform === 'linux')('process tree', () => {
  it('finds exactly the processes carrying the token', async () => {
    const token = randomUUID();
    const carrier = await sleeper({ [TOKEN_VAR]: token });
    const other = await sleeper({ [TOKEN_VAR]: randomUUID() });
    // A token that only starts like ours is not ours.
    const prefixed = await sleeper({ [TOKEN_VAR]: `${token}x` });
    const found = processesWithToken(token);
    expect(found).toContain(carrier);
    expect(found).not.toContain(other);
    expect(found).not.toContain(prefixed);
    expect(processesWithToken('')).toEqual([]);
  });

  it('finds a carrier whose environment is larger than the read buffer', async () => {
    const token = randomUUID();
    // ~200 KiB of environment before the token: the read must grow past 64 KiB, twice.
    const big = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`VIGIL_TEST_PAD_${i}`, 'x'.repeat(4000)]));
    const pid = await sleeper({ ...big, [TOKEN_VAR]: token });
    const environ = readProcFile(pid, 'environ');
    expect(environ?.length).toBeGreaterThan(200_000);
    expect(environ?.includes(`${TOKEN_VAR}=${token}\0`)).toBe(true);
    expect(processesWithToken(token)).toEqual([pid]);
  });

  it('kills the carriers and reads start times', async () => {
    const token = randomUUID();
    const pid = await sleeper({ [TOKEN_VAR]: token });
    const start = processStartTime(pid);
    expect(start).toMatch(/^\d+$/);
    expect(processStartTime(pid)).toBe(start);
    expect(signalTree(undefined, token, 'SIGKILL')).toBe(1);
    const child = children.find((c) => c.pid === pid);
    if (child && child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    expect(processStartTime(pid)).toBeNull();
    expect(processesWithToken(token)).toEqual([]);
  });

  it('answers null for a process that does not exist', () => {
    expect(readProcFile(2 ** 22 + 1, 'environ')).toBeNull();
    expect(processStartTime(2 ** 22 + 1)).toBeNull();
  });
});
