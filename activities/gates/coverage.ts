/**
 * The opt-in coverage gate: line coverage from the report the project's own test run wrote,
 * against a threshold. Vigil does not re-run the tests instrumented (that doubles test time, the
 * reason the gate is opt-in); it reads what the test command produced: an Istanbul summary
 * (`coverage/coverage-summary.json`), a Cobertura file (`coverage.xml`,
 * `coverage/cobertura-coverage.xml`) or lcov (`coverage/lcov.info`). No report is inconclusive,
 * never a pass: a missing figure must not read as enough coverage.
 *
 * The parsers are pure. Reports are written by the project's tooling inside a tree an agent
 * controls, so they are treated as untrusted: reads are capped, Cobertura is read from its first
 * 4 KiB with a bounded pattern, lcov line by line with anchored patterns.
 */
import type { FindingInput, GateResultInput } from '../../schemas/gates.js';
import { finding, gateResult, linesOf, readRepoText, safeRelPath } from './test-integrity.js';

/** Where a test run usually writes its report, in the order they are tried. */
export const DEFAULT_REPORT_PATHS: readonly string[] = [
  'coverage/coverage-summary.json',
  'coverage.xml',
  'coverage/cobertura-coverage.xml',
  'coverage/lcov.info',
];

/** Bytes read of each kind of report. lcov must be read whole (its figures are per file and summed). */
const HEAD_BYTES = 4 * 1024;
const MAX_JSON_BYTES = 4 * 1024 * 1024;
const MAX_LCOV_BYTES = 32 * 1024 * 1024;
const MAX_REPORT_PATHS = 20;

export type CoverageFormat = 'istanbul' | 'cobertura' | 'lcov';

/** Line coverage of a whole project. `covered`/`total` are null when the report gives only a rate. */
export interface LineCoverage {
  percent: number;
  covered: number | null;
  total: number | null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** A figure from covered/total when both are there (exact), else from a percentage; null when there are no lines. */
function figure(covered: number | null, total: number | null, pct: number | null): LineCoverage | null {
  if (total !== null && covered !== null && total >= 0 && covered >= 0 && covered <= total) {
    return total === 0 ? null : { percent: (covered / total) * 100, covered, total };
  }
  if (total === 0) return null;
  return pct !== null && pct >= 0 && pct <= 100 ? { percent: pct, covered: null, total: null } : null;
}

function fromLinesObject(lines: unknown): LineCoverage | null {
  if (typeof lines !== 'object' || lines === null) return null;
  const l = lines as Record<string, unknown>;
  return figure(num(l['covered']), num(l['total']), num(l['pct']));
}

/**
 * `total.lines` of an Istanbul `json-summary` report. A report cut short by the read cap is not
 * valid JSON; the `total` entry comes first, so it is then taken from the first 4 KiB.
 */
export function parseIstanbulSummary(text: string): LineCoverage | null {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null) return null;
    const total = (v as Record<string, unknown>)['total'];
    return typeof total === 'object' && total !== null ? fromLinesObject((total as Record<string, unknown>)['lines']) : null;
  } catch {
    const head = text.slice(0, HEAD_BYTES);
    const at = head.indexOf('"total"');
    if (at < 0) return null;
    const m = /"lines"\s{0,20}:\s{0,20}(\{[^{}]{0,500}\})/.exec(head.slice(at, at + 2000));
    if (!m) return null;
    try {
      return fromLinesObject(JSON.parse(m[1] ?? ''));
    } catch {
      return null;
    }
  }
}

function xmlAttr(attrs: string, name: string): string | null {
  const m = new RegExp(String.raw`\s${name}\s{0,5}=\s{0,5}(["'])([^"'<>]{0,40})\1`).exec(attrs);
  return m ? (m[2] ?? null) : null;
}

const toNumber = (s: string | null): number | null => {
  if (s === null || s.trim() === '') return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
};

/**
 * Line coverage of a Cobertura report: `lines-covered`/`lines-valid` of the root `<coverage>`
 * element when present, else its `line-rate` (0..1). Only the first 4 KiB are looked at.
 */
export function parseCobertura(text: string): LineCoverage | null {
  const m = /<coverage(\s[^<>]{0,3000})?\/?>/.exec(text.slice(0, HEAD_BYTES));
  if (!m) return null;
  const attrs = m[1] ?? '';
  const rate = toNumber(xmlAttr(attrs, 'line-rate'));
  return figure(
    toNumber(xmlAttr(attrs, 'lines-covered')),
    toNumber(xmlAttr(attrs, 'lines-valid')),
    rate !== null && rate >= 0 && rate <= 1 ? rate * 100 : null,
  );
}

/**
 * Line coverage of an lcov tracefile: the sums of `LH` (lines hit) and `LF` (lines found) over
 * all records; a record without `LF` is counted from its `DA` lines instead.
 */
export function parseLcov(text: string): LineCoverage | null {
  let covered = 0;
  let total = 0;
  let rec = { lf: 0, lh: 0, hasLf: false, da: 0, daHit: 0, open: false };
  const flush = (): void => {
    if (!rec.open) return;
    covered += rec.hasLf ? rec.lh : rec.daHit;
    total += rec.hasLf ? rec.lf : rec.da;
    rec = { lf: 0, lh: 0, hasLf: false, da: 0, daHit: 0, open: false };
  };
  for (const line of linesOf(text)) {
    const t = line.trim();
    let m: RegExpExecArray | null;
    if (t === 'end_of_record') flush();
    else if ((m = /^LF:(\d{1,15})$/.exec(t))) {
      rec.open = true;
      rec.hasLf = true;
      rec.lf += Number(m[1]);
    } else if ((m = /^LH:(\d{1,15})$/.exec(t))) {
      rec.open = true;
      rec.lh += Number(m[1]);
    } else if ((m = /^DA:\d{1,15},(-?\d{1,20})(?:,.{0,200})?$/.exec(t))) {
      rec.open = true;
      rec.da++;
      if (Number(m[1]) > 0) rec.daHit++;
    } else if (t.startsWith('SF:')) rec.open = true;
  }
  flush();
  if (covered > total) return null;
  return figure(covered, total, null);
}

/** The report's format, from its name, else from its first bytes. */
export function detectFormat(rel: string, head: string): CoverageFormat | null {
  const base = rel.split('/').pop() ?? rel;
  if (base.endsWith('.json')) return 'istanbul';
  if (base.endsWith('.xml')) return 'cobertura';
  if (base.endsWith('.info') || base.includes('lcov')) return 'lcov';
  const t = head.trimStart();
  if (t.startsWith('{')) return 'istanbul';
  if (t.startsWith('<')) return 'cobertura';
  if (/^(?:TN|SF):/.test(t)) return 'lcov';
  return null;
}

/** A percentage as shown in a reason: two decimals at most, never rounded up past the threshold. */
export function formatPercent(p: number): string {
  return String(Math.floor(p * 100 + 1e-6) / 100);
}

const PARSERS: Record<CoverageFormat, { parse: (t: string) => LineCoverage | null; maxBytes: number; whole: boolean }> = {
  istanbul: { parse: parseIstanbulSummary, maxBytes: MAX_JSON_BYTES, whole: false },
  cobertura: { parse: parseCobertura, maxBytes: HEAD_BYTES, whole: false },
  lcov: { parse: parseLcov, maxBytes: MAX_LCOV_BYTES, whole: true },
};

/**
 * The coverage gate activity: the first readable report among `reportPaths` (repository-relative;
 * default `DEFAULT_REPORT_PATHS`) against `thresholdPercent` (0..100). Below: fail with a high
 * finding; at or above: pass; no usable report: inconclusive.
 */
export async function coverageGate(opts: { repoPath: string; thresholdPercent: number; reportPaths?: string[] }): Promise<GateResultInput> {
  const startedAt = Date.now();
  const inconclusive = (reason: string, findings: FindingInput[] = []): GateResultInput => ({
    ...gateResult('coverage', findings, '', startedAt),
    verdict: 'inconclusive',
    reason: reason.slice(0, 500),
  });
  const threshold = opts.thresholdPercent;
  if (!Number.isFinite(threshold) || threshold < 0 || threshold > 100)
    return inconclusive(`invalid coverage threshold ${String(threshold)} (expected 0 to 100)`);

  const paths = [
    ...new Set((opts.reportPaths ?? DEFAULT_REPORT_PATHS).map((p) => safeRelPath(p)).filter((p): p is string => p !== null)),
  ].slice(0, MAX_REPORT_PATHS);
  const unusable: FindingInput[] = [];
  for (const rel of paths) {
    const head = readRepoText(opts.repoPath, rel, HEAD_BYTES);
    if (head.kind === 'absent') continue;
    if (head.kind === 'problem') {
      unusable.push(finding('coverage', 'info', rel, null, `coverage report not read: ${head.problem}`));
      continue;
    }
    const format = detectFormat(rel, head.text);
    if (format === null) {
      unusable.push(finding('coverage', 'info', rel, null, 'coverage report not recognised: not Istanbul JSON, Cobertura XML or lcov'));
      continue;
    }
    const p = PARSERS[format];
    const full = head.bytes <= HEAD_BYTES ? head : readRepoText(opts.repoPath, rel, p.maxBytes);
    if (full.kind !== 'text') continue;
    if (p.whole && full.bytes > p.maxBytes) {
      unusable.push(finding('coverage', 'info', rel, null, `coverage report too large: over ${p.maxBytes} bytes, not summed`));
      continue;
    }
    const cov = p.parse(full.text);
    if (cov === null) {
      unusable.push(finding('coverage', 'info', rel, null, `coverage report has no line coverage figure: ${format} report without lines`));
      continue;
    }
    const shown = `${formatPercent(cov.percent)}%`;
    const counts = cov.covered !== null && cov.total !== null ? ` (${cov.covered}/${cov.total} lines)` : '';
    if (cov.percent + 1e-9 >= threshold) {
      return gateResult('coverage', unusable, `line coverage ${shown} meets the ${threshold}% threshold (${rel})`, startedAt);
    }
    const below = finding(
      'coverage',
      'high',
      rel,
      null,
      `line coverage below threshold: ${shown}${counts} is below the ${threshold}% threshold`,
    );
    return {
      ...gateResult('coverage', [below, ...unusable], '', startedAt),
      reason: `line coverage ${shown} is below the ${threshold}% threshold (${rel})`.slice(0, 500),
    };
  }
  if (unusable.length > 0) {
    const first = unusable[0];
    return inconclusive(`no usable coverage report: ${first?.file ?? ''}: ${first?.message ?? ''}`, unusable);
  }
  const looked = paths.length > 0 ? `looked for ${paths.join(', ')}` : 'no report path inside the repository was given';
  return inconclusive(`no coverage report found (${looked}); configure your test command to write one`);
}
