/**
 * A run without a PRD (`vigil start --goal`, the seed's codebase-analysis mode): what the discovery
 * call is asked and what the person reads (rules/discovery.ts), what it wrote kept in the run folder
 * as the run's PRD or refused with why, against real files in a real repository
 * (activities/discovery.ts), and the goal's checks on the command line (cli/start-checks.ts
 * goalSource). The run itself, end to end: tests/e2e/start-goal.test.ts.
 */
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDiscoveryFile, keepDiscoveredPrd } from '../../activities/discovery.js';
import { goalSource, MCP_NAMES } from '../../cli/start-checks.js';
import { goalPrd } from '../../cli/prd.js';
import { discoveredPrdNote, discoveredPrdProblem, discoveryPrompt, MAX_DISCOVERED_PRD_BYTES, prdTitle } from '../../rules/discovery.js';
import { discoveredPrdPath } from '../../schemas/paths.js';
import { makeRepo } from '../support/harness.js';

const saved = process.env.VIGIL_HOME;
beforeAll(() => {
  process.env.VIGIL_HOME = mkdtempSync(path.join(os.tmpdir(), 'vigil-discovery-home-'));
});
afterAll(() => {
  if (saved === undefined) delete process.env.VIGIL_HOME;
  else process.env.VIGIL_HOME = saved;
});

describe('the discovery call (rules/discovery.ts)', () => {
  it('asks for the codebase analysis and a PRD of the goal with a task list, written into VIGIL_PRD_FILE', () => {
    const p = discoveryPrompt({ goal: '  Add a CSV export to the weekly report\n', maxItems: 60 });
    expect(p).toContain('Add a CSV export to the weekly report');
    for (const asked of ['languages, frameworks', 'layout', 'how its tests run', 'what already exists of the goal', 'read only'])
      expect(p).toContain(asked);
    expect(p).toContain('VIGIL_PRD_FILE');
    expect(p).toContain('at most 60');
    expect(p).toContain('- [ ] <requirement>');
  });

  it('refuses an empty, binary, undecodable or too large PRD, and takes a PRD', () => {
    expect(discoveredPrdProblem('# T\n\n- [ ] one\n', 20)).toBeNull();
    expect(discoveredPrdProblem(' \n\t\n', 4)).toBe('it is empty');
    expect(discoveredPrdProblem('a\0b', 3)).toContain('NUL');
    expect(discoveredPrdProblem('a\uFFFDb', 5)).toContain('not UTF-8');
    expect(discoveredPrdProblem('x', MAX_DISCOVERED_PRD_BYTES + 1)).toContain('too large');
  });

  it("tells a supervised run's person where the PRD is and every way on; a perpetual run only where it is", () => {
    const p = { runId: 'r1', prdPath: '/repo/.vigil/runs/r1/PRD.md', title: 'CSV', bytes: 120 };
    const sup = discoveredPrdNote({ ...p, supervised: true });
    expect(sup).toContain('/repo/.vigil/runs/r1/PRD.md ("CSV", 120 bytes)');
    for (const cmd of ['vigil resume r1', 'vigil stop r1', 'vigil input r1']) expect(sup).toContain(cmd);
    const perp = discoveredPrdNote({ ...p, supervised: false });
    expect(perp).toContain('/repo/.vigil/runs/r1/PRD.md');
    expect(perp).not.toContain('vigil resume');
  });

  it('titles a PRD by its first heading, else its first line', () => {
    expect(prdTitle('\uFEFFintro\n## The title ##\n')).toBe('The title');
    expect(prdTitle('\n  first line\nsecond\n')).toBe('first line');
  });
});

describe('what the discovery call wrote, kept (activities/discovery.ts)', () => {
  const written = (runId: string, text: string | null): string => {
    const file = freshDiscoveryFile(runId);
    if (text !== null) writeFileSync(file, text);
    return file;
  };

  it('copies the PRD into the run folder, at the path the run was started with', () => {
    const repo = makeRepo();
    const text = '# CSV export\n\n- [ ] a button\n';
    const kept = keepDiscoveredPrd(written('run-ok', text), repo, 'run-ok', 0);
    expect(kept).toEqual({
      ok: true,
      path: discoveredPrdPath(repo, 'run-ok'),
      title: 'CSV export',
      bytes: Buffer.byteLength(text),
      problem: null,
    });
    expect(readFileSync(kept.path, 'utf8')).toBe(text);
  });

  it('refuses nothing written, an empty file, a link, a failed call and a too large file, saying why', () => {
    const repo = makeRepo();
    expect(keepDiscoveredPrd(written('run-none', null), repo, 'run-none', 0).problem).toBe(
      'the discovery agent wrote no PRD (nothing at $VIGIL_PRD_FILE)',
    );
    expect(keepDiscoveredPrd(written('run-empty', '\n\n'), repo, 'run-empty', 0).problem).toContain("cannot be the run's PRD: it is empty");
    const secret = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-secret-')), 'key');
    writeFileSync(secret, '# not yours\n');
    const link = freshDiscoveryFile('run-link');
    symlinkSync(secret, link);
    expect(keepDiscoveredPrd(link, repo, 'run-link', 0).problem).toContain('symbolic link');
    expect(keepDiscoveredPrd(written('run-exit', '# fine\n'), repo, 'run-exit', 3).problem).toBe('the discovery agent exited with 3');
    expect(keepDiscoveredPrd(written('run-big', `# big\n${'x'.repeat(MAX_DISCOVERED_PRD_BYTES)}`), repo, 'run-big', 0).problem).toContain(
      'too large',
    );
    // Nothing refused reaches the run folder.
    for (const id of ['run-none', 'run-empty', 'run-link', 'run-exit', 'run-big'])
      expect(() => readFileSync(discoveredPrdPath(repo, id))).toThrow();
  });

  it("empties its folder before each call: an earlier call's PRD is not taken for this one's", () => {
    const repo = makeRepo();
    written('run-again', '# first\n');
    const again = freshDiscoveryFile('run-again');
    expect(keepDiscoveredPrd(again, repo, 'run-again', 0).ok).toBe(false);
  });
});

describe('vigil start --goal, checked (cli/start-checks.ts goalSource)', () => {
  const none: Parameters<typeof goalSource>[1] = { prdFile: undefined, issueFile: undefined, tasks: false, attempts: false, remote: false };
  it('takes a goal alone, trimmed; no goal is null', () => {
    expect(goalSource('  Add a CSV export \n', none)).toBe('Add a CSV export');
    expect(goalSource(undefined, none)).toBeNull();
  });

  it('refuses an empty or too long goal, and a goal beside a PRD, an issue, --tasks, --attempts or another host', () => {
    const refusal = (goal: unknown, o: Partial<typeof none>): string => {
      try {
        goalSource(goal, { ...none, ...o });
      } catch (err) {
        return (err as Error).message;
      }
      return 'taken';
    };
    expect(refusal(' ', {})).toContain('--goal needs the goal as text');
    expect(refusal('x'.repeat(4001), {})).toContain('at most 4000');
    expect(refusal('g', { prdFile: 'PRD.md' })).toBe(
      'give --goal or a PRD (PRD.md), not both: with --goal a discovery call writes the PRD',
    );
    expect(refusal('g', { issueFile: 'i.md' })).toContain('give --goal or --issue i.md, not both');
    expect(refusal('g', { tasks: true })).toContain('drop --tasks');
    expect(refusal('g', { attempts: true })).toContain('drop --attempts');
    expect(refusal('g', { remote: true })).toContain("start it on the run's host");
  });

  it("speaks MCP's words to vigil_start (`goal`, `issue`), the CLI's to vigil start", () => {
    const said = (goal: unknown, o: Partial<typeof none>): string => {
      try {
        goalSource(goal, { ...none, ...o }, MCP_NAMES);
      } catch (err) {
        return (err as Error).message;
      }
      return 'taken';
    };
    expect(said('', {})).toBe('`goal` needs the goal as text: vigil_start with goal: "add a CSV export to the weekly report"');
    expect(said('g', { issueFile: 'i.md' })).toBe('give `goal` or `issue` i.md, not both: with `goal` a discovery call writes the PRD');
    expect(said('x'.repeat(4001), {})).toContain('(vigil_start with prd: FILE)');
    expect(said('g', { remote: true })).toContain('write the PRD there and start it: vigil_start with prd and host');
    expect(goalSource(' g ', none, MCP_NAMES)).toBe('g');
  });

  it("names the run's PRD in its run folder, titled by the goal's first line", () => {
    expect(goalPrd('Add a CSV export\nwith dates', '/repo', 'vigil-x')).toEqual({
      path: '/repo/.vigil/runs/vigil-x/PRD.md',
      title: 'Add a CSV export',
      bytes: 0,
      sha256: null,
    });
  });
});
