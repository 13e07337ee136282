/**
 * The secret-scan gate and the evidence gate's credential check share one scanner: changed files
 * (regular files only — a link's target is outside the change — text, at most 1 MiB each, 500
 * files), each read by two detectors. Findings name the kind and the line, never the value; a
 * file gives at most one finding per line and five in all.
 *
 * 1. Vigil's own `scanSecrets` (rules/scans.ts): the kinds the agent-output
 *    redaction also knows (cloud and API keys, tokens, private keys, passwords in URLs,
 *    credential assignments), with its placeholder and environment-reference allowances.
 * 2. secretlint (`@secretlint/core` with `@secretlint/secretlint-rule-preset-recommend`), for
 *    every other kind. Why this library: its rules are kept up to date by their maintainers as
 *    providers change their formats, it is the most used secret linter on npm, it runs in
 *    process on a file's text (no binary, no network), and its recommended preset is the rule set
 *    its maintainers stand behind; gitleaks' rule set is not published as a maintained npm
 *    package. The preset brings GCP service-account key files, SendGrid, Shopify, Linear and
 *    1Password keys, and honours `secretlint-disable` comments. Its rules for the kinds of (1) are
 *    turned off, so those keep exactly Vigil's detections and allowances.
 *    Three kinds no maintained rule set has are given to secretlint's own pattern rule as data
 *    (`EXTRA_PATTERNS`, each naming the detector it follows) rather than grown in (1): Azure
 *    storage account keys, a GCP `private_key_id` outside a whole key file, and a password
 *    assigned in a config file or code. Every finding of (2) passes Vigil's placeholder
 *    allowances too (`isAllowed`).
 *
 * secretlint 11 is the newest line that runs on Node 20 (Vigil's engines field); 12 and later
 * need Node 22.
 */
import { legacyNote, scopeFindings, type ChangeScope } from './change-scope.js';
import { closeSync, existsSync, lstatSync, openSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import { lintSource } from '@secretlint/core';
import { creator as patternRule } from '@secretlint/secretlint-rule-pattern';
import { creator as recommendedPreset } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintCoreConfig, SecretLintCoreResultMessage } from '@secretlint/types';
import type { GateResultInput } from '../../schemas/gates.js';
import { MAX_FINDINGS } from '../../schemas/gates.js';
import { scanSecrets } from '../../rules/scans.js';

const MAX_SCANNED_FILES = 500;
const MAX_SCANNED_BYTES = 1024 * 1024;
/** Findings per file. */
const MAX_PER_FILE = 5;

export interface SecretHit {
  file: string;
  line: number;
  kind: string;
}

// ---------------------------------------------------------------------------------------------
// secretlint

const PRESET_ID = '@secretlint/secretlint-rule-preset-recommend';
const rule = (name: string): string => `@secretlint/secretlint-rule-${name}`;

/** Preset rules whose kinds Vigil's own detector has, with allowances the redaction shares: off. */
const COVERED_BY_VIGIL = [
  'aws',
  'github',
  'slack',
  'openai',
  'anthropic',
  'npm',
  'privatekey',
  'basicauth',
  'database-connection-string',
].map(rule);

/** The kind a finding of a preset rule is reported as. */
const PRESET_KINDS: Readonly<Record<string, string>> = {
  [rule('gcp')]: 'GCP service account key',
  [rule('sendgrid')]: 'SendGrid API key',
  [rule('shopify')]: 'Shopify token',
  [rule('linear')]: 'Linear API key',
  [rule('1password')]: '1Password secret',
};

/**
 * Kinds no maintained rule set covers, as data for secretlint's pattern rule (JavaScript
 * regular expressions; secretlint adds the `u` and `g` flags and runs them on the whole text).
 * Every repetition is bounded and whitespace is `[ \t]`, so a match stays on one line and the
 * scan stays linear.
 */
export const EXTRA_PATTERNS: readonly { id: string; kind: string; pattern: string }[] = [
  {
    // As detect-secrets' AzureStorageKeyDetector and Sonar's S6338: a connection string's
    // AccountKey, 64 bytes in base64 (86 characters and `==`).
    id: 'vigil/azure-storage-account-key',
    kind: 'Azure storage account key',
    pattern: String.raw`/(?<![A-Za-z0-9])AccountKey[ \t]{0,4}=[ \t]{0,4}[A-Za-z0-9+\/]{86}==/i`,
  },
  {
    // A service account's key id (40 hex digits) in YAML, .env, HCL or a JSON fragment, as
    // trufflehog's GCP detector keys on it; whole key files are the preset's GCP rule.
    id: 'vigil/gcp-private-key-id',
    kind: 'GCP private key id',
    pattern: String.raw`/(?<![A-Za-z0-9_])(?:[A-Za-z0-9]{1,32}_)?private_key_id["']?[ \t]{0,8}[:=][ \t]{0,8}["']?[0-9a-f]{40}(?![0-9A-Za-z])/i`,
  },
  {
    // As detect-secrets' KeywordDetector: a name ending in password, passwd or pwd (`password`,
    // `DB_PASSWORD`, `spring.datasource.password`), `=`, `:`, `:=` or `=>`, and a value of 8 to
    // 128 characters with a letter and a digit: quoted without spaces, or bare up to the end of
    // the token (so `password: string` and `password = readPassword()` are code, not values).
    id: 'vigil/password-assignment',
    kind: 'password assignment',
    pattern:
      String.raw`/(?<![A-Za-z0-9])(?:[A-Za-z0-9_.-]{0,64}[._-])?(?:password|passwd|pwd)["']?[ \t]{0,16}(?::=|=>|[:=])[ \t]{0,16}(?:` +
      String.raw`"(?=[^"\s]{0,127}[0-9])(?=[^"\s]{0,127}[A-Za-z])[^"\s]{8,128}"|'(?=[^'\s]{0,127}[0-9])(?=[^'\s]{0,127}[A-Za-z])[^'\s]{8,128}'|` +
      String.raw`(?=[^\s"'\x60;,(){}[\]<>]{0,127}[0-9])(?=[^\s"'\x60;,(){}[\]<>]{0,127}[A-Za-z])[^\s"'\x60;,(){}[\]<>]{8,128}(?=[ \t\r\n;,]|$))/i`,
  },
];
const EXTRA_KINDS: ReadonlyMap<string, string> = new Map(EXTRA_PATTERNS.map((p) => [p.id, p.kind]));

const CONFIG: SecretLintCoreConfig = {
  rules: [
    { id: PRESET_ID, rule: recommendedPreset, rules: COVERED_BY_VIGIL.map((id) => ({ id, disabled: true })) },
    ...EXTRA_PATTERNS.map((p) => ({ id: p.id, rule: patternRule, options: { patterns: [{ name: p.kind, patterns: [p.pattern] }] } })),
  ],
};

/**
 * Vigil's placeholder allowances (the words of `scanSecrets`' deny filter, environment and
 * template references, values of fewer than four distinct characters): a finding whose text —
 * with the rest of its line, when it is on one line — has one is an example, not a credential.
 */
const PLACEHOLDER = new RegExp(
  String.raw`(${[
    /example|dummy|placeholder|changeme|change[_-]?me|your[_-]|<[^<>\n]{0,80}>|process\.env|os\.environ|getenv/.source,
    /ENV\[|x{6,}|\*{4,}|test[_-]?(?:key|secret|token)|fake|redacted|sample/.source,
  ].join('|')})`,
  'i',
);
const ENV_REF = /\$\{|(?<![A-Za-z0-9])\$[A-Za-z_]|\{\{/;

export function isAllowed(text: string): boolean {
  if (PLACEHOLDER.test(text) || ENV_REF.test(text)) return true;
  const value = /[:=][ \t"']*([^ \t"'\n]{8,})/.exec(text)?.[1];
  return value !== undefined && new Set(value).size < 4;
}

function kindOf(m: SecretLintCoreResultMessage): string {
  return EXTRA_KINDS.get(m.ruleId) ?? PRESET_KINDS[m.ruleId] ?? `${m.ruleId.replace(/^@secretlint\/secretlint-rule-/, '')} secret`;
}

/** What secretlint finds in `content` (one file), allowances applied. */
async function libraryHits(content: string, file: string): Promise<{ line: number; kind: string }[]> {
  const result = await lintSource({
    source: { content, filePath: file, ext: path.extname(file), contentType: 'text' },
    options: { config: CONFIG, maskSecrets: true, noPhysicFilePath: true },
  });
  const hits: { line: number; kind: string }[] = [];
  for (const m of result.messages) {
    const [start, end] = m.range;
    const matched = content.slice(start, end);
    const oneLine = !matched.includes('\n');
    const text = oneLine
      ? content.slice(content.lastIndexOf('\n', start - 1) + 1, (content.indexOf('\n', end) + 1 || content.length + 1) - 1)
      : matched;
    if (isAllowed(text)) continue;
    hits.push({ line: m.loc.start.line, kind: kindOf(m) });
  }
  return hits;
}

// ---------------------------------------------------------------------------------------------
// Files

function looksBinary(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(8192);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).includes(0);
  } finally {
    closeSync(fd);
  }
}

/** Findings in one file's text: Vigil's first on a line, then the library's; in line order. */
export async function scanTextForSecrets(content: string, file: string): Promise<{ line: number; kind: string }[]> {
  const byLine = new Map<number, string>();
  for (const f of scanSecrets(content, MAX_PER_FILE)) byLine.set(f.line, f.kind);
  for (const h of await libraryHits(content, file)) if (!byLine.has(h.line)) byLine.set(h.line, h.kind);
  return [...byLine]
    .sort(([a], [b]) => a - b)
    .slice(0, MAX_PER_FILE)
    .map(([line, kind]) => ({ line, kind }));
}

/** Credentials in the given repository-relative files, at most `max` hits. */
export async function scanFilesForSecrets(repoPath: string, files: readonly string[], max = 20): Promise<SecretHit[]> {
  const hits: SecretHit[] = [];
  for (const rel of files.slice(0, MAX_SCANNED_FILES)) {
    const file = path.join(repoPath, rel);
    if (!existsSync(file)) continue; // deleted
    const st = lstatSync(file);
    if (!st.isFile() || st.size > MAX_SCANNED_BYTES || looksBinary(file)) continue;
    for (const f of await scanTextForSecrets(readFileSync(file, 'utf8'), rel)) {
      hits.push({ file: rel, line: f.line, kind: f.kind });
      if (hits.length >= max) return hits;
    }
  }
  return hits;
}

/**
 * The gate: any credential on a line the run wrote fails it; one already in the base tree (in a
 * file the run touched, on a line it did not write) is listed as advisory.
 */
export async function secretScanGate(opts: {
  repoPath: string;
  files: readonly string[];
  scope?: ChangeScope | undefined;
}): Promise<GateResultInput> {
  const hits = await scanFilesForSecrets(opts.repoPath, opts.files, 100);
  const scoped = scopeFindings(
    hits.map((h) => ({
      gate: 'secret_scan' as const,
      severity: 'high' as const,
      file: h.file,
      line: h.line,
      message: `${h.kind}: move it to the environment or a secret store, and rotate it`,
    })),
    opts.scope,
  );
  const blocking = hits.filter((_, i) => scoped.findings[i]?.severity === 'high');
  const first = blocking[0];
  const findings = [...scoped.findings].sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'high' ? -1 : 1));
  return {
    gate: 'secret_scan',
    verdict: first ? 'fail' : 'pass',
    reason: first
      ? `${blocking.length} possible credential${blocking.length === 1 ? '' : 's'} in changed files, first: ${first.kind} in ` +
        `${first.file}:${first.line}${legacyNote(scoped.legacy)}`
      : `no credentials in ${Math.min(opts.files.length, MAX_SCANNED_FILES)} changed file(s)${legacyNote(scoped.legacy)}`,
    findings: findings.slice(0, MAX_FINDINGS),
    findingCount: hits.length,
  };
}
