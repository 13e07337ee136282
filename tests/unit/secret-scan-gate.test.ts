import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { secretScanGate } from '../../activities/gates/secret-scan.js';

const repo = (files: Record<string, string>): string => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-secret-gate-'));
  for (const [f, c] of Object.entries(files)) writeFileSync(path.join(dir, f), c);
  return dir;
};
// Built at run time so the source itself holds no credential-looking literal.
const PW = ['Zq7', 'vR2', 'pL9', 'xW4'].join('');
const KEY = `sk-${'Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7'}`;

describe('secret scan gate', () => {
  it('fails on passwords inside URLs and sk- keys, naming kind, file and line, never the value', async () => {
    const dir = repo({
      'config.env': `# database\nDATABASE_URL=postgres://app:${PW}@db.internal:5432/app\nBROKER=amqp://worker:${PW}@rabbit:5672/vh\n`,
      'client.js': `const key = '${KEY}';\n`,
    });
    const r = await secretScanGate({ repoPath: dir, files: ['config.env', 'client.js'] });
    expect(r.verdict).toBe('fail');
    expect(r.findingCount).toBe(3);
    expect(r.findings?.map((f) => `${f.file}:${f.line}`)).toEqual(['config.env:2', 'config.env:3', 'client.js:1']);
    expect(r.reason).toMatch(/^3 possible credentials in changed files, first: .* in config\.env:2$/);
    expect(JSON.stringify(r)).not.toContain(PW);
    expect(JSON.stringify(r)).not.toContain(KEY);
  });

  it('passes on placeholders, environment references and files it must not follow', async () => {
    const outside = repo({ 'real.env': `DATABASE_URL=postgres://app:${PW}@db:5432/app\n` });
    const dir = repo({
      'example.env':
        'DATABASE_URL=postgres://user:${DB_PASSWORD}@localhost:5432/app\nREDIS_URL=redis://:changeme@cache:6379\nKEY=sk-your-key-here\n',
    });
    symlinkSync(path.join(outside, 'real.env'), path.join(dir, 'linked.env'));
    const r = await secretScanGate({ repoPath: dir, files: ['example.env', 'linked.env', 'deleted.txt'] });
    expect(r).toMatchObject({ verdict: 'pass', findingCount: 0, reason: 'no credentials in 3 changed file(s)' });
  });
});

// Realistic fake credentials of the kinds the gate reads with secretlint's rule set, built at run
// time (this file holds no credential-looking literal).
const HEX40 = ['3f9c2a7e51b84d06', 'a1e8c4f2b7d93e5a', '0c6f1b28'].join('');
const PEM = ['-----BEGIN PRIVATE KEY-----', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7', '-----END PRIVATE KEY-----', ''].join(
  '\n',
);
const SERVICE_ACCOUNT = JSON.stringify(
  {
    type: 'service_account',
    project_id: 'billing-prod-4821',
    private_key_id: HEX40,
    private_key: PEM,
    client_email: 'deployer@billing-prod-4821.iam.gserviceaccount.com',
    client_id: '108234567890123456789',
  },
  null,
  2,
);
// 64 bytes in base64: 86 characters and `==`.
const ACCOUNT_KEY = `${['q8Vt3Jk2Lm9Np4Rs7Uw0Xy5Za1Bc6De2Fg8Hi3Jk7Lm1Np5', 'Rs9Uw4Xy0Za6Bc2De8Fg3Hi7Jk1Lm5Np9Rs3+c/'].join('')}==`;
const SENDGRID = ['SG', 'ngeVfQFYQlKU0ufo8x5d1A', 'TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKcx1s5cr'].join('.');

it('fixtures are well-formed', () => {
  expect(ACCOUNT_KEY).toMatch(/^[A-Za-z0-9+/]{86}==$/);
  expect(SENDGRID).toMatch(/^SG\.[\w-]{22}\.[\w-]{43}$/);
  expect(HEX40).toMatch(/^[0-9a-f]{40}$/);
});

const lines = (r: Awaited<ReturnType<typeof secretScanGate>>): string[] =>
  (r.findings ?? []).map((f) => `${f.file}:${f.line} ${f.message.split(':')[0]}`);

describe('secret scan gate: kinds from the maintained rule set', () => {
  it.each([
    [
      'a GCP service account key file (private_key_id and private_key)',
      'deploy/service-account.json',
      SERVICE_ACCOUNT,
      [
        'deploy/service-account.json:1 GCP service account key',
        'deploy/service-account.json:4 GCP private key id',
        'deploy/service-account.json:5 private key',
      ],
    ],
    [
      'a GCP private_key_id in YAML',
      'values.yaml',
      `gcp:\n  project: billing-prod-4821\n  private_key_id: "${HEX40}"\n`,
      ['values.yaml:3 GCP private key id'],
    ],
    ['a GCP private key id in .env', '.env', `GOOGLE_PRIVATE_KEY_ID=${HEX40}\n`, ['.env:1 GCP private key id']],
    [
      'a password= in a properties file',
      'application.properties',
      'spring.datasource.username=billing\nspring.datasource.password=Tr0ub4dor&3xQ!\n',
      ['application.properties:2 password assignment'],
    ],
    [
      'a password = in an ini file',
      'settings.ini',
      '[db]\nhost = db.internal\npassword = hunter2-Wq9\n',
      ['settings.ini:3 password assignment'],
    ],
    [
      'a quoted password in code',
      'db.ts',
      "export const db = { user: 'billing', password: 'Wq9hunter2' };\n",
      ['db.ts:1 password assignment'],
    ],
    [
      'an Azure storage AccountKey in a connection string',
      'azure.env',
      `AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=billingprod;AccountKey=${ACCOUNT_KEY};EndpointSuffix=core.windows.net\n`,
      ['azure.env:1 Azure storage account key'],
    ],
    [
      'a SendGrid key',
      'mail.js',
      `const sendgrid = require('@sendgrid/mail');\nsendgrid.setApiKey('${SENDGRID}');\n`,
      ['mail.js:2 SendGrid API key'],
    ],
  ])('fails on %s, naming kind, file and line, never the value', async (_what, file, content, expected) => {
    const dir = repo({});
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
    const r = await secretScanGate({ repoPath: dir, files: [file] });
    expect(r.verdict).toBe('fail');
    expect(lines(r)).toEqual(expected);
    for (const value of [HEX40, ACCOUNT_KEY, SENDGRID, 'Tr0ub4dor', 'hunter2-Wq9', 'Wq9hunter2'])
      expect(JSON.stringify(r)).not.toContain(value);
  });

  it('keeps the kinds it found before, first on their line', async () => {
    const aws = ['AKIA', 'Z7Q4XK2M9VPLT3RB'].join('');
    const dir = repo({ 'old.env': `AWS_ACCESS_KEY_ID=${aws}\nAPI_URL=https://deploy:${PW}@api.internal/v1\nOPENAI_API_KEY=${KEY}\n` });
    const r = await secretScanGate({ repoPath: dir, files: ['old.env'] });
    expect(lines(r)).toEqual(['old.env:1 AWS access key id', 'old.env:2 URL credential', 'old.env:3 OpenAI API key']);
  });

  it.each([
    ['a password placeholder', 'password=changeme123'],
    ['a password from the environment', 'spring.datasource.password=${DB_PASSWORD_2024}'],
    ['a password template', 'password: "{{ vault_db_password_v2 }}"'],
    ['a password in an example file', 'password = example-Passw0rd'],
    ['code that reads a password', 'const password = readPassword(2);'],
    ['a type annotation', 'password: string;'],
    ['a short password', 'password=ab1'],
    ['an AccountKey placeholder', `AccountKey=${'x'.repeat(86)}==`],
    ['a key id placeholder', `private_key_id: "${'0'.repeat(40)}"`],
    ['a disabled line', `password=Tr0ub4dor3xQ // secretlint-disable-line`],
  ])('passes on %s', async (_what, line) => {
    const dir = repo({ 'conf.txt': `${line}\n` });
    const r = await secretScanGate({ repoPath: dir, files: ['conf.txt'] });
    expect(r, line).toMatchObject({ verdict: 'pass', findingCount: 0 });
  });
});

describe('secret scan gate: untrusted text', () => {
  it('reads a 1 MiB file of near-matches quickly (every pattern is linear)', async () => {
    const MiB = 1024 * 1024;
    const fill = (unit: string): string => unit.repeat(Math.ceil(MiB / unit.length)).slice(0, MiB);
    for (const content of [fill('password='), fill('SG.a'), `AccountKey=${fill('Ab1+')}`, fill('private_key_id: '), fill('"password":"')]) {
      const started = Date.now();
      const dir = repo({ 'big.txt': content });
      expect((await secretScanGate({ repoPath: dir, files: ['big.txt'] })).verdict).toBe('pass');
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });
});
