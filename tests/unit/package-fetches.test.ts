/**
 * The package fetch log and its counts (rules/package-fetches.ts): a log line reads
 * back as written, a torn or forged line is skipped (never counted), the counts add up by host and
 * stay bounded, the run's state keeps them across calls (noteSandbox), and the lines `vigil status`
 * prints say how many fetches, from where, and — when the registries are closed — why an install
 * failed and which knob opens them.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PACKAGE_HOSTS, PackageFetchesSchema, SandboxStateSchema, type SandboxReport } from '../../schemas/sandbox.js';
import { fetchLogPath } from '../../schemas/paths.js';
import {
  addFetchCounts,
  byteText,
  countFetches,
  emptyFetchCounts,
  fetchLogLine,
  MAX_FETCH_HOSTS,
  packagesLines,
  parseFetchLog,
  type FetchEntry,
} from '../../rules/package-fetches.js';
import { noteSandbox } from '../../rules/sandbox.js';

const entry = (over: Partial<FetchEntry> = {}): FetchEntry => ({
  at: '2026-11-29T10:00:00.000Z',
  call: 'iteration-0001',
  host: 'registry.npmjs.org',
  port: 443,
  method: 'CONNECT',
  url: null,
  bytesIn: 1500,
  bytesOut: 500,
  ms: 120,
  refused: null,
  ...over,
});

describe('the fetch log', () => {
  it('reads back what it wrote, in order', () => {
    const a = entry();
    const b = entry({ host: 'pypi.org', method: 'GET', url: 'http://pypi.org/simple/six/', call: 'tests-0001' });
    const c = entry({ host: 'files.pythonhosted.org', bytesIn: 0, bytesOut: 0, ms: 0, refused: 'closed' });
    const { entries, skipped } = parseFetchLog(fetchLogLine(a) + fetchLogLine(b) + fetchLogLine(c));
    expect(entries).toEqual([a, b, c]);
    expect(skipped).toBe(0);
  });

  it('skips a torn last line and lines that are not fetches, and counts only real entries', () => {
    const good = fetchLogLine(entry());
    const text = [
      good.trim(),
      '',
      '{"at":"2026-11-29T10:00:00.000Z","call":"x","host":"registry.npmjs.org","port":443', // torn by a crash
      JSON.stringify({ ...entry(), bytesIn: -5 }), // negative bytes
      JSON.stringify({ ...entry(), port: 70000 }),
      JSON.stringify({ ...entry(), refused: 'because' }),
      JSON.stringify({ ...entry(), at: 'yesterday' }),
      JSON.stringify({ ...entry(), bytesIn: 1.5 }),
      'not json',
      '42',
    ].join('\n');
    const { entries, skipped } = parseFetchLog(text);
    expect(entries).toHaveLength(1);
    expect(skipped).toBe(8);
    expect(countFetches(entries).fetches).toBe(1);
  });

  it('shortens a long URL', () => {
    const long = `http://pypi.org/${'a'.repeat(5000)}`;
    const parsed = parseFetchLog(fetchLogLine(entry({ method: 'GET', url: long }))).entries[0];
    expect(parsed?.url).toHaveLength(2000);
  });

  it('lives in the run folder of the repository', () => {
    expect(fetchLogPath('/repo/', 'run:1')).toBe('/repo/.vigil/runs/run%3A1/packages.jsonl');
  });
});

describe('the counts', () => {
  it('add up by host, bytes both ways, refusals apart', () => {
    const c = countFetches([
      entry(),
      entry({ bytesIn: 10, bytesOut: 0 }),
      entry({ host: 'pypi.org', bytesIn: 100, bytesOut: 1 }),
      entry({ host: 'files.pythonhosted.org', refused: 'closed', bytesIn: 0, bytesOut: 0 }),
    ]);
    expect(c).toEqual({
      fetches: 3,
      bytes: 2000 + 10 + 101,
      hosts: [
        { host: 'registry.npmjs.org', fetches: 2, bytes: 2010 },
        { host: 'pypi.org', fetches: 1, bytes: 101 },
      ],
      refused: 1,
      refusedHosts: ['files.pythonhosted.org'],
      refusedWhy: 'closed',
    });
    expect(PackageFetchesSchema.parse(c)).toEqual(c);
  });

  it('stay bounded: hosts beyond the limit are counted, not listed', () => {
    const many = Array.from({ length: MAX_FETCH_HOSTS + 5 }, (_, i) => entry({ host: `mirror${i}.example` }));
    const c = countFetches(many);
    expect(c.fetches).toBe(MAX_FETCH_HOSTS + 5);
    expect(c.hosts).toHaveLength(MAX_FETCH_HOSTS);
    expect(MAX_FETCH_HOSTS).toBe(MAX_PACKAGE_HOSTS);
    expect(() => PackageFetchesSchema.parse(c)).not.toThrow();
    expect(packagesLines(c, null)[0]).toContain('5 from other hosts');
  });

  it('keep "closed" as the reason once the run closed the registries, whatever a reviewing role did after', () => {
    const closed = countFetches([entry({ refused: 'closed' })]);
    const reviewing = countFetches([entry({ host: 'pypi.org', refused: 'reviewing' })]);
    expect(addFetchCounts(closed, reviewing).refusedWhy).toBe('closed');
    expect(addFetchCounts(reviewing, closed).refusedWhy).toBe('closed');
    expect(addFetchCounts(emptyFetchCounts(), reviewing).refusedWhy).toBe('reviewing');
  });

  it("add up over the run's calls in its state, and stay out of the latest call's line", () => {
    const report = (packages: SandboxReport['packages']): SandboxReport => ({
      mode: 'auto',
      applied: true,
      isolation: 'bubblewrap; repository writable',
      reason: null,
      denied: [],
      ...(packages ? { packages } : {}),
    });
    let s = SandboxStateSchema.parse({ last: null, denied: [], deniedTotal: 0, unsandboxedCalls: 0 });
    s = noteSandbox(s, report(undefined), { iteration: 1, role: 'builder' });
    expect(s.packages).toBeUndefined();
    s = noteSandbox(s, report(countFetches([entry(), entry()])), { iteration: 1, role: 'builder' });
    s = noteSandbox(s, report(countFetches([entry({ host: 'pypi.org' })])), { iteration: 1, role: 'tests' });
    expect(s.packages?.fetches).toBe(3);
    expect(s.packages?.hosts.map((h) => h.host)).toEqual(['registry.npmjs.org', 'pypi.org']);
    expect(s.last && 'packages' in s.last).toBe(false);
    expect(SandboxStateSchema.parse(s)).toEqual(s);
  });
});

describe('what status says', () => {
  it('counts the fetches by host, with the bytes and where each is listed', () => {
    const c = countFetches([entry(), entry(), entry({ host: 'pypi.org', bytesIn: 1_200_000, bytesOut: 0 })]);
    expect(packagesLines(c, '/r/.vigil/runs/x/packages.jsonl')).toEqual([
      '3 fetches from registry.npmjs.org (2, 4.0 kB), pypi.org (1, 1.2 MB); 1.2 MB in all; each in /r/.vigil/runs/x/packages.jsonl',
    ]);
    expect(packagesLines(countFetches([entry()]), null)).toEqual(['1 fetch from registry.npmjs.org (1, 2.0 kB); 2.0 kB in all']);
  });

  it('says why a closed run refused them, and the knob that opens them', () => {
    const c = countFetches([entry({ refused: 'closed' }), entry({ host: 'pypi.org', refused: 'closed' })]);
    const [line, ...rest] = packagesLines(c, null);
    expect(rest).toEqual([]);
    expect(line).toMatch(
      /^2 fetches to registry\.npmjs\.org, pypi\.org refused: the package registries are closed for this run \(sandboxRegistries=false\)/,
    );
    expect(line).toContain('--set sandboxRegistries=true');
  });

  it("says a reviewing role's refusal is by design, not a closed knob", () => {
    const [line] = packagesLines(countFetches([entry({ refused: 'reviewing' })]), null);
    expect(line).toContain('reviewing roles');
    expect(line).not.toContain('sandboxRegistries=false');
  });

  it('writes bytes as npm and pip do', () => {
    expect([0, 999, 1000, 15_300, 999_999, 2_500_000, 3e9].map(byteText)).toEqual([
      '0 B',
      '999 B',
      '1.0 kB',
      '15.3 kB',
      '1.0 MB',
      '2.5 MB',
      '3.0 GB',
    ]);
  });
});
