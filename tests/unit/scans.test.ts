/**
 * Owns the unit tests of rules/scans.ts: the done-phrase detector (spec §2.10), the
 * secret scanner used on changed files by the evidence gate (spec §3.2, secret axis), and the
 * redaction of secret values in agent output (`findSecrets`, `redactSecrets`).
 *
 * Secret-like fixtures are assembled at runtime from fragments so that no complete credential
 * literal appears in this file (secret scanners in tooling would flag it).
 */
import { describe, expect, it } from 'vitest';
import { findDonePhrase, findSecrets, redactSecrets, scanSecrets, type SecretFinding } from '../../rules/scans.js';

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
    const text = ['// config', 'const region = "eu-west-1";', `const id = "${AWS_KEY}";`, '', '', '', `const gh = "${GH_TOKEN}";`].join(
      '\n',
    );
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

// ---------------------------------------------------------------------------------------------
// New kinds: AWS secret keys, webhooks, GitLab, Hugging Face, npm, JWT, URL credentials, sk-
// ---------------------------------------------------------------------------------------------

const ALPHA = 'QrZmNbKxWtYpLcVhJdGsFaEu';
const alpha = (n: number): string => Array.from({ length: n }, (_, i) => ALPHA[(i * 5 + 1) % ALPHA.length]).join('');

const AWS_SECRET = alnum(18) + '/' + alnum(12) + '+' + alnum(8);
const AWS_DOC_SECRET = 'wJalrXUtnFEMI' + '/K7MDENG/' + 'bPxRfiCY' + 'EXAMPLE' + 'KEY';
const SLACK_HOOK_SECRET = alnum(24);
const SLACK_HOOK = 'https://hooks.slack' + '.com/services/' + 'T1A2B3C4D' + '/' + 'B5E6F7G8H' + '/' + SLACK_HOOK_SECRET;
const DISCORD_SECRET = alnum(30) + '-' + alnum(37);
const DISCORD_HOOK = 'https://discord' + '.com/api/webhooks/' + '112233445566778899' + '/' + DISCORD_SECRET;
const GITLAB = 'glpat' + '-' + alnum(20);
const HF = 'hf' + '_' + alpha(34);
const NPM = 'npm' + '_' + alnum(36);
const JWT =
  'eyJ' +
  'hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9' +
  '.' +
  'eyJ' +
  'zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ' +
  '.' +
  alnum(20) +
  '_' +
  alnum(22);
const SK20 = 'sk-' + alnum(24);
const PW = 'Zq8' + 'mPw3xVt' + '9kLr';

describe('scanSecrets: new kinds', () => {
  it('builds fixtures of the intended shape', () => {
    expect(AWS_SECRET).toMatch(/^[A-Za-z0-9/+]{40}$/);
    expect(AWS_DOC_SECRET).toHaveLength(40);
    expect(HF).toMatch(/^hf_[A-Za-z]{34}$/);
    expect(NPM).toMatch(/^npm_[A-Za-z0-9]{36}$/);
    expect(DISCORD_SECRET).toHaveLength(68);
  });

  it.each<[string, string, string]>([
    ['aws_secret_access_key in a credentials file', `aws_secret_access_key = ${AWS_SECRET}`, 'AWS secret access key'],
    ['AWS_SECRET_ACCESS_KEY in .env, quoted', `AWS_SECRET_ACCESS_KEY="${AWS_SECRET}"`, 'AWS secret access key'],
    ['export with a prefix', `export MY_AWS_SECRET_ACCESS_KEY=${AWS_SECRET}`, 'AWS secret access key'],
    ['SecretAccessKey in JSON', `"SecretAccessKey": "${AWS_SECRET}",`, 'AWS secret access key'],
    ['Slack webhook URL', `curl -X POST ${SLACK_HOOK} -d @msg.json`, 'Slack webhook URL'],
    ['Discord webhook URL', `webhook: "${DISCORD_HOOK}"`, 'Discord webhook URL'],
    ['GitLab token', `CI_TOKEN=${GITLAB}`, 'GitLab token'],
    ['Hugging Face token', `huggingface-cli login --token ${HF}`, 'Hugging Face token'],
    ['npm token', `//registry.npmjs.org/:_authToken=${NPM}`, 'npm token'],
    ['JWT in a header', `Authorization: Bearer ${JWT}`, 'JWT'],
    ['sk- key of 24 characters', `KEY=${SK20}`, 'OpenAI API key'],
    ['postgres URL', `DATABASE_URL=postgres://app:${PW}@db.internal:5432/app`, 'URL credential'],
    ['postgresql URL', `url: "postgresql://app:${PW}@10.0.0.5/app?sslmode=require"`, 'URL credential'],
    ['mysql URL', `mysql://root:${PW}@127.0.0.1:3306/shop`, 'URL credential'],
    ['redis URL without a user', `REDIS_URL=redis://:${PW}@cache:6379/0`, 'URL credential'],
    ['rediss URL', `rediss://default:${PW}@cache.corp.net:6380`, 'URL credential'],
    ['mongodb+srv URL', `mongodb+srv://app:${PW}@cluster0.abcde.mongodb.net/db`, 'URL credential'],
    ['amqp URL', `amqp://worker:${PW}@rabbit:5672/vhost`, 'URL credential'],
    ['https URL with a token as password', `git clone https://oauth2:${PW}@gitlab.internal/team/repo.git`, 'URL credential'],
    ['a password with an unescaped @', `postgres://app:${PW}@x@db:5432/app`, 'URL credential'],
    ['jdbc prefix', `jdbc:postgresql://app:${PW}@db/app`, 'URL credential'],
  ])('%s', (_label, line, kind) => {
    expect(scanSecrets(line)).toEqual<SecretFinding[]>([{ kind, line: 1 }]);
  });

  it('finds an AWS secret next to its key id (reported as the key id, both found)', () => {
    for (const line of [`${AWS_KEY},${AWS_SECRET}`, `${AWS_KEY} ${AWS_SECRET}`, `id=${AWS_KEY}; secret=${AWS_SECRET}`]) {
      expect(scanSecrets(line), line).toEqual([{ kind: 'AWS access key id', line: 1 }]);
      expect(
        findSecrets(line).map((f) => [f.kind, line.slice(f.start, f.end)]),
        line,
      ).toEqual([
        ['AWS access key id', AWS_KEY],
        ['AWS secret access key', AWS_SECRET],
      ]);
    }
  });

  it('a GitHub token inside a URL is reported as a GitHub token (pattern order)', () => {
    expect(scanSecrets(`https://x-access-token:${GH_TOKEN}@github.com/o/r.git`)).toEqual([{ kind: 'GitHub token', line: 1 }]);
  });
});

describe('scanSecrets: placeholders of the new kinds', () => {
  it.each<[string, string]>([
    ["AWS's documented example secret", `aws_secret_access_key = ${AWS_DOC_SECRET}`],
    ['AWS secret from the environment', 'AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}'],
    ['AWS secret of one repeated character', `aws_secret_access_key = ${'A'.repeat(40)}`],
    ['a 40-character lower-case word next to a key id', `${'AKIA' + 'XXXXXXXXXXXXXXXX'} ${'abcdefghij'.repeat(4)}`],
    ["Slack's documented webhook", 'https://hooks.slack' + '.com/services/T00000000/B00000000/' + 'X'.repeat(24)],
    ['GitLab token of x', 'glpat' + '-' + 'x'.repeat(20)],
    ['GitLab prefix too short', 'glpat' + '-' + alnum(12)],
    ['Hugging Face prefix with lower-case letters only (an identifier)', 'hf' + '_' + 'abcdefghijklmnopqrstuvwxyzabcdef'],
    ['npm token of x', 'npm' + '_' + 'X'.repeat(36)],
    ['npm token of the wrong length', 'npm' + '_' + alnum(30)],
    ['a JWT-like string with a short signature', 'eyJ' + 'hbGciOiJIUzI1NiJ9' + '.' + 'eyJ' + 'zdWIiOiIxIn0' + '.' + 'abc'],
    ['sk- with 19 characters', 'sk-' + alnum(19)],
    ['sk- CSS class (lower case and dashes)', '.sk-fading-circle-container-outer { }'],
    ['URL password "password"', 'postgres://user:password@localhost:5432/db'],
    ['URL password "pass"', 'mysql://root:pass@localhost/db'],
    ['URL password "secret"', 'redis://:secret@localhost:6379'],
    ['URL password "changeme"', 'amqp://app:changeme@rabbit:5672'],
    ['URL password "xxx"', 'postgresql://app:xxx@db/app'],
    ['URL password "***"', 'postgres://app:***@db/app'],
    ['URL password ${DB_PASS}', 'postgres://app:${DB_PASS}@db/app'],
    ['URL password $DB_PASS', 'postgres://app:$DB_PASS@db/app'],
    ['URL password <password>', 'postgres://user:<password>@host:5432/db'],
    ['URL password equal to the user (a local default)', 'postgres://postgres:postgres@localhost:5432/postgres'],
    ['URL password shorter than 4 characters', 'redis://:pw@localhost'],
    ['URL with an example host', `postgres://app:${PW}@db.example.com/app`],
    ['URL with a your- user', `postgres://your-user:${PW}@db/app`],
    ['URL without a password', 'ssh://git@github.com/org/repo.git'],
    ['an e-mail address', 'mailto:someone@company.io'],
    ['a URL with @ in the path', 'https://npmjs.com/package/@scope:name@1.2.3'],
  ])('%s', (_label, line) => {
    expect(scanSecrets(line)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// findSecrets and redactSecrets
// ---------------------------------------------------------------------------------------------

describe('findSecrets', () => {
  it('returns the value alone, with absolute offsets and 1-based lines', () => {
    const text = `line one\nDATABASE_URL=postgres://app:${PW}@db/app\nGH=${GH_TOKEN}\n`;
    const found = findSecrets(text);
    expect(found.map((f) => ({ kind: f.kind, line: f.line, value: text.slice(f.start, f.end) }))).toEqual([
      { kind: 'URL credential', line: 2, value: PW },
      { kind: 'GitHub token', line: 3, value: GH_TOKEN },
    ]);
  });

  it('reads lines longer than 4000 characters, which scanSecrets skips', () => {
    const line = `${'a'.repeat(5000)} ${GH_TOKEN}`;
    expect(scanSecrets(line)).toEqual([]);
    expect(findSecrets(line)).toHaveLength(1);
  });

  it("a private key's value is its body; empty when only the header is there", () => {
    const body = [alnum(64), alnum(64), alnum(20) + '=='];
    const text = ['key:', PEM('RSA '), ...body, '-----END RSA PRIVATE KEY-----', 'done'].join('\n');
    const [f] = findSecrets(text);
    expect(f?.kind).toBe('private key');
    expect(f?.line).toBe(2);
    expect(text.slice(f?.start, f?.end)).toBe(body.join('\n'));
    const bare = findSecrets(`found ${PEM('')} in a file`);
    expect(bare).toHaveLength(1);
    expect(bare[0]?.start).toBe(bare[0]?.end);
  });
});

describe('redactSecrets', () => {
  const R = (kind: string): string => `[REDACTED:${kind}]`;

  it.each<[string, string, string]>([
    ['a token, keeping the text around it', `export GH=${GH_TOKEN} # deploy`, `export GH=${R('GitHub token')} # deploy`],
    [
      'the password inside a URL only',
      `connecting to postgres://app:${PW}@db:5432/app ...`,
      `connecting to postgres://app:${R('URL credential')}@db:5432/app ...`,
    ],
    ['the value of an assignment only', `password = "${HEX20}";`, `password = "${R('credential assignment')}";`],
    [
      'the secret segment of a Slack webhook',
      `POST ${SLACK_HOOK} ok`,
      `POST ${SLACK_HOOK.slice(0, -SLACK_HOOK_SECRET.length)}${R('Slack webhook URL')} ok`,
    ],
    ['the token of a Discord webhook', DISCORD_HOOK, DISCORD_HOOK.slice(0, -DISCORD_SECRET.length) + R('Discord webhook URL')],
    ['an AWS key pair', `${AWS_KEY},${AWS_SECRET}`, `${R('AWS access key id')},${R('AWS secret access key')}`],
    ['a JWT', `Authorization: Bearer ${JWT}\r\n`, `Authorization: Bearer ${R('JWT')}\r\n`],
    ['two secrets on one line', `a=${NPM} b=${HF}`, `a=${R('npm token')} b=${R('Hugging Face token')}`],
  ])('replaces %s', (_label, text, expected) => {
    const r = redactSecrets(text);
    expect(r.text).toBe(expected);
    expect(r.redactions).toBe((expected.match(/\[REDACTED:/g) ?? []).length);
  });

  it("replaces a private key's body and keeps its BEGIN and END lines", () => {
    const body = [alnum(64), alnum(64), alnum(20) + '=='];
    const text = ['log', PEM('OPENSSH '), ...body, '-----END OPENSSH PRIVATE KEY-----', 'after'].join('\n');
    expect(redactSecrets(text)).toEqual({
      text: ['log', PEM('OPENSSH '), R('private key'), '-----END OPENSSH PRIVATE KEY-----', 'after'].join('\n'),
      redactions: 1,
    });
  });

  it('replaces a private key body that is JSON-escaped on one line', () => {
    const text = `{"key": "${PEM('EC ')}\\n${alnum(64)}\\n${alnum(12)}==\\n-----END EC PRIVATE KEY-----\\n"}`;
    expect(redactSecrets(text).text).toBe(`{"key": "${PEM('EC ')}\\n${R('private key')}\\n-----END EC PRIVATE KEY-----\\n"}`);
  });

  it('replaces a private key body cut off by the end of the output (a tail)', () => {
    const text = [PEM('RSA '), alnum(64), alnum(30)].join('\n');
    expect(redactSecrets(text).text).toBe(`${PEM('RSA ')}\n${R('private key')}`);
  });

  it('replaces other occurrences of a detected value, even without context', () => {
    const text = `DATABASE_URL=postgres://app:${PW}@db/app\nthe password is ${PW}.`;
    expect(redactSecrets(text)).toEqual({
      text: `DATABASE_URL=postgres://app:${R('URL credential')}@db/app\nthe password is ${R('URL credential')}.`,
      redactions: 2,
    });
  });

  it('redacts lines of any length', () => {
    const text = `${'x '.repeat(3000)}${GH_TOKEN}`;
    expect(redactSecrets(text).text).toBe(`${'x '.repeat(3000)}${R('GitHub token')}`);
  });

  it.each([
    '',
    'no secrets here\nat all\r\n',
    'postgres://user:password@localhost/db',
    'api_key = "your-api-key-here"',
    `found ${PEM('')} mentioned in the docs`,
    'AKIA' + 'IOSFODNN7' + 'EXAMPLE',
  ])('leaves %j unchanged', (text) => {
    expect(redactSecrets(text)).toEqual({ text, redactions: 0 });
  });

  const SAMPLES = [
    `export GH=${GH_TOKEN} # deploy`,
    `connecting to postgres://app:${PW}@db:5432/app and again ${PW}`,
    `${AWS_KEY},${AWS_SECRET}\n${AWS_SECRET}`,
    ['log', PEM('RSA '), alnum(64), '-----END RSA PRIVATE KEY-----'].join('\n'),
    `https://x-access-token:${GH_TOKEN}@github.com/o/r.git`,
    `postgres://credential:${'credential'}x@db/app`,
    `password = "${HEX20}"\nAuthorization: Bearer ` +
      `${JWT}\n${SLACK_HOOK}\n${DISCORD_HOOK}\n${GITLAB} ${HF} ${NPM} ${SK20} ${ANTHROPIC} ${STRIPE} ${GOOGLE} ${SLACK}`,
  ];

  it.each(SAMPLES)('is idempotent on %j', (text) => {
    const once = redactSecrets(text);
    expect(once.redactions).toBeGreaterThan(0);
    expect(redactSecrets(once.text)).toEqual({ text: once.text, redactions: 0 });
    expect(findSecrets(once.text).filter((f) => f.end > f.start)).toEqual([]);
  });

  it('leaves no detected value behind', () => {
    for (const text of SAMPLES) {
      const out = redactSecrets(text).text;
      for (const f of findSecrets(text)) {
        const value = text.slice(f.start, f.end);
        if (value.length >= 8)
          expect(
            out.split(/\[REDACTED:[^\]]*\]/).some((part) => part.includes(value)),
            value,
          ).toBe(false);
      }
    }
  });
});

describe('scans are linear on adversarial input', () => {
  const N = 64 * 1024;
  const fill = (s: string): string => s.repeat(Math.ceil(N / s.length)).slice(0, N);
  const ADVERSARIAL: Record<string, string> = {
    'one long word': fill('a'),
    spaces: fill(' '),
    newlines: fill('\n'),
    CRLF: fill('\r\n'),
    'underscore runs': fill('_a'),
    'password=password=': fill('password='),
    'unterminated quotes': fill('api_key="'),
    'sk- prefixes': fill('sk-'),
    'sk- runs': fill('sk-A1'),
    'eyJ- runs': fill('eyJ-'),
    'JWT-like segments': fill('eyJabcdefgh1.'),
    'scheme separators': fill('a://'),
    'user:user:': `postgres://u:${fill('u:')}`,
    'URL prefixes': fill('postgres://u:p'),
    'at signs': `postgres://u:${fill('@')}`,
    'xoxb- runs': fill('xoxb-'),
    'PEM headers': fill('-----BEGIN PRIVATE KEY-----\n'),
    'PEM headers on one line': fill('-----BEGIN PRIVATE KEY-----'),
    'PEM escaped newlines': `${PEM('')}${fill('\\n')}`,
    'angle brackets': fill('<'),
    'AKIA ids': fill(`${AWS_KEY} `),
    'AWS secret names': fill('aws_secret_access_key='),
    'Slack hook prefixes': fill('hooks.slack.com/services/TAAAAAA/BAAAAAA/'),
    'many secrets': fill(`token ${GH_TOKEN} `),
    'many short assignment lines': fill(`password = "${HEX20}"\n`),
    'dollar signs': fill('$'),
    'lone surrogates and NULs': fill('\ud800a\u0000\udfff'),
    'thousands of distinct URL passwords': Array.from({ length: 4000 }, (_, i) => `ab://:Zq8mPw${i.toString(36).padStart(3, '0')}@h `)
      .join('')
      .slice(0, N),
    'thousands of distinct keys': Array.from({ length: 2500 }, (_, i) => ` sk-${alnum(24)}${i}`)
      .join('')
      .slice(0, N),
  };

  it.each(Object.keys(ADVERSARIAL))('%s (64 KiB): scan, find and redact in well under 2 s', (name) => {
    const text = ADVERSARIAL[name] as string;
    const started = Date.now();
    scanSecrets(text);
    findSecrets(text);
    const r = redactSecrets(text);
    findDonePhrase(text);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(redactSecrets(r.text).text).toBe(r.text);
  });
});
