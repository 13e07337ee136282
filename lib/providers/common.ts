/**
 * Owns the helpers every provider preset shares, so no preset repeats another's logic: argv
 * assembly (base argv override, advertised-flag checks, model and effort choice, read-only roles),
 * tolerant reading of JSON and JSON-lines output (never throws), usage accumulation, and the
 * building blocks of the human-readable transcript. Pure: no I/O.
 */
import type { ApiFailure, ApiFailureKind, InvocationRequest, InvocationRole, ParsedOutput, ProviderTier, ProviderUsage } from './types.js';

// ---------------------------------------------------------------------------------------------
// Building an invocation
// ---------------------------------------------------------------------------------------------

/**
 * Roles that review instead of build: run without write permissions wherever the CLI allows.
 * Checklist extraction is one: it reads the PRD and answers with a JSON array, nothing more.
 */
const READ_ONLY_ROLES: ReadonlySet<InvocationRole> = new Set<InvocationRole>([
  'council',
  'devils-advocate',
  'reviewer',
  'checklist',
  'checklist-verifier',
  'planner',
  'memory',
]);

export function isReadOnlyRole(role: InvocationRole): boolean {
  return READ_ONLY_ROLES.has(role);
}

/** The user's base argv when given (non-empty), else the default binary; then `args`. */
export function withBase(req: InvocationRequest, binary: string, args: string[]): string[] {
  const base = req.baseArgv && req.baseArgv.length > 0 ? req.baseArgv : [binary];
  return [...base, ...args];
}

/** True only when the CLI was probed and its help lists `flag`. */
export function advertised(req: InvocationRequest, flag: string): boolean {
  return req.advertisedFlags?.has(flag) ?? false;
}

export function resolveModel(req: InvocationRequest, defaults: Readonly<Record<ProviderTier, string>>): string {
  const override = req.model?.trim();
  return override ? override : defaults[req.tier];
}

export function resolveEffort(req: InvocationRequest, defaults: Readonly<Record<ProviderTier, string>>): string {
  const override = req.effort?.trim();
  return override ? override : defaults[req.tier];
}

/** Non-empty trimmed text, or null. */
export function nonEmpty(s: string | null | undefined): string | null {
  const t = s?.trim();
  return t ? t : null;
}

/** Remaining budget as the CLIs take it (2 decimals), only when known and positive. */
export function budgetArg(remaining: number | null): string | null {
  if (remaining === null || !Number.isFinite(remaining)) return null;
  const rounded = Math.floor(remaining * 100) / 100;
  return rounded > 0 ? rounded.toFixed(2) : null;
}

/**
 * A short instruction pointing at the prompt file, for CLIs that take the prompt as an argument
 * but also read stdin (gemini `-p`, opencode's message): the full prompt goes on stdin, and a
 * CLI version that ignores stdin still finds the task in the file.
 */
export function promptFileInstruction(promptPath: string): string {
  return `Carry out the task described in the file ${promptPath} (its full text is also given on standard input).`;
}

// ---------------------------------------------------------------------------------------------
// Reading output
// ---------------------------------------------------------------------------------------------

export type JsonRecord = Record<string, unknown>;

export function isRecord(v: unknown): v is JsonRecord {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** A finite, non-negative number, else null. */
export function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

/** A non-negative integer count (0 when absent or invalid). */
export function count(v: unknown): number {
  const n = num(v);
  return n === null ? 0 : Math.floor(n);
}

export function rec(v: unknown): JsonRecord | null {
  return isRecord(v) ? v : null;
}

/** Removes ANSI escape sequences and control characters other than tab and newline. */
export function cleanText(s: string): string {
  return (
    s
      // eslint-disable-next-line no-control-regex
      .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g, '')
      .replace(/\r\n?/g, '\n')
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '')
  );
}

export interface JsonLine {
  /** The line as printed (cleaned of control characters). */
  raw: string;
  /** The parsed object when the line is a JSON object, else null. */
  value: JsonRecord | null;
}

/** Splits output into lines, parsing each JSON-object line; anything else is kept as raw text. */
export function jsonLines(text: string): JsonLine[] {
  const out: JsonLine[] = [];
  for (const line of cleanText(text).split('\n')) {
    const t = line.trim();
    if (!t) continue;
    out.push({ raw: line, value: t.startsWith('{') ? parseObject(t) : null });
  }
  return out;
}

export function parseObject(s: string): JsonRecord | null {
  try {
    const v: unknown = JSON.parse(s);
    return isRecord(v) ? v : null;
  } catch {
    return null;
  }
}

/**
 * Finds one JSON object in output that may have other text around it (a banner before,
 * pretty-printed over many lines): the whole text first, then from each line that starts with
 * `{` to the last `}`. Bounded work; null when none parses.
 */
export function findJsonObject(text: string): { value: JsonRecord; start: number; end: number } | null {
  const cleaned = cleanText(text);
  const whole = parseObject(cleaned.trim());
  if (whole) return { value: whole, start: 0, end: cleaned.length };
  const last = cleaned.lastIndexOf('}');
  if (last < 0) return null;
  let tries = 0;
  for (let i = cleaned.indexOf('{'); i >= 0 && i < last && tries < 64; i = cleaned.indexOf('{', i + 1)) {
    if (i > 0 && cleaned[i - 1] !== '\n') continue;
    tries++;
    const value = parseObject(cleaned.slice(i, last + 1));
    if (value) return { value, start: i, end: last + 1 };
  }
  return null;
}

/** Sums usage pieces; `costUsd` stays null unless some piece reported one. */
export class UsageTotals {
  private costUsd: number | null = null;
  private inputTokens = 0;
  private outputTokens = 0;
  private cacheReadTokens = 0;
  private cacheWriteTokens = 0;
  private model: string | null = null;
  private seen = false;

  add(u: Partial<ProviderUsage>): void {
    this.seen = true;
    if (u.costUsd !== undefined && u.costUsd !== null) this.costUsd = (this.costUsd ?? 0) + u.costUsd;
    this.inputTokens += u.inputTokens ?? 0;
    this.outputTokens += u.outputTokens ?? 0;
    this.cacheReadTokens += u.cacheReadTokens ?? 0;
    this.cacheWriteTokens += u.cacheWriteTokens ?? 0;
    if (u.model) this.model = u.model;
  }

  setModel(model: string | null): void {
    if (model) this.model = model;
  }

  /** null when nothing was added. */
  result(fallbackModel: string | null | undefined): ProviderUsage | null {
    if (!this.seen) return null;
    return {
      costUsd: this.costUsd,
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      cacheReadTokens: this.cacheReadTokens,
      cacheWriteTokens: this.cacheWriteTokens,
      model: this.model ?? fallbackModel ?? null,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// API failures
// ---------------------------------------------------------------------------------------------

const RATE_LIMIT_WORDS = /rate.?limit|too many requests|RESOURCE_EXHAUSTED|quota exceeded|usage limit/i;
const AUTH_WORDS = new RegExp(
  [
    /authenticat|invalid[ _-]?(?:x-)?api[ _-]?key|incorrect api key|api key not valid|unauthori[sz]ed/.source,
    /PERMISSION_DENIED|UNAUTHENTICATED|not logged in|oauth token (?:has )?expired/.source,
  ].join('|'),
  'i',
);
const OVERLOAD_WORDS = /overloaded|at capacity|high demand|service unavailable|ServiceUnavailable|servers are down/i;
const SERVER_WORDS =
  /internal server error|InternalServerError|server_error|\bapi_error\b|bad gateway|gateway time-?out|server had an error/i;
/** gemini's gRPC status names, upper case only (the words are common in prose). */
const GRPC_OVERLOAD = /\bUNAVAILABLE\b/;
const GRPC_SERVER = /\bINTERNAL\b/;

/**
 * What kind of API failure an HTTP status and the CLI's message describe, or null when they
 * describe none. The status decides when there is one; otherwise the message's words.
 */
export function apiFailureKind(status: number | null, message: string): ApiFailureKind | null {
  if (status === 429) return 'rate-limit';
  if (status === 401 || status === 403) return 'auth';
  if (status === 529 || status === 503) return 'overloaded';
  if (status !== null && status >= 500 && status <= 599) return OVERLOAD_WORDS.test(message) ? 'overloaded' : 'server-error';
  if (RATE_LIMIT_WORDS.test(message)) return 'rate-limit';
  if (AUTH_WORDS.test(message)) return 'auth';
  if (OVERLOAD_WORDS.test(message) || GRPC_OVERLOAD.test(message)) return 'overloaded';
  if (SERVER_WORDS.test(message) || GRPC_SERVER.test(message)) return 'server-error';
  return null;
}

export function apiFailure(status: number | null, message: string, retryAfterSeconds: number | null = null): ApiFailure | null {
  const kind = apiFailureKind(status, message);
  return kind === null ? null : { kind, status, message: clip(message, 300), retryAfterSeconds };
}

const KIND_WORDS: Readonly<Record<ApiFailureKind, string>> = {
  'rate-limit': 'rate limit exceeded',
  auth: 'authentication_error',
  overloaded: 'overloaded',
  'server-error': 'internal server error',
};
const KIND_STATUS: Readonly<Record<ApiFailureKind, number>> = { 'rate-limit': 429, auth: 401, overloaded: 529, 'server-error': 500 };

/**
 * The failure as one line in the form every provider's health reading knows
 * (`API Error: 529 overloaded: ...`), closing the transcript so it sits in the tail.
 */
export function apiFailureLine(f: ApiFailure): string {
  const wait = f.retryAfterSeconds === null ? '' : ` (retry-after: ${f.retryAfterSeconds})`;
  return `API Error: ${f.status ?? KIND_STATUS[f.kind]} ${KIND_WORDS[f.kind]}${wait}: ${f.message}`;
}

// ---------------------------------------------------------------------------------------------
// Transcript
// ---------------------------------------------------------------------------------------------

export function clip(s: string, max: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** Keys that best say what a tool call does, most telling first. */
const TOOL_INPUT_KEYS = [
  'command',
  'cmd',
  'file_path',
  'filePath',
  'path',
  'notebook_path',
  'pattern',
  'url',
  'query',
  'description',
  'prompt',
];

/** `> tool Bash: npm test` — one line per tool call. */
/** Files recorded as read per call, at most. */
export const MAX_FILES_READ = 50;

/** The files a coding tool's call read: a read tool's path, a search tool's path (claude Read/Grep/Glob, opencode read/grep/glob, gemini read_file). */
export function toolReads(name: string, input: unknown): string[] {
  const i = input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  const tool = name.toLowerCase();
  if (!['read', 'notebookread', 'read_file', 'read_many_files', 'grep', 'glob', 'search_file_content', 'view'].includes(tool)) return [];
  const paths = [i.file_path, i.filePath, i.notebook_path, i.absolute_path, i.path, ...(Array.isArray(i.paths) ? i.paths : [])];
  return paths.filter((p): p is string => typeof p === 'string' && p.trim() !== '').map((p) => p.trim());
}

/** The files a shell command prints or searches (`cat F`, `head -n 5 F`, `sed -n 1,80p F`, `nl F`, `rg PATTERN F`), each argument that is not an option. */
export function commandReads(command: string): string[] {
  const inner = /^(?:\/bin\/)?(?:ba)?sh\s+-l?c\s+(['"])([\s\S]*)\1\s*$/.exec(command.trim())?.[2] ?? command;
  const out: string[] = [];
  for (const part of inner.split(/&&|\|\||;|\|/)) {
    const words = part.trim().split(/\s+/).filter(Boolean);
    const tool = words[0] ?? '';
    if (!['cat', 'head', 'tail', 'nl', 'less', 'sed', 'rg', 'grep'].includes(tool)) continue;
    // Options that take a value: head's and tail's counts, a search's context and pattern.
    const valued =
      tool === 'head' || tool === 'tail' ? /^-[nc]$/ : tool === 'rg' || tool === 'grep' ? /^(?:-[ABCme]|--max-count|--regexp)$/ : null;
    const rest = words.slice(1);
    const args = rest.filter((w, k) => !w.startsWith('-') && !(valued && k > 0 && valued.test(rest[k - 1] ?? '')));
    // sed's and a search's first word is its script or pattern, not a file.
    const files = tool === 'sed' || tool === 'rg' || tool === 'grep' ? args.slice(1) : args;
    for (const f of files) {
      const p = f.replace(/^['"]|['"]$/g, '');
      if (p && !/[*?<>$`]/.test(p)) out.push(p);
    }
  }
  return out;
}

/** Paths in order, each once, at most MAX_FILES_READ. */
export function uniqueReads(paths: readonly string[]): string[] {
  return [...new Set(paths)].slice(0, MAX_FILES_READ);
}

export function toolLine(name: string, input: unknown): string {
  let detail = '';
  if (Array.isArray(input)) detail = input.map(String).join(' ');
  else if (typeof input === 'string') detail = input;
  else if (isRecord(input)) {
    const key = TOOL_INPUT_KEYS.find((k) => input[k] !== undefined && input[k] !== null);
    const v = key === undefined ? undefined : input[key];
    if (Array.isArray(v)) detail = v.map(String).join(' ');
    else if (typeof v === 'string' || typeof v === 'number') detail = String(v);
    else {
      try {
        detail = JSON.stringify(input);
      } catch {
        detail = '';
      }
    }
  }
  const d = clip(detail, 200);
  return d ? `> tool ${name}: ${d}` : `> tool ${name}`;
}

/** `  < ok: first line (12 lines)` — the gist of a tool's result. */
export function toolResultLine(content: unknown, isError: boolean): string {
  const text = contentText(content);
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const first = clip(lines[0] ?? '', 160);
  const more = lines.length > 1 ? ` (${lines.length} lines)` : '';
  return `  < ${isError ? 'error' : 'ok'}${first ? `: ${first}` : ''}${more}`;
}

/** Text of a content value: a string, or an array of `{type:'text', text}` blocks. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (typeof b === 'string' ? b : isRecord(b) && typeof b.text === 'string' ? b.text : ''))
      .filter((s) => s !== '')
      .join('\n');
  }
  return '';
}

export function usageLine(u: ProviderUsage | null): string | null {
  if (!u) return null;
  const parts = [`${u.inputTokens} in`, `${u.outputTokens} out`];
  if (u.cacheReadTokens) parts.push(`${u.cacheReadTokens} cache read`);
  if (u.cacheWriteTokens) parts.push(`${u.cacheWriteTokens} cache write`);
  const cost = u.costUsd === null ? '' : ` · $${u.costUsd.toFixed(4)}`;
  return `[usage: ${parts.join(', ')}${cost}${u.model ? ` · ${u.model}` : ''}]`;
}

export function joinTranscript(lines: (string | null)[]): string {
  return lines.filter((l): l is string => l !== null).join('\n');
}

/** The result for output that is plain text (aider, opencode without --format json, command). */
export function plainTextOutput(text: string, exitCode: number, usage: ProviderUsage | null): ParsedOutput {
  const transcript = cleanText(text).replace(/\n+$/, '');
  const trimmed = transcript.trim();
  return {
    usage,
    isError: exitCode !== 0 || trimmed === '',
    apiFailure: null,
    sessionId: null,
    resultText: trimmed === '' ? null : trimmed,
    transcript,
  };
}
