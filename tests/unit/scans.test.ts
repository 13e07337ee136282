/**
 * Owns the unit tests of workflows/decisions/scans.ts: the done-phrase detector (spec §2.10) and
 * the secret scanner used on changed files by the evidence gate (spec §3.2, secret axis).
 *
 * Secret-like fixtures are assembled at runtime from fragments so that no complete credential
 * literal appears in this file (secret scanners in tooling would flag it).
 */
import { describe, expect, it } from 'vitest';
import { findDonePhrase, scanSecrets, type SecretFinding } from '../../workflows/decisions/scans.js';

// ---------------------------------------------------------------------------------------------
// findDonePhrase
// ---------------------------------------------------------------------------------------------

describe('findDonePhrase', () => {
  const PHRASES = [
    'all tests pass',
    'all requirements met',
    'implementation complete',
    'feature complete',
    'task complete',
    'project complete',
    'all tasks done',
    'everything is working',
  ];

  it.each(PHRASES)('finds %j', (phrase) => {
    expect(findDonePhrase(`working...\n${phrase}\n`)).toBe(phrase);
  });

  it.each(PHRASES)('finds %j in upper case and returns it lower-cased', (phrase) => {
    expect(findDonePhrase(`Status: ${phrase.toUpperCase()}!`)).toBe(phrase);
  });

  it.each<[string, string]>([
    ['All Tests Pass.', 'all tests pass'],
    ['Great news: all tests passed (42/42)', 'all tests pass'],
    ['The implementation completed successfully', 'implementation complete'],
    ['**Task complete.**', 'task complete'],
    ['✅ Everything is working as expected', 'everything is working'],
    ['All requirements met; shipping.', 'all requirements met'],
    ['ALL TASKS DONE', 'all tasks done'],
    ['Project Complete', 'project complete'],
    ['line one\r\nFeature complete\r\nline three\r\n', 'feature complete'],
  ])('%j -> %j', (text, phrase) => {
    expect(findDonePhrase(text)).toBe(phrase);
  });

  it.each([
    '',
    'working on it',
    'tests pass',
    'all the tests pass',
    'the implementation is complete',
    'I completed the task',
    'everything works',
    'all requirements are met',
    'all tasks are done',
    'feature completion is at 40%',
    'task: complete the login page',
    'all\ntests pass',
  ])('does not find a phrase in %j', (text) => {
    expect(findDonePhrase(text)).toBeNull();
  });

  it('returns the earliest phrase in the text', () => {
    expect(findDonePhrase('Feature complete.\nAll tests pass.')).toBe('feature complete');
    expect(findDonePhrase('All tests pass. Feature complete.')).toBe('all tests pass');
  });

  const filler = (n: number): string[] => Array.from({ length: n }, (_, i) => `log line ${i}`);

  it('finds a phrase on the last line', () => {
    expect(findDonePhrase([...filler(1000), 'task complete'].join('\n'))).toBe('task complete');
  });

  it('finds a phrase on the 200th line from the end', () => {
    expect(findDonePhrase(['task complete', ...filler(199)].join('\n'))).toBe('task complete');
    expect(findDonePhrase([...filler(500), 'task complete', ...filler(199)].join('\n'))).toBe('task complete');
  });

  it('ignores a phrase on the 201st line from the end', () => {
    expect(findDonePhrase(['task complete', ...filler(200)].join('\n'))).toBeNull();
    expect(findDonePhrase([...filler(500), 'task complete', ...filler(200)].join('\n'))).toBeNull();
  });

  it('finds a recent phrase after an old one was pushed out', () => {
    expect(findDonePhrase(['feature complete', ...filler(300), 'all tasks done', ...filler(10)].join('\n'))).toBe('all tasks done');
  });
});

// ---------------------------------------------------------------------------------------------
// scanSecrets
// ---------------------------------------------------------------------------------------------

/** A deterministic mixed-case alphanumeric string of length n (no placeholder words in it). */
const ALNUM = 'Q7rZ3mNb5KxW2tYp9LcV4hJd8GsF6aE1';
const alnum = (n: number): string => Array.from({ length: n }, (_, i) => ALNUM[(i * 7 + 3) % ALNUM.length]).join('');
const UPPER16 = 'Q7RZ3MNB' + '5KXW2TYP';

// Fixtures, assembled at runtime.
const AWS_KEY = 'AKIA' + UPPER16;
const AWS_STS_KEY = 'ASIA' + UPPER16;
const GH_TOKEN = 'ghp' + '_' + alnum(36);
const GH_OAUTH = 'gho' + '_' + alnum(40);
const GH_PAT = 'github' + '_pat_' + alnum(22) + '_' + alnum(40);
const SLACK = 'xox' + 'b-' + '2718281828' + '-' + '3141592653' + '-' + alnum(24);
const ANTHROPIC = 'sk-' + 'ant-' + 'api03-' + alnum(40);
const OPENAI_PROJ = 'sk-' + 'proj-' + alnum(48);
const OPENAI_LEGACY = 'sk-' + alnum(48);
const STRIPE = 'sk' + '_live_' + alnum(24);
const GOOGLE = 'AI' + 'za' + alnum(35);
const PEM = (label: string): string => '-----BEGIN ' + label + 'PRIVATE KEY' + '-----';
const HEX20 = '9f8e7d6c' + '5b4a3928' + '1706';

describe('scanSecrets: fixtures are well-formed', () => {
  it('builds fixtures of the intended shape', () => {
    expect(UPPER16).toMatch(/^[0-9A-Z]{16}$/);
    expect(GH_TOKEN).toMatch(/^ghp_[A-Za-z0-9]{36}$/);
    expect(alnum(35)).toHaveLength(35);
    expect(alnum(64)).not.toMatch(/example|dummy|sample|fake|your|test|x{6}/i);
  });
});

describe('scanSecrets: finds credentials', () => {
  it.each<[string, string, string]>([
    ['AWS access key id', `const id = "${AWS_KEY}";`, 'AWS access key id'],
    ['AWS key id without quotes', `aws_access_key_id=${AWS_KEY}`, 'AWS access key id'],
    ['AWS STS key id', `key: ${AWS_STS_KEY}`, 'AWS access key id'],
    ['GitHub token', `token = "${GH_TOKEN}"`, 'GitHub token'],
    ['GitHub OAuth token', `Authorization: token ${GH_OAUTH}`, 'GitHub token'],
    ['GitHub fine-grained PAT', `GH=${GH_PAT}`, 'GitHub token'],
    ['Slack bot token', `const slack = '${SLACK}'`, 'Slack token'],
    ['Anthropic key', `ANTHROPIC_API_KEY=${ANTHROPIC}`, 'Anthropic API key'],
    ['OpenAI project key', `openai.api_key = "${OPENAI_PROJ}"`, 'OpenAI API key'],
    ['OpenAI legacy key', `OPENAI=${OPENAI_LEGACY}`, 'OpenAI API key'],
    ['Stripe live key', `stripe(${JSON.stringify(STRIPE)})`, 'Stripe live key'],
    ['Google API key', `maps.init({ key: "${GOOGLE}" })`, 'Google API key'],
    ['RSA private key header', PEM('RSA '), 'private key'],
    ['OpenSSH private key header', PEM('OPENSSH '), 'private key'],
    ['PKCS#8 private key header', PEM(''), 'private key'],
    ['EC private key header', `  "${PEM('EC ')}\\nMIIB..."`, 'private key'],
    ['api_key assignment', `api_key = "${HEX20}"`, 'credential assignment'],
    ['apiKey in an object literal', `const cfg = { apiKey: '${HEX20}' };`, 'credential assignment'],
    ['quoted JSON key', `{"client_secret": "${HEX20}"}`, 'credential assignment'],
    ['password assignment', `password = '${HEX20}'`, 'credential assignment'],
    ['passwd in YAML', `passwd: "${HEX20}"`, 'credential assignment'],
    ['auth-token assignment', `auth-token="${HEX20}"`, 'credential assignment'],
    ['access_token assignment', `access_token: "${HEX20}"`, 'credential assignment'],
    ['secret_key assignment', `SECRET_KEY = '${alnum(40)}'`, 'credential assignment'],
    ['API_SECRET upper case', `API_SECRET="${alnum(24)}"`, 'credential assignment'],
  ])('%s', (_label, line, kind) => {
    expect(scanSecrets(line)).toEqual<SecretFinding[]>([{ kind, line: 1 }]);
  });
});

describe('scanSecrets: skips placeholders, examples and environment references', () => {
  it.each<[string, string]>([
    ['your-...-here placeholder', 'api_key = "your-api-key-here"'],
    ['env reference (no literal)', 'password = process.env.DB_PASSWORD'],
    ['env reference quoted in a template', 'auth_token: "${AUTH_TOKEN}"'],
    ['a bare token key with an interpolation', 'token: "${TOKEN}"'],
    ['angle-bracket placeholder with spaces', 'API_KEY="<your key>"'],
    ['angle-bracket placeholder without spaces', 'API_KEY="<your-api-key>"'],
    ['the word example in the value', 'api_key = "example-key-0123456789"'],
    ['a short "example"', 'api_key = "example"'],
    ['x-ed out value', 'password = "xxxxxxxxxxxxxxxx"'],
    ['x-ed out AWS key', 'const id = "' + 'AKIA' + 'XXXXXXXXXXXXXXXX' + '";'],
    ["AWS's documented example key", 'aws_access_key_id = ' + 'AKIA' + 'IOSFODNN7' + 'EXAMPLE'],
    ['starred value', 'secret_key = "****************"'],
    ['changeme', 'password = "changeme-please-1"'],
    ['dummy', 'api_key = "dummy-value-for-ci"'],
    ['redacted', 'access_token = "REDACTED-REDACTED"'],
    ['test key marker', 'api_key = "test_key_0123456789"'],
    ['fake', 'client_secret = "fake-secret-value"'],
    ['sample', 'api_key = "sample1234567890"'],
    ['os.environ lookup', 'password = os.environ["DB_PASSWORD"]'],
    ['getenv lookup', 'api_key = os.getenv("API_KEY")'],
    ['ENV[] lookup', 'api_key = ENV["API_KEY"]'],
    ['shell variable', 'api_key="$API_KEY_FROM_VAULT"'],
    ['value too short', 'password = "hunter2"'],
    ['empty value', 'password = ""'],
    ['a prose mention', 'The password must be at least 12 characters long.'],
    ['an identifier that merely contains a keyword', 'const passwordFieldName = "passwordInputField";'],
    ['a short sk- prefix', 'const prefix = "sk-abc";'],
    ['a GitHub prefix with too few characters', 'ghp' + '_' + alnum(20)],
    ['example marker elsewhere on an assignment line', `api_key = "${HEX20}"  # example value`],
    ['ordinary code', 'export function add(a: number, b: number): number { return a + b; }'],
  ])('%s', (_label, line) => {
    expect(scanSecrets(line)).toEqual([]);
  });
});

describe('scanSecrets: lines and limits', () => {
  it('reports 1-based line numbers', () => {
    const text = ['// config', 'const region = "eu-west-1";', `const id = "${AWS_KEY}";`, '', '', '', `const gh = "${GH_TOKEN}";`].join('\n');
    expect(scanSecrets(text)).toEqual<SecretFinding[]>([
      { kind: 'AWS access key id', line: 3 },
      { kind: 'GitHub token', line: 7 },
    ]);
  });

  it('counts lines the same with CRLF line endings', () => {
    const text = ['a', `token = "${GH_TOKEN}"`, 'b', PEM('RSA ')].join('\r\n');
    expect(scanSecrets(text)).toEqual<SecretFinding[]>([
      { kind: 'GitHub token', line: 2 },
      { kind: 'private key', line: 4 },
    ]);
  });

  it('reports at most one finding per line (the first kind in pattern order)', () => {
    const line = `AWS=${AWS_KEY} GH=${GH_TOKEN} api_key = "${HEX20}"`;
    expect(scanSecrets(line)).toEqual<SecretFinding[]>([{ kind: 'AWS access key id', line: 1 }]);
    expect(scanSecrets(`${line}\n${line}`)).toEqual<SecretFinding[]>([
      { kind: 'AWS access key id', line: 1 },
      { kind: 'AWS access key id', line: 2 },
    ]);
  });

  it('a placeholder does not hide a real credential of another kind on the same line', () => {
    const line = 'AWS=' + 'AKIA' + 'XXXXXXXXXXXXXXXX' + ` GH=${GH_TOKEN}`;
    expect(scanSecrets(line)).toEqual<SecretFinding[]>([{ kind: 'GitHub token', line: 1 }]);
  });

  it('returns nothing for empty or clean text', () => {
    expect(scanSecrets('')).toEqual([]);
    expect(scanSecrets('const a = 1;\nconst b = "hello world";\n')).toEqual([]);
  });

  it.each<[number, number]>([
    [0, 0],
    [1, 1],
    [3, 3],
    [10, 10],
    [25, 10],
  ])('respects maxFindings %i (10 secret lines -> %i findings)', (max, count) => {
    const text = Array.from({ length: 10 }, (_, i) => (i % 2 ? `const k${i} = "${AWS_KEY}";` : `k${i}: ${GH_TOKEN}`)).join('\n');
    const found = scanSecrets(text, max);
    expect(found).toHaveLength(count);
    expect(found.map((f) => f.line)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
  });

  it('stops at 20 findings by default', () => {
    const text = Array.from({ length: 30 }, () => `id = "${AWS_KEY}"`).join('\n');
    const found = scanSecrets(text);
    expect(found).toHaveLength(20);
    expect(found[19]).toEqual({ kind: 'AWS access key id', line: 20 });
  });

  it('skips lines longer than 4000 characters (minified or data) but scans the others', () => {
    const long = `${'a'.repeat(4001)} ${AWS_KEY}`;
    const atLimit = `${'b'.repeat(4000 - AWS_KEY.length - 1)} ${AWS_KEY}`;
    expect(atLimit).toHaveLength(4000);
    expect(scanSecrets([long, atLimit].join('\n'))).toEqual<SecretFinding[]>([{ kind: 'AWS access key id', line: 2 }]);
  });
});

describe('regressions', () => {
  it('reads the last 200 lines when the text ends with a newline', () => {
    const text = `${['task complete', ...Array.from({ length: 199 }, (_, i) => `line ${i}`)].join('\n')}\n`;
    expect(findDonePhrase(text)).toBe('task complete');
  });

  it('finds credential assignments whose names carry a prefix, quoted or not', () => {
    const value = '9f8e7d6c' + '5b4a39281706';
    for (const line of [`DB_PASSWORD = "${value}"`, `OPENAI_API_KEY = '${value}'`, `const MY_API_KEY = '${value}';`, `API_KEY=${value}`]) {
      expect(scanSecrets(line), line).toEqual([{ kind: 'credential assignment', line: 1 }]);
    }
    // Not random-looking, or a reference: not a finding.
    for (const line of ['PASSWORD_FIELD = loginFormPasswordInput', 'api_key = getApiKeyFromVault()', 'API_KEY=${API_KEY}']) {
      expect(scanSecrets(line), line).toEqual([]);
    }
  });
});
