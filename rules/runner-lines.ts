/**
 * Which lines of a failed agent call's output are the provider's own words. Shared by the
 * rate-limit (§1.9) and auth-error (§1.8) readers so that neither mistakes a test run for a
 * provider failure, and both read the provider's structured output the same way.
 *
 * Owns:
 *   - `Provider` and `familiesOf`: which CLI's message forms apply to a provider's output (its
 *     own for claude / codex / gemini, none for aider / opencode, all for `command` or unknown).
 *   - `isTestRunnerLine`: a line printed by a test runner — vitest/jest (`✓ ✗ × ✕ ❯ →`,
 *     `FAIL`/`PASS <file>`, `● suite › test`, `Expected:`/`Received:`), mocha (`  1) name`),
 *     pytest (`... PASSED|FAILED|ERROR`, `FAILED a.py::t`, `E   ...`, `>   ...`), go test
 *     (`--- FAIL:`, `=== RUN`, `    x_test.go:12: ...`), node's test runner (`ok 1 -`, `not ok 1 -`,
 *     `✔ ✖`, and the YAML block under a TAP result), cargo (`test a::b ... FAILED`), and assertion
 *     errors. A test named "returns 429 too many requests" is therefore never a rate limit.
 *   - `readableLines`: lines without test-runner lines and provider event records.
 *   - `findProviderEvidence`: the one reading both detectors share — the provider's decisive
 *     record when it printed one (it wins: a record that is not an error means no evidence), else
 *     the last readable line of the last 40 that a detector's rule accepts.
 *   - `providerRecord`: the last decisive structured record a provider printed (claude stream-json
 *     `result`, codex JSON `error` / `turn.failed`, a gemini `{"error":{...}}` object), which wins
 *     over the plain text when present. Other one-line JSON event records (`{"type":...}`: tool
 *     traffic, assistant turns) are not the provider's verdict and are never read as text: a test
 *     log quoted inside a tool result cannot trip a detector.
 *
 * Pure: no I/O, clocks, randomness or environment.
 */

export type Provider = 'command' | 'claude' | 'codex' | 'gemini' | 'aider' | 'opencode' | 'cline';

/** The CLIs whose own message forms the detectors know. */
export type CliFamily = 'claude' | 'codex' | 'gemini';

const ALL_FAMILIES: readonly CliFamily[] = ['claude', 'codex', 'gemini'];

/**
 * Whose message forms apply to a provider's output: a known CLI's own; none beyond the common
 * forms for aider and opencode; all of them for `command` (it may wrap any CLI) or an unknown.
 */
export function familiesOf(provider: Provider | undefined): readonly CliFamily[] {
  if (provider === 'claude' || provider === 'codex' || provider === 'gemini') return [provider];
  if (provider === 'aider' || provider === 'opencode' || provider === 'cline') return [];
  return ALL_FAMILIES;
}

/** How much of the output the detectors read (spec §1.8, §1.9: the last 40 lines). */
export const TAIL_LINES = 40;

const TAP_RESULT = /^\s*(?:not )?ok \d+\b/; // TAP (node --test, tap, prove)

const RUNNER_LINE_PATTERNS: readonly RegExp[] = [
  /^\s*[✓✔✗✘×✕✖❯→↓]\s/u, // vitest / jest / node spec reporter result marks, vitest file and error lines
  /^\s*●\s.*›/u, // jest failure header: "● suite › test"
  /^\s*(?:FAIL|PASS)\s+\S/, // jest "FAIL src/a.test.ts", vitest " FAIL  test/a.test.ts > name"
  /^\s*(?:[-+] )?(?:Expected|Received)(?: value)?(?::|\s*$)/, // jest / vitest assertion diff
  /^\s*(?:\w+\.)*AssertionError\b/, // node assert, chai, vitest
  /^\s*expect\(/, // jest "expect(received).toBe(expected)"
  /^\s{2,}\d+\) \S/, // mocha numbered failures
  /^\s*\S*[Tt]est\S*\s+(?:PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)(?:\s+\[\s*\d+%\])?\s*$/, // pytest verbose result
  /^(?:FAILED|ERROR|PASSED)\s+\S+::/, // pytest short summary
  /^\S+\.py::\S+/, // pytest node id
  /^E\s{2,}/, // pytest error lines
  /^>\s{3,}/, // pytest failing source line
  /^\s*--- (?:FAIL|PASS|SKIP):/, // go test
  /^=== (?:RUN|PAUSE|CONT|NAME)\s/, // go test
  /^\s+\w+_test\.go:\d+:/, // go test log line of a test
  TAP_RESULT,
  /^test \S+ \.\.\. (?:ok|FAILED|ignored)\b/, // cargo test
];

export function isTestRunnerLine(line: string): boolean {
  return RUNNER_LINE_PATTERNS.some((re) => re.test(line));
}

const YAML_START = /^\s*---\s*$/;
const YAML_END = /^\s*\.\.\.\s*$/;

const INDENTED = /^\s/;

/**
 * Marks runner lines, plus the indented YAML diagnostics block (`---` … `...`) that follows a TAP
 * result; the block also ends at the first line that is not indented.
 */
function runnerLineMask(lines: readonly string[]): boolean[] {
  const mask: boolean[] = [];
  let afterTapResult = false;
  let inYaml = false;
  for (const line of lines) {
    if (inYaml && !INDENTED.test(line)) inYaml = false;
    if (inYaml) {
      mask.push(true);
      if (YAML_END.test(line)) inYaml = false;
      continue;
    }
    if (afterTapResult && YAML_START.test(line)) {
      mask.push(true);
      inYaml = true;
      afterTapResult = false;
      continue;
    }
    const runner = isTestRunnerLine(line);
    afterTapResult = runner && TAP_RESULT.test(line);
    mask.push(runner);
  }
  return mask;
}

export function splitLines(text: string): string[] {
  return text.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n');
}

/** The last `n` lines of `text`. */
export function lastLines(text: string, n: number = TAIL_LINES): string[] {
  return splitLines(text).slice(-n);
}

/** Lines that are neither test-runner output nor provider event records (see `providerRecord`). */
export function readableLines(lines: readonly string[]): string[] {
  const mask = runnerLineMask(lines);
  return lines.filter((line, i) => !mask[i] && !isEventRecordLine(line));
}

/** The provider's verdict on the call, read from its structured output. */
export interface ProviderRecord {
  provider: CliFamily;
  isError: boolean;
  /** The message text, read with the same rules as plain output. */
  text: string;
  /** The HTTP-like status code the record carries, when it carries one. */
  code: number | null;
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function parseObjectLine(line: string): Json | null {
  const t = line.trim();
  if (!(t.startsWith('{') && t.endsWith('}')) && !(t.startsWith('[{') && t.endsWith('}]'))) return null;
  try {
    const v: unknown = JSON.parse(t);
    const first: unknown = Array.isArray(v) ? v[0] : v;
    return isObject(first) ? first : null;
  } catch {
    return null;
  }
}

function isEventRecordLine(line: string): boolean {
  const o = parseObjectLine(line);
  return o !== null && typeof o.type === 'string' && recordOf(o) === null;
}

function claudeRecord(o: Json): ProviderRecord | null {
  if (o.type !== 'result') return null;
  const isError = o.is_error === true || str(o.subtype).startsWith('error');
  return { provider: 'claude', isError, text: str(o.result) || str(o.error) || str(o.subtype), code: null };
}

function codexRecord(o: Json): ProviderRecord | null {
  if (o.type === 'error') return { provider: 'codex', isError: true, text: str(o.message), code: null };
  if (o.type === 'turn.failed') {
    const err = isObject(o.error) ? o.error : {};
    return { provider: 'codex', isError: true, text: str(err.message) || str(o.message), code: null };
  }
  return null;
}

function geminiRecord(o: Json): ProviderRecord | null {
  if (!isObject(o.error)) return null;
  const e = o.error;
  const code = typeof e.code === 'number' ? e.code : null;
  // The whole error object is read as text: its details carry `retryDelay` and quota ids.
  return {
    provider: 'gemini',
    isError: true,
    text: [code === null ? '' : String(code), str(e.status), str(e.message), JSON.stringify(e)].filter((t) => t !== '').join(' '),
    code,
  };
}

function recordOf(o: Json): ProviderRecord | null {
  return claudeRecord(o) ?? codexRecord(o) ?? geminiRecord(o);
}

/**
 * The last decisive record among `lines`, when one was printed by `provider` (any provider's
 * forms when `provider` is absent or `command`, which may wrap any CLI). `aider` and `opencode`
 * print no recognised records.
 */
export function providerRecord(lines: readonly string[], provider?: Provider): ProviderRecord | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const o = parseObjectLine(lines[i] ?? '');
    const rec = o && recordOf(o);
    if (rec && familiesOf(provider).includes(rec.provider)) return rec;
  }
  return null;
}

/** What a detector found: the line that matched, and the readable lines details are read from. */
export interface ProviderEvidence {
  evidence: string;
  /** The record's text lines when a record decided, else every readable line of the output. */
  lines: string[];
  record: ProviderRecord | null;
}

function lastMatching(lines: readonly string[], test: (line: string) => boolean): string | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i];
    if (line !== undefined && test(line)) return line;
  }
  return null;
}

/**
 * @param matchesLine the detector's rule for one readable line
 * @param matchesRecord an extra rule for a decisive error record (e.g. its status code)
 */
export function findProviderEvidence(
  text: string,
  provider: Provider | undefined,
  matchesLine: (line: string) => boolean,
  matchesRecord: (record: ProviderRecord) => boolean = () => false,
): ProviderEvidence | null {
  const tail = lastLines(text);
  const record = providerRecord(tail, provider);
  if (record) {
    if (!record.isError) return null;
    const lines = readableLines(splitLines(record.text));
    const evidence = lastMatching(lines, matchesLine) ?? (matchesRecord(record) ? record.text : null);
    return evidence === null ? null : { evidence, lines, record };
  }
  const evidence = lastMatching(readableLines(tail), matchesLine);
  return evidence === null ? null : { evidence, lines: readableLines(splitLines(text)), record: null };
}
