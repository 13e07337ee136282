import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
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
  it('fails on passwords inside URLs and sk- keys, naming kind, file and line, never the value', () => {
    const dir = repo({
      'config.env': `# database\nDATABASE_URL=postgres://app:${PW}@db.internal:5432/app\nBROKER=amqp://worker:${PW}@rabbit:5672/vh\n`,
      'client.js': `const key = '${KEY}';\n`,
    });
    const r = secretScanGate({ repoPath: dir, files: ['config.env', 'client.js'] });
    expect(r.verdict).toBe('fail');
    expect(r.findingCount).toBe(3);
    expect(r.findings?.map((f) => `${f.file}:${f.line}`)).toEqual(['config.env:2', 'config.env:3', 'client.js:1']);
    expect(r.reason).toMatch(/^3 possible credentials in changed files, first: .* in config\.env:2$/);
    expect(JSON.stringify(r)).not.toContain(PW);
    expect(JSON.stringify(r)).not.toContain(KEY);
  });

  it('passes on placeholders, environment references and files it must not follow', () => {
    const outside = repo({ 'real.env': `DATABASE_URL=postgres://app:${PW}@db:5432/app\n` });
    const dir = repo({
      'example.env': 'DATABASE_URL=postgres://user:${DB_PASSWORD}@localhost:5432/app\nREDIS_URL=redis://:changeme@cache:6379\nKEY=sk-your-key-here\n',
    });
    symlinkSync(path.join(outside, 'real.env'), path.join(dir, 'linked.env'));
    const r = secretScanGate({ repoPath: dir, files: ['example.env', 'linked.env', 'deleted.txt'] });
    expect(r).toMatchObject({ verdict: 'pass', findingCount: 0, reason: 'no credentials in 3 changed file(s)' });
  });
});
