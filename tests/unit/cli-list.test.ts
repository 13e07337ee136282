/**
 * What `vigil list --status/--repo` asks visibility for, and who a message is from by default:
 * the query names Vigil's search attributes with quoted, escaped values and refuses a status the
 * VigilStatus attribute never holds; `--by` defaults to the OS account's name.
 */
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../cli/errors.js';
import { LIST_STATUSES, listQuery } from '../../cli/runs.js';
import { by, defaultActor, PAYLOADS } from '../../cli/steer-commands.js';

describe('listQuery', () => {
  it('is every Vigil run without filters, runs with attempts included', () => {
    expect(listQuery({})).toBe("(WorkflowType = 'vigilRun' OR WorkflowType = 'vigilAttempts')");
  });

  it('filters on VigilStatus and on VigilRepo, the absolute path, runs with attempts included (they carry both)', () => {
    const both = "(WorkflowType = 'vigilRun' OR WorkflowType = 'vigilAttempts')";
    expect(listQuery({ status: 'Paused' })).toBe(`${both} AND VigilStatus = 'paused'`);
    expect(listQuery({ status: 'council_approved', repo: '/src/app' })).toBe(
      `${both} AND VigilStatus = 'council_approved' AND VigilRepo = '/src/app'`,
    );
    expect(listQuery({ repo: 'app' })).toBe(`${both} AND VigilRepo = '${path.resolve('app')}'`);
  });

  it("escapes a quote or a backslash in a path, so a value cannot end the query's string", () => {
    expect(listQuery({ repo: "/src/it's\\x" })).toBe(
      "(WorkflowType = 'vigilRun' OR WorkflowType = 'vigilAttempts') AND VigilRepo = '/src/it\\'s\\\\x'",
    );
  });

  it('refuses a status VigilStatus never holds, naming the ones it does (exit 2)', () => {
    let err: unknown;
    try {
      listQuery({ status: "paused' OR 1=1" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(2);
    expect((err as CliError).message).toContain('use one of starting, running, gating, reviewing, paused');
    expect(LIST_STATUSES).toContain('stopped');
    expect(LIST_STATUSES).not.toContain('pausing');
  });
});

describe('who a message is from', () => {
  it("defaults to the OS user's name, whatever USER says", () => {
    const saved = process.env.USER;
    process.env.USER = 'someone-else';
    try {
      expect(defaultActor()).toBe(os.userInfo().username);
      expect(PAYLOADS.resume({})).toEqual({ by: os.userInfo().username });
      expect(by({ by: 'alice' })).toEqual({ by: 'alice' });
    } finally {
      if (saved === undefined) delete process.env.USER;
      else process.env.USER = saved;
    }
  });
});
