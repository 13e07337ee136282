/**
 * A fake `gh`, the one part of a pull request's life that talks to GitHub (which cannot run here):
 * put first on the PATH of a worker running in the test's process, it records every call's argv
 * as a JSON line, answers as an installed, logged-in gh, and remembers the pull requests it
 * "opened" so that `gh pr list --head B` finds them, as GitHub would; `gh pr comment` answers as
 * posted (its --body-file is the run's own file, read by the test). `gh api graphql` (the poller's
 * one call, activities/pr-poll.ts) answers what GitHub would say of the pull request: the test
 * writes it as `{"data": {"resource": …}}` into the repository's `.git/fake-github-pr.json`
 * (`setFakePullRequest`); without that file it fails as gh does when GitHub cannot be reached.
 * Pushes are real: they go to the test's bare remote.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function fakeGh(url = 'https://github.com/o/r/pull/7'): { ghDir: string; ghCallsIn: (repo: string) => string[][] } {
  const ghDir = mkdtempSync(path.join(os.tmpdir(), 'vigil-fake-gh-'));
  const ghCalls = path.join(ghDir, 'calls.jsonl');
  const ghOpened = path.join(ghDir, 'opened');
  writeFileSync(
    path.join(ghDir, 'gh'),
    `#!/usr/bin/env node
const fs = require('node:fs');
const a = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(ghCalls)}, JSON.stringify({ cwd: process.cwd(), argv: a }) + '\\n');
const opened = () => (fs.existsSync(${JSON.stringify(ghOpened)}) ? fs.readFileSync(${JSON.stringify(ghOpened)}, 'utf8').split('\\n') : []);
const head = a[a.indexOf('--head') + 1];
if (a[0] === '--version') { console.log('gh version 2.0.0-fake'); process.exit(0); }
if (a[0] === 'auth') { console.log('Logged in to github.com'); process.exit(0); }
if (a[0] === 'pr' && a[1] === 'list') { if (opened().includes(head)) console.log(${JSON.stringify(url)}); process.exit(0); }
if (a[0] === 'pr' && a[1] === 'create') { fs.appendFileSync(${JSON.stringify(ghOpened)}, head + '\\n'); console.log(${JSON.stringify(url)}); process.exit(0); }
if (a[0] === 'pr' && a[1] === 'comment') { process.exit(0); }
if (a[0] === 'api' && a[1] === 'graphql') {
  const answer = require('node:path').join(process.cwd(), '.git', 'fake-github-pr.json');
  if (!fs.existsSync(answer)) { console.error('error connecting to api.github.com'); process.exit(1); }
  process.stdout.write(fs.readFileSync(answer, 'utf8'));
  process.exit(0);
}
process.exit(2);
`,
  );
  chmodSync(path.join(ghDir, 'gh'), 0o755);
  const ghCallsIn = (repo: string): string[][] =>
    existsSync(ghCalls)
      ? readFileSync(ghCalls, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { cwd: string; argv: string[] })
          .filter((c) => c.cwd === repo)
          .map((c) => c.argv)
      : [];
  return { ghDir, ghCallsIn };
}

/** What the fake gh's `gh api graphql` answers in `repo`: the pull request as GitHub's GraphQL API gives it (`resource`). */
export function setFakePullRequest(repo: string, resource: Record<string, unknown>): void {
  // Whole or not at all: a poll never reads it half-written.
  const file = path.join(repo, '.git', 'fake-github-pr.json');
  writeFileSync(`${file}.tmp`, JSON.stringify({ data: { resource } }));
  renameSync(`${file}.tmp`, file);
}
