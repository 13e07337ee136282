/**
 * Text scans used on agent output and on changed files: the done-phrases an agent uses when it
 * believes it is finished, and a secret detector with a deny filter for placeholders and
 * environment references. Pure functions; activities run them over files and logs and report the
 * findings as facts.
 */

const DONE_RE = /(all tests pass|all requirements met|implementation complete|feature complete|task complete|project complete|all tasks done|everything is working)/i;

/** The first done-phrase in the last 200 lines of `text`, or null. */
export function findDonePhrase(text: string): string | null {
  const lines = text.replace(/\r?\n$/, '').split('\n'); // a final newline ends the last line
  const m = DONE_RE.exec(lines.slice(-200).join('\n'));
  return m ? (m[1] as string).toLowerCase() : null;
}

export interface SecretFinding {
  kind: string;
  line: number;
}

const SECRET_PATTERNS: readonly { kind: string; re: RegExp }[] = [
  { kind: 'private key', re: /-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY( BLOCK)?-----/ },
  { kind: 'AWS access key id', re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { kind: 'GitHub token', re: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b/ },
  { kind: 'Slack token', re: /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/ },
  { kind: 'Anthropic API key', re: /\bsk-ant-[A-Za-z0-9_-]{20,}\b/ },
  { kind: 'OpenAI API key', re: /\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}\b/ },
  { kind: 'Stripe live key', re: /\b[rs]k_live_[A-Za-z0-9]{20,}\b/ },
  { kind: 'Google API key', re: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  {
    // NAME = "value", name: 'value', NAME=value (.env): the name may carry a prefix (DB_PASSWORD,
    // OPENAI_API_KEY); an unquoted value must look random (letters and digits).
    kind: 'credential assignment',
    re: /(?<![A-Za-z0-9])[A-Za-z0-9_]*?(?:api[_-]?key|api[_-]?secret|secret[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|password|passwd)["']?\s*[:=]\s*(?:["']([^"'\s]{12,})["']|((?=[A-Za-z0-9_/+.=-]*\d)(?=[A-Za-z0-9_/+.=-]*[A-Za-z])[A-Za-z0-9_/+.=-]{16,}))/i,
  },
];

/** Values that are obviously not real secrets: placeholders, examples and env references. */
const DENY = /(example|dummy|placeholder|changeme|change[_-]?me|your[_-]|<[^>]*>|\$\{|\$[A-Z_]+|process\.env|os\.environ|getenv|ENV\[|x{6,}|\*{4,}|test[_-]?(key|secret|token)|fake|redacted|sample)/i;

/** Secrets in `text` (one finding per line at most), skipping placeholder-looking values. */
export function scanSecrets(text: string, maxFindings = 20): SecretFinding[] {
  const findings: SecretFinding[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && findings.length < maxFindings; i++) {
    const line = lines[i] as string;
    if (line.length > 4000) continue; // minified or data: not a credential line
    for (const { kind, re } of SECRET_PATTERNS) {
      const m = re.exec(line);
      if (!m) continue;
      if (DENY.test(m[1] ?? m[2] ?? m[0]) || (kind === 'credential assignment' && DENY.test(line))) continue;
      findings.push({ kind, line: i + 1 });
      break;
    }
  }
  return findings;
}
