/**
 * Text scans used on agent output and on changed files: the done-phrases an agent uses when it
 * believes it is finished, a secret detector with a deny filter for placeholders and environment
 * references, and a redactor that replaces detected secret values before output leaves an
 * activity. Pure functions with no Node imports (bundled into the workflow sandbox); activities
 * run them over files and logs and report the findings as facts.
 *
 * Every pattern is linear on its input, whatever the input (agent output is untrusted): a token
 * pattern can only start where a run of its own characters starts (a lookbehind), every
 * repetition inside a pattern has an upper bound, and the one multi-line construct (a PEM body)
 * is walked line by line in code. 64 KiB of adversarial text is redacted in well under a second.
 */

const DONE_RE =
  /(all tests pass|all requirements met|implementation complete|feature complete|task complete|project complete|all tasks done|everything is working)/i;

/** The first done-phrase in the last 200 lines of `text`, or null. */
export function findDonePhrase(text: string): string | null {
  const lines = text.replace(/\r?\n$/, '').split('\n'); // a final newline ends the last line
  const m = DONE_RE.exec(lines.slice(-200).join('\n'));
  return m ? (m[1] as string).toLowerCase() : null;
}

/** A secret found by `scanSecrets`: what it is and where (never the value itself). */
export interface SecretFinding {
  kind: string;
  line: number;
}

/**
 * A secret found by `findSecrets`: `text.slice(start, end)` is the secret value alone (the key,
 * the password inside a URL, the token), `line` is 1-based. For a private key the value is the
 * key's body; it is empty when only the `-----BEGIN ... PRIVATE KEY-----` line is in the text.
 * Offsets point into the scanned text: keep them out of workflow state along with the text.
 */
export interface SecretMatch extends SecretFinding {
  start: number;
  end: number;
}

// ---------------------------------------------------------------------------------------------
// Placeholders
// ---------------------------------------------------------------------------------------------

/** Words that mark a value (or an assignment line) as an example, a placeholder or a lookup. */
const DENY_WORDS = new RegExp(
  String.raw`(${[
    /example|dummy|placeholder|changeme|change[_-]?me|your[_-]|<[^<>\n]{0,80}>|process\.env|os\.environ|getenv/.source,
    /ENV\[|x{6,}|\*{4,}|test[_-]?(?:key|secret|token)|fake|redacted|sample/.source,
  ].join('|')})`,
  'i',
);
/** `${NAME}`, `$NAME`: an environment or template reference, not a literal. */
const ENV_REF = /\$\{|(?<![A-Za-z0-9])\$[A-Za-z_]/;

/** Obviously not a real secret: a placeholder word, an env reference, or a long value made of
 * fewer than 4 distinct characters (`AAAAAAAA`, `abababab`). */
function isPlaceholder(value: string): boolean {
  return DENY_WORDS.test(value) || ENV_REF.test(value) || (value.length >= 8 && new Set(value).size < 4);
}

/**
 * Passwords inside URLs that are placeholders, not credentials: dictionary placeholders
 * (`password`, `passwd`, `pass`, `pwd`, `pw`, `secret`, `changeme`, `xxx`, `***`, `...`),
 * references and templates (`${DB_PASS}`, `$DB_PASS`, `<password>`, `{{ .Password }}`,
 * `%(password)s`), anything shorter than 4 characters, and a password equal to the user name
 * (`postgres:postgres`, `guest:guest`: a default of a local service, not a secret). So
 * `postgres://user:password@localhost` is a placeholder; `postgres://app:Zq8mPw3xVt@db` is not.
 */
const URL_PASSWORD_PLACEHOLDER =
  /^(?:pass(?:word|wd)?|pwd?|secret|change_?me|x{3,}|\*+|\.{3}|…|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|<[^<>]*>|\{\{[^}]*\}\}|%\([A-Za-z_]+\)s)$/i;

function isUrlPasswordPlaceholder(password: string, user: string | undefined): boolean {
  return password.length < 4 || URL_PASSWORD_PLACEHOLDER.test(password) || password === user;
}

// ---------------------------------------------------------------------------------------------
// Patterns
// ---------------------------------------------------------------------------------------------

interface SecretPattern {
  kind: string;
  /** Flags `g` and `d`. The secret value is the named group `v` (or `q`, `u`), else the match. */
  re: RegExp;
  /**
   * Where placeholder words also disqualify a match: `line` is the assignment's line (within 256
   * characters either side), `url` is the rest of the URL (user name, host).
   */
  context?: 'line' | 'url';
  /** An extra placeholder test on the value, besides `isPlaceholder`. */
  placeholder?: (value: string, groups: Record<string, string | undefined>) => boolean;
}

const PRIVATE_KEY = 'private key';
const PEM_HEADER = /-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----/g;

/** In pattern order: `scanSecrets` reports the first kind that matches on a line. */
const SECRET_PATTERNS: readonly SecretPattern[] = [
  // (private keys come first: handled in code, see `hitsInLine`)
  { kind: 'AWS access key id', re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/dg },
  {
    // aws_secret_access_key = ..., AWS_SECRET_ACCESS_KEY="...", "SecretAccessKey": "..."
    kind: 'AWS secret access key',
    re: /(?<![A-Za-z0-9])(?:aws[_-]?)?secret[_-]?access[_-]?key["']?[ \t]{0,16}(?:=>|[:=])[ \t]{0,16}["']?(?<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dgi,
  },
  {
    // Next to its key id: `AKIA... wJalr...`, a CSV row `AKIA...,wJalr...`, `id=AKIA...;
    // secret=wJalr...` (one short name in between). Mixed case required.
    kind: 'AWS secret access key',
    re: new RegExp(
      [
        /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b[\s"',:;|=]{1,8}(?:[A-Za-z_-]{1,32}[\s"':=]{1,4})?/.source,
        /(?<v>(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[A-Z])[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/.source,
      ].join(''),
      'dg',
    ),
  },
  { kind: 'GitHub token', re: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{40,255})(?![A-Za-z0-9_])/dg },
  {
    kind: 'GitLab token',
    re: /(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|ft|cbt|soat)-[A-Za-z0-9_-]{20,64}(?:\.[A-Za-z0-9_-]{2,64}){0,2}(?![A-Za-z0-9_-])/dg,
  },
  { kind: 'Slack token', re: /(?<![A-Za-z0-9-])xox[abprs]-[A-Za-z0-9-]{10,255}(?![A-Za-z0-9-])/dg },
  {
    // The last path segment is the secret; the T.../B... ids stay readable.
    kind: 'Slack webhook URL',
    re: /hooks\.slack\.com\/services\/T[A-Z0-9]{6,16}\/B[A-Z0-9]{6,16}\/(?<v>[A-Za-z0-9]{16,64})(?![A-Za-z0-9])/dg,
  },
  {
    kind: 'Discord webhook URL',
    re: /discord(?:app)?\.com\/api(?:\/v[0-9]{1,2})?\/webhooks\/[0-9]{15,22}\/(?<v>[A-Za-z0-9_-]{40,100})(?![A-Za-z0-9_-])/dg,
  },
  { kind: 'Anthropic API key', re: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,512}(?![A-Za-z0-9_-])/dg },
  {
    // sk-, sk-proj-, sk-svcacct-: 20+ characters with an upper-case letter or a digit in them
    // (so `sk-fading-circle-container` is a CSS class, not a key).
    kind: 'OpenAI API key',
    re: /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]{0,511}[A-Z0-9])[A-Za-z0-9_-]{20,512}(?![A-Za-z0-9_-])/dg,
  },
  { kind: 'Stripe live key', re: /(?<![A-Za-z0-9_])[rs]k_live_[A-Za-z0-9]{20,255}(?![A-Za-z0-9])/dg },
  { kind: 'Google API key', re: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/dg },
  { kind: 'Hugging Face token', re: /(?<![A-Za-z0-9_])hf_(?=[A-Za-z]{0,63}[A-Z])(?=[A-Za-z]{0,63}[a-z])[A-Za-z]{30,64}(?![A-Za-z0-9_])/dg },
  { kind: 'npm token', re: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/dg },
  {
    // header.payload.signature, base64url, the header a JSON object (`eyJ` is `{"`).
    kind: 'JWT',
    re: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{4,8192}\.[A-Za-z0-9_-]{16,8192}(?![A-Za-z0-9_-])/dg,
  },
  {
    // scheme://user:password@host for any scheme (postgres, postgresql, mysql, redis, rediss,
    // mongodb+srv, amqp, https, ...). The password is the value; the last `@` before the host
    // ends it, so an unescaped `@` inside the password is still covered.
    kind: 'URL credential',
    re: /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}:\/\/(?<user>[^\s:/?#@"'`<>]{0,128}):(?<v>[^\s/?#"'`]{1,256})@(?=[A-Za-z0-9[_-])/dg,
    context: 'url',
    placeholder: (value, groups) => isUrlPasswordPlaceholder(value, groups.user),
  },
  {
    // NAME = "value", name: 'value', NAME=value (.env): the name may carry a prefix (DB_PASSWORD,
    // OPENAI_API_KEY); an unquoted value must look random (letters and digits).
    kind: 'credential assignment',
    re: new RegExp(
      String.raw`(?<![A-Za-z0-9_])[A-Za-z0-9_]{0,64}?` +
        String.raw`(?:api[_-]?key|api[_-]?secret|secret[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|password|passwd)` +
        String.raw`["']?\s{0,16}[:=]\s{0,16}(?:${[
          /["'](?<q>[^"'\s]{12,512})["']/.source,
          /(?<u>(?=[A-Za-z0-9_/+.=-]{0,511}\d)(?=[A-Za-z0-9_/+.=-]{0,511}[A-Za-z])[A-Za-z0-9_/+.=-]{16,512}(?![A-Za-z0-9_/+.=-]))/.source,
        ].join('|')})`,
      'dgi',
    ),
    context: 'line',
  },
];

/** Every kind a finding can have. */
export const SECRET_KINDS: readonly string[] = [PRIVATE_KEY, ...new Set(SECRET_PATTERNS.map((p) => p.kind))];

/** The redaction marker; a value containing one is never detected again (`redacted` is a
 * placeholder word), which keeps redaction idempotent. */
const MARKER_RE = /\[REDACTED:[^\]\n]{1,64}\]/g;
const marker = (kind: string): string => `[REDACTED:${kind}]`;

// ---------------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------------

interface LineHit {
  kind: string;
  /** Offsets within the line. */
  start: number;
  end: number;
  /** A private-key header: its body (if any) is found by `pemBody`. */
  pem?: boolean;
}

const VALUE_GROUPS = ['v', 'q', 'u'] as const;

function valueOf(m: RegExpExecArray): { start: number; end: number } {
  const groups = m.indices?.groups;
  for (const g of VALUE_GROUPS) {
    const span = groups?.[g];
    if (span) return { start: span[0], end: span[1] };
  }
  return { start: m.index, end: m.index + m[0].length };
}

function contextOf(p: SecretPattern, line: string, m: RegExpExecArray): string | null {
  if (p.context === 'line') return line.slice(Math.max(0, m.index - 256), m.index + m[0].length + 256);
  if (p.context === 'url') {
    const end = m.index + m[0].length;
    const rest = /^[^\s"'`]{0,256}/.exec(line.slice(end, end + 256));
    return m[0] + (rest ? rest[0] : '');
  }
  return null;
}

/** No secret pattern matches a line shorter than this (the shortest match, `ab://:pass@h`, has 12). */
const MIN_LINE = 10;

/** The secrets on one line, in pattern order (private keys first), placeholders skipped. */
function* hitsInLine(line: string): Generator<LineHit> {
  if (line.length < MIN_LINE) return;
  let m: RegExpExecArray | null;
  // Shared global regexes and a generator that may be left early: every exec sets lastIndex.
  for (let from = 0; ;) {
    PEM_HEADER.lastIndex = from;
    m = PEM_HEADER.exec(line);
    if (!m) break;
    from = PEM_HEADER.lastIndex;
    yield { kind: PRIVATE_KEY, start: from, end: from, pem: true };
  }
  for (const p of SECRET_PATTERNS) {
    for (let from = 0; ;) {
      p.re.lastIndex = from;
      m = p.re.exec(line);
      if (!m) break;
      from = p.re.lastIndex;
      const { start, end } = valueOf(m);
      const value = line.slice(start, end);
      if (isPlaceholder(value) || p.placeholder?.(value, m.groups ?? {})) continue;
      const context = contextOf(p, line, m);
      if (context !== null && (DENY_WORDS.test(context) || (p.context === 'line' && ENV_REF.test(context)))) continue;
      yield { kind: p.kind, start, end };
    }
  }
}

const PEM_ESCAPED_BODY = /(?:\\[rn]|[A-Za-z0-9+/=])*/y;
const PEM_BODY_LINE = /^[ \t]*[A-Za-z0-9+/=]{1,128}[ \t]*\r?$/;
const PEM_HEADER_LINE = /^(?:Proc-Type|DEK-Info|Version|Comment|Hash):[^\n]{0,256}$/;

/**
 * The body of the private key whose header ends at `headerEnd` on line `i`, as absolute offsets:
 * on the same line (a JSON string with `\n` escapes, or no line breaks at all), else the
 * base64 lines that follow (after optional `Proc-Type:`-style headers and blank lines), up to
 * the END line or the first line that is not base64. Empty when there is no body.
 */
function pemBody(lines: readonly string[], lineStarts: readonly number[], i: number, headerEnd: number): { start: number; end: number } {
  const line = lines[i] as string;
  const base = lineStarts[i] as number;
  PEM_ESCAPED_BODY.lastIndex = headerEnd;
  const run = (PEM_ESCAPED_BODY.exec(line) as RegExpExecArray)[0];
  const lead = /^(?:\\[rn])*/.exec(run) as RegExpExecArray;
  const trail = /(?:\\[rn])*$/.exec(run.slice(lead[0].length)) as RegExpExecArray;
  if (run.length - lead[0].length - trail[0].length > 0) {
    return { start: base + headerEnd + lead[0].length, end: base + headerEnd + run.length - trail[0].length };
  }
  const none = { start: base + headerEnd, end: base + headerEnd };
  if (line.slice(headerEnd).trim() !== '') return none; // prose after the header, not a key
  let first = -1;
  let last = -1;
  for (let j = i + 1; j < lines.length && j <= i + 400; j++) {
    const l = lines[j] as string;
    if (PEM_BODY_LINE.test(l)) {
      if (first < 0) first = j;
      last = j;
    } else if (!(first < 0 && (l.trim() === '' || PEM_HEADER_LINE.test(l)))) break;
  }
  if (first < 0) return none;
  const f = lines[first] as string;
  return {
    start: (lineStarts[first] as number) + f.length - f.trimStart().length,
    end: (lineStarts[last] as number) + (lines[last] as string).trimEnd().length,
  };
}

/**
 * Every secret in `text`, in line order (within a line: private keys, then pattern order),
 * placeholders skipped. Lines of any length are read (unlike `scanSecrets`).
 */
export function findSecrets(text: string): SecretMatch[] {
  const lines = text.split('\n');
  const lineStarts: number[] = [];
  let offset = 0;
  for (const l of lines) {
    lineStarts.push(offset);
    offset += l.length + 1;
  }
  const found: SecretMatch[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.length < MIN_LINE) continue;
    const base = lineStarts[i] as number;
    for (const hit of hitsInLine(line)) {
      const span = hit.pem ? pemBody(lines, lineStarts, i, hit.start) : { start: base + hit.start, end: base + hit.end };
      found.push({ kind: hit.kind, line: i + 1, ...span });
    }
  }
  return found;
}

/** Secrets in `text` (one finding per line at most), skipping placeholder-looking values. Lines
 * longer than 4000 characters (minified code, data) are not read. */
export function scanSecrets(text: string, maxFindings = 20): SecretFinding[] {
  const findings: SecretFinding[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && findings.length < maxFindings; i++) {
    const line = lines[i] as string;
    if (line.length > 4000 || line.length < MIN_LINE) continue; // minified or data: not a credential line
    const first = hitsInLine(line).next();
    if (!first.done) findings.push({ kind: first.value.kind, line: i + 1 });
  }
  return findings;
}

// ---------------------------------------------------------------------------------------------
// Redaction
// ---------------------------------------------------------------------------------------------

interface Span {
  start: number;
  end: number;
  kind: string;
}

/** Values shorter than this are only replaced where they were detected, not elsewhere. */
const MIN_ECHO_LENGTH = 8;

function redactOnce(text: string): { text: string; redactions: number } {
  const matches = findSecrets(text).filter((m) => m.end > m.start);
  if (matches.length === 0) return { text, redactions: 0 };
  const spans: Span[] = matches.map((m) => ({ start: m.start, end: m.end, kind: m.kind }));
  // A secret detected once is replaced wherever else it appears too (echoed, logged again).
  const echoed = new Set<string>();
  for (const m of matches) {
    const value = text.slice(m.start, m.end);
    if (value.length < MIN_ECHO_LENGTH || echoed.has(value)) continue;
    echoed.add(value); // at most text.length / 9 values: each needs its own context

    for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + 1))
      spans.push({ start: at, end: at + value.length, kind: m.kind });
  }
  // Markers of an earlier pass are never touched.
  const markers = [...text.matchAll(MARKER_RE)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  const clean = markers.length === 0 ? spans : spans.filter((s) => !markers.some((k) => s.start < k.end && k.start < s.end));
  clean.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  let redactions = 0;
  for (let i = 0; i < clean.length;) {
    const first = clean[i] as Span;
    let end = first.end;
    for (i++; i < clean.length && (clean[i] as Span).start < end; i++) end = Math.max(end, (clean[i] as Span).end);
    out += text.slice(at, first.start) + marker(first.kind);
    at = end;
    redactions++;
  }
  return { text: out + text.slice(at), redactions };
}

/**
 * `text` with each detected secret value (only the value: the key, the password inside a URL,
 * the token, a private key's body) replaced by `[REDACTED:<kind>]`, and every other occurrence of
 * a detected value of 8+ characters replaced as well. For agent output tails before they leave an
 * activity. Total and linear; idempotent (redacting the result again changes nothing).
 */
export function redactSecrets(text: string): { text: string; redactions: number } {
  let out = text;
  let redactions = 0;
  // A replacement can, in contrived text, expose a new match: repeat until nothing is left.
  for (let pass = 0; pass < 4; pass++) {
    const r = redactOnce(out);
    if (r.redactions === 0) break;
    out = r.text;
    redactions += r.redactions;
  }
  return { text: out, redactions };
}
