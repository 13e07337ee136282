/**
 * Owns the unit tests of activities/gates/coverage.ts (the opt-in coverage gate): the Istanbul,
 * Cobertura and lcov parsers on report text shaped like what the tools write, and the gate on real
 * temporary folders (below, at and above the threshold, no report, unusable reports, paths
 * outside the repository). Adversarial 512 KiB inputs check the parsers stay linear.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  coverageGate,
  DEFAULT_REPORT_PATHS,
  detectFormat,
  formatPercent,
  parseCobertura,
  parseIstanbulSummary,
  parseLcov,
} from '../../activities/gates/coverage.js';
import { GateResultSchema } from '../../schemas/gates.js';

const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-coverage-test-'));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function write(repo: string, rel: string, content: string): void {
  const file = path.join(repo, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

/** An Istanbul json-summary report (total first, then one entry per file, as the reporter writes it). */
function istanbul(covered: number, total: number): string {
  const pct = total === 0 ? 'Unknown' : Math.round((covered / total) * 10000) / 100;
  const lines = { total, covered, skipped: 0, pct };
  const entry = {
    lines,
    statements: lines,
    functions: { total: 2, covered: 1, skipped: 0, pct: 50 },
    branches: { total: 0, covered: 0, skipped: 0, pct: 100 },
  };
  return JSON.stringify({ total: entry, '/repo/src/a.ts': entry });
}

/** A Cobertura report as coverage.py writes it. */
function cobertura(attrs: string): string {
  return [
    '<?xml version="1.0" ?>',
    '<!DOCTYPE coverage SYSTEM "https://raw.githubusercontent.com/cobertura/web/master/htdocs/xml/coverage-04.dtd">',
    `<coverage version="7.4.0" timestamp="1700000000000" ${attrs} branches-covered="0" branches-valid="0" branch-rate="0" complexity="0">`,
    '\t<sources><source>/repo</source></sources>',
    '\t<packages><package name="pkg" line-rate="0.1" branch-rate="0" complexity="0"></package></packages>',
    '</coverage>',
    '',
  ].join('\n');
}

const LCOV = [
  'TN:',
  'SF:src/a.ts',
  'FN:1,add',
  'DA:1,1',
  'DA:2,0',
  'LF:2',
  'LH:1',
  'end_of_record',
  'TN:',
  'SF:src/b.ts',
  'DA:1,3',
  'DA:2,1',
  'LF:8',
  'LH:7',
  'end_of_record',
  '',
].join('\n');

// ---------------------------------------------------------------------------------------------
// Parsers
// ---------------------------------------------------------------------------------------------

describe('parseIstanbulSummary', () => {
  it('reads total.lines, exactly from covered/total', () => {
    expect(parseIstanbulSummary(istanbul(3, 4))).toEqual({ percent: 75, covered: 3, total: 4 });
    expect(parseIstanbulSummary(istanbul(1, 3))?.percent).toBeCloseTo(33.333, 2);
  });

  it('falls back to pct when the counts are missing', () => {
    expect(parseIstanbulSummary('{"total":{"lines":{"pct":81.5}}}')).toEqual({ percent: 81.5, covered: null, total: null });
  });

  it('has no figure for a project without lines or for text that is not a summary', () => {
    expect(parseIstanbulSummary(istanbul(0, 0))).toBeNull();
    expect(parseIstanbulSummary('{"total":{"lines":{"pct":"Unknown"}}}')).toBeNull();
    expect(parseIstanbulSummary('{"total":{"lines":{"total":3,"covered":5,"pct":"x"}}}')).toBeNull();
    expect(parseIstanbulSummary('[]')).toBeNull();
    expect(parseIstanbulSummary('null')).toBeNull();
    expect(parseIstanbulSummary('not json')).toBeNull();
    expect(parseIstanbulSummary('{"files":{}}')).toBeNull();
  });

  it('reads the total of a report cut short by the read cap', () => {
    const cut = istanbul(9, 10).slice(0, 400);
    expect(() => JSON.parse(cut) as unknown).toThrow();
    expect(parseIstanbulSummary(cut)).toEqual({ percent: 90, covered: 9, total: 10 });
  });
});

describe('parseCobertura', () => {
  it('reads lines-covered/lines-valid of the root element', () => {
    expect(parseCobertura(cobertura('lines-valid="200" lines-covered="150" line-rate="0.75"'))).toEqual({
      percent: 75,
      covered: 150,
      total: 200,
    });
  });

  it('falls back to line-rate, in either quote style', () => {
    expect(parseCobertura("<coverage line-rate='0.5' branch-rate='0'></coverage>")).toEqual({ percent: 50, covered: null, total: null });
    expect(parseCobertura('<coverage line-rate="1"/>')).toEqual({ percent: 100, covered: null, total: null });
  });

  it('has no figure without a root element, a rate, lines or within the first 4 KiB', () => {
    expect(parseCobertura('<report><line-rate>0.5</line-rate></report>')).toBeNull();
    expect(parseCobertura('<coverage branch-rate="0.5"></coverage>')).toBeNull();
    expect(parseCobertura('<coverage line-rate="1.5"></coverage>')).toBeNull();
    expect(parseCobertura(cobertura('lines-valid="0" lines-covered="0" line-rate="1"'))).toBeNull();
    expect(parseCobertura(`<!-- ${'x'.repeat(5000)} -->\n<coverage line-rate="0.9"></coverage>`)).toBeNull();
  });
});

describe('parseLcov', () => {
  it('sums LH and LF over the records', () => {
    expect(parseLcov(LCOV)).toEqual({ percent: 80, covered: 8, total: 10 });
  });

  it('counts DA lines for a record without LF/LH, and accepts CRLF', () => {
    const text = ['SF:a.js', 'DA:1,1', 'DA:2,0', 'DA:3,4,abc123', 'end_of_record', 'SF:b.js', 'LF:1', 'LH:1', 'end_of_record'].join('\r\n');
    expect(parseLcov(text)).toEqual({ percent: 75, covered: 3, total: 4 });
  });

  it('counts a final record without end_of_record', () => {
    expect(parseLcov('SF:a.js\nLF:4\nLH:1\n')).toEqual({ percent: 25, covered: 1, total: 4 });
  });

  it('has no figure without lines or with impossible counts', () => {
    expect(parseLcov('')).toBeNull();
    expect(parseLcov('TN:\nSF:a.js\nLF:0\nLH:0\nend_of_record\n')).toBeNull();
    expect(parseLcov('SF:a.js\nLF:1\nLH:2\nend_of_record\n')).toBeNull();
  });
});

describe('detectFormat and formatPercent', () => {
  it('tells the format from the name, else from the first bytes', () => {
    expect(detectFormat('coverage/coverage-summary.json', '')).toBe('istanbul');
    expect(detectFormat('coverage.xml', '')).toBe('cobertura');
    expect(detectFormat('coverage/lcov.info', '')).toBe('lcov');
    expect(detectFormat('out/report', '  {"total":{}}')).toBe('istanbul');
    expect(detectFormat('out/report', '<?xml version="1.0"?>')).toBe('cobertura');
    expect(detectFormat('out/report', 'TN:\nSF:a.js')).toBe('lcov');
    expect(detectFormat('out/report', 'hello')).toBeNull();
  });

  it('shows two decimals at most and never rounds up', () => {
    expect(formatPercent(75)).toBe('75');
    expect(formatPercent(79.996)).toBe('79.99');
    expect(formatPercent(0.57 * 100)).toBe('57');
    expect(formatPercent(100 / 3)).toBe('33.33');
  });
});

// ---------------------------------------------------------------------------------------------
// The gate
// ---------------------------------------------------------------------------------------------

describe('coverageGate', () => {
  it('fails below the threshold with a high finding and a stable reason', async () => {
    const repo = tempDir();
    write(repo, 'coverage/coverage-summary.json', istanbul(145, 200));
    const r = await coverageGate({ repoPath: repo, thresholdPercent: 80 });
    expect(r.verdict).toBe('fail');
    expect(r.reason).toBe('line coverage 72.5% is below the 80% threshold (coverage/coverage-summary.json)');
    expect(r.findings).toEqual([
      {
        gate: 'coverage',
        severity: 'high',
        file: 'coverage/coverage-summary.json',
        line: null,
        message: 'line coverage below threshold: 72.5% (145/200 lines) is below the 80% threshold',
      },
    ]);
    expect((await coverageGate({ repoPath: repo, thresholdPercent: 80 })).reason).toBe(r.reason);
    expect(GateResultSchema.parse(r).findingCount).toBe(1);
  });

  it('passes at and above the threshold', async () => {
    const repo = tempDir();
    write(repo, 'coverage/coverage-summary.json', istanbul(160, 200));
    expect(await coverageGate({ repoPath: repo, thresholdPercent: 80 })).toMatchObject({
      verdict: 'pass',
      reason: 'line coverage 80% meets the 80% threshold (coverage/coverage-summary.json)',
      findings: [],
    });
    expect((await coverageGate({ repoPath: repo, thresholdPercent: 79.5 })).verdict).toBe('pass');
    expect((await coverageGate({ repoPath: repo, thresholdPercent: 80.01 })).verdict).toBe('fail');
  });

  it('reads Cobertura at coverage.xml and coverage/cobertura-coverage.xml', async () => {
    const py = tempDir();
    write(py, 'coverage.xml', cobertura('lines-valid="10" lines-covered="9" line-rate="0.9"'));
    expect(await coverageGate({ repoPath: py, thresholdPercent: 85 })).toMatchObject({
      verdict: 'pass',
      reason: 'line coverage 90% meets the 85% threshold (coverage.xml)',
    });
    const js = tempDir();
    write(js, 'coverage/cobertura-coverage.xml', cobertura('line-rate="0.57"'));
    expect(await coverageGate({ repoPath: js, thresholdPercent: 57 })).toMatchObject({
      verdict: 'pass',
      reason: 'line coverage 57% meets the 57% threshold (coverage/cobertura-coverage.xml)',
    });
    expect(await coverageGate({ repoPath: js, thresholdPercent: 60 })).toMatchObject({
      verdict: 'fail',
      reason: 'line coverage 57% is below the 60% threshold (coverage/cobertura-coverage.xml)',
    });
  });

  it('reads lcov', async () => {
    const repo = tempDir();
    write(repo, 'coverage/lcov.info', LCOV);
    expect(await coverageGate({ repoPath: repo, thresholdPercent: 90 })).toMatchObject({
      verdict: 'fail',
      reason: 'line coverage 80% is below the 90% threshold (coverage/lcov.info)',
    });
  });

  it('is inconclusive without a report, naming where it looked', async () => {
    const repo = tempDir();
    const r = await coverageGate({ repoPath: repo, thresholdPercent: 80 });
    expect(r.verdict).toBe('inconclusive');
    expect(r.reason).toBe(
      'no coverage report found (looked for coverage/coverage-summary.json, coverage.xml, coverage/cobertura-coverage.xml, ' +
        'coverage/lcov.info); configure your test command to write one',
    );
    expect(DEFAULT_REPORT_PATHS).toHaveLength(4);
    expect(GateResultSchema.parse(r).verdict).toBe('inconclusive');
  });

  it('skips an unusable report for a later usable one, and is inconclusive when none is usable', async () => {
    const repo = tempDir();
    write(repo, 'coverage/coverage-summary.json', '{"total":');
    write(repo, 'coverage/lcov.info', LCOV);
    const r = await coverageGate({ repoPath: repo, thresholdPercent: 50 });
    expect(r).toMatchObject({ verdict: 'pass', reason: 'line coverage 80% meets the 50% threshold (coverage/lcov.info)' });
    expect(r.findings).toEqual([
      {
        gate: 'coverage',
        severity: 'info',
        file: 'coverage/coverage-summary.json',
        line: null,
        message: 'coverage report has no line coverage figure: istanbul report without lines',
      },
    ]);
    write(repo, 'coverage/lcov.info', 'TN:\n');
    expect(await coverageGate({ repoPath: repo, thresholdPercent: 50 })).toMatchObject({
      verdict: 'inconclusive',
      reason:
        'no usable coverage report: coverage/coverage-summary.json: coverage report has no line coverage figure: istanbul report without lines',
    });
  });

  it('reads the report paths it is given, never outside the repository, never through a link', async () => {
    const repo = tempDir();
    const outside = tempDir();
    write(outside, 'lcov.info', 'SF:a\nLF:1\nLH:1\nend_of_record\n');
    write(repo, 'reports/cov.dat', 'TN:\nSF:a.js\nLF:4\nLH:3\nend_of_record\n');
    symlinkSync(path.join(outside, 'lcov.info'), path.join(repo, 'linked.info'));
    const given = await coverageGate({
      repoPath: repo,
      thresholdPercent: 70,
      reportPaths: ['../lcov.info', path.join(outside, 'lcov.info'), 'linked.info', 'reports/cov.dat'],
    });
    expect(given).toMatchObject({ verdict: 'pass', reason: 'line coverage 75% meets the 70% threshold (reports/cov.dat)' });
    expect(given.findings).toEqual([
      {
        gate: 'coverage',
        severity: 'info',
        file: 'linked.info',
        line: null,
        message: 'coverage report not read: linked.info is a symbolic link; ignored',
      },
    ]);
    const none = await coverageGate({ repoPath: repo, thresholdPercent: 70, reportPaths: ['../lcov.info'] });
    expect(none).toMatchObject({
      verdict: 'inconclusive',
      reason: 'no coverage report found (no report path inside the repository was given); configure your test command to write one',
    });
  });

  it('is inconclusive for a threshold outside 0..100', async () => {
    const repo = tempDir();
    write(repo, 'coverage/lcov.info', LCOV);
    for (const t of [-1, 101, Number.NaN]) {
      expect((await coverageGate({ repoPath: repo, thresholdPercent: t })).verdict).toBe('inconclusive');
    }
    expect((await coverageGate({ repoPath: repo, thresholdPercent: 0 })).verdict).toBe('pass');
    expect((await coverageGate({ repoPath: repo, thresholdPercent: 100 })).verdict).toBe('fail');
  });
});

describe('adversarial 512 KiB inputs', () => {
  const SIZE = 512 * 1024;
  const fill = (unit: string): string => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
  const inputs: Record<string, string> = {
    'coverage elements without an end': fill(`<coverage ${'a'.repeat(5000)}`),
    attributes: fill(' line-rate="'),
    'lcov prefixes': fill(`DA:${'1'.repeat(3000)},\n`),
    'lcov counters': fill('LF:99999999\nLH:1\n'),
    'json-ish': fill('{"total":{"lines":{'),
    quotes: fill('"'),
  };

  it.each(Object.keys(inputs))('%s: parsed in under a second', (name) => {
    const content = inputs[name] ?? '';
    const t0 = performance.now();
    parseIstanbulSummary(content);
    parseCobertura(content);
    parseLcov(content);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
