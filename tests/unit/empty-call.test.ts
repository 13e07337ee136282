/**
 * An empty call of a `command` agent counts as a failed call (spec §1.8, `provider_empty_output`;
 * rules/empty-call.ts): the rule alone, then the iteration's activity (activities/iteration.ts)
 * with a real agent script in the sandbox and a real git repository, where the inspection after
 * the call says whether the tree changed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../activities/iteration.js';
import { workingTreeHash } from '../../activities/git.js';
import { EMPTY_CALL_EXIT, emptyCall, signalledOf, treeChangedOf, type EmptyCallFacts } from '../../rules/empty-call.js';
import type { AgentResult, RunAgentInput } from '../../schemas/activities.js';
import { makeRepo } from '../support/harness.js';
import { patient } from '../support/patience.js';

const facts = (over: Partial<EmptyCallFacts> = {}): EmptyCallFacts => ({
  provider: 'command',
  role: 'iteration',
  exitCode: 0,
  timedOut: false,
  outputBytes: 0,
  tail: '',
  treeChanged: false,
  claimed: false,
  signalled: false,
  ...over,
});

describe('the empty-call rule (seed: provider_empty_output)', () => {
  it('an exit 0 with no output, no change and no claim is a failed call, and says what to check', () => {
    expect(emptyCall(facts())).toMatch(/no output and no change to the repository .*provider_empty_output.*reads the prompt on stdin/);
  });

  it('adversarial: blank lines printed to look busy are still no output', () => {
    expect(emptyCall(facts({ outputBytes: 7, tail: '\n \n\t\n' }))).not.toBeNull();
  });

  it('honest controls: output, a change, a claim, a failure, a timeout or another role is not an empty call', () => {
    expect(emptyCall(facts({ outputBytes: 30, tail: 'looked; nothing to change\n' }))).toBeNull();
    expect(emptyCall(facts({ treeChanged: true }))).toBeNull();
    expect(emptyCall(facts({ claimed: true }))).toBeNull();
    expect(emptyCall(facts({ signalled: true }))).toBeNull();
    expect(emptyCall(facts({ exitCode: 2 }))).toBeNull();
    expect(emptyCall(facts({ timedOut: true }))).toBeNull();
    expect(emptyCall(facts({ role: 'council' }))).toBeNull();
    // A preset CLI's output is its preset's to read.
    expect(emptyCall(facts({ provider: 'claude' }))).toBeNull();
    // Whether the tree changed cannot be told: never counted empty.
    expect(emptyCall(facts({ treeChanged: null }))).toBeNull();
    // A long output whose tail is blank printed something before it.
    expect(emptyCall(facts({ outputBytes: 50_000, tail: '\n\n' }))).toBeNull();
  });

  it('a signal file or a note the agent left is something it said', () => {
    const none = { humanReview: null, driftReports: 0, contextClearRequested: false, summary: null, continuity: null, continuityRef: null };
    expect(signalledOf(null)).toBe(false);
    expect(signalledOf(none)).toBe(false);
    expect(signalledOf({ ...none, humanReview: { reason: 'r' } })).toBe(true);
    expect(signalledOf({ ...none, driftReports: 1 })).toBe(true);
    expect(signalledOf({ ...none, summary: 'did x' })).toBe(true);
    expect(signalledOf({ ...none, continuityRef: { sha256: 'abc', chars: 3 } })).toBe(true);
  });

  it('reads the change against the previous tree, else against the run start', () => {
    expect(treeChangedOf('t1', 'sha', { treeHash: 't1', changedCount: 3 })).toBe(false);
    expect(treeChangedOf('t1', 'sha', { treeHash: 't2', changedCount: 0 })).toBe(true);
    expect(treeChangedOf(null, 'sha', { treeHash: 't', changedCount: 0 })).toBe(false);
    expect(treeChangedOf(null, 'sha', { treeHash: 't', changedCount: 1 })).toBe(true);
    expect(treeChangedOf(null, null, { treeHash: 't', changedCount: 0 })).toBeNull();
    expect(treeChangedOf('t', 'sha', null)).toBeNull();
  });
});

/** What the agent does is chosen by MODE; it reads its prompt as every agent must. */
const AGENT = `#!/bin/sh
cat > /dev/null
case "$MODE" in
  silent) ;;
  blank) printf '\\n   \\n\\t\\n' ;;
  hidden) mkdir -p .vigil/notes && echo busy > .vigil/notes/busy.txt ;;
  write) echo 'x' > work.txt ;;
  say) echo 'looked around; nothing needs changing' ;;
  claim) mkdir -p .vigil/signals && echo '{}' > .vigil/signals/COMPLETION_REQUESTED ;;
  ask) mkdir -p .vigil/signals && echo '{"reason":"which database?"}' > .vigil/signals/HUMAN_REVIEW_NEEDED ;;
esac
exit 0
`;

const savedHome = process.env.VIGIL_HOME;
let scripts: string;
let agentPath: string;
const repos: string[] = [];
beforeAll(() => {
  scripts = mkdtempSync(path.join(os.tmpdir(), 'vigil-empty-call-'));
  // Vigil's private copies (activities/last-error.ts) go to a home of this file's own.
  process.env.VIGIL_HOME = path.join(scripts, 'home');
  agentPath = path.join(scripts, 'agent.sh');
  writeFileSync(agentPath, AGENT, { mode: 0o755 });
});
afterAll(() => {
  rmSync(scripts, { recursive: true, force: true });
  if (savedHome === undefined) delete process.env.VIGIL_HOME;
  else process.env.VIGIL_HOME = savedHome;
});
afterEach(() => {
  for (const r of repos.splice(0)) rmSync(r, { recursive: true, force: true });
});

async function iterate(mode: string): Promise<AgentResult> {
  const repo = makeRepo();
  repos.push(repo);
  const input: RunAgentInput = {
    runId: 'run-empty-call',
    repoPath: repo,
    argv: [agentPath],
    prompt: 'Do the work.\n',
    role: 'iteration',
    iteration: 2,
    phase: 'ACT',
    tier: 'development',
    timeoutSeconds: 30,
    completionPromise: '',
    extraEnv: { MODE: mode },
    inspect: { runStartSha: null, previousTree: await workingTreeHash(repo), signals: true },
  };
  const env = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
  return (await env.run(runAgent, input)) as AgentResult;
}

describe('the iteration activity with a command agent', () => {
  it(
    'adversarial: a silent exit 0 that changed nothing, or only printed blank lines, or only wrote under .vigil/, fails',
    async () => {
      for (const mode of ['silent', 'blank', 'hidden']) {
        const r = await iterate(mode);
        expect(r.exitCode, mode).toBe(EMPTY_CALL_EXIT);
        expect(r.tail, mode).toMatch(/an empty call, provider_empty_output/);
      }
    },
    patient(60_000),
  );

  it(
    'honest controls: a silent agent that wrote a file, said something, claimed or asked for a person: each exit 0',
    async () => {
      for (const mode of ['write', 'say', 'claim', 'ask']) {
        const r = await iterate(mode);
        expect(r.exitCode, mode).toBe(0);
        expect(r.tail, mode).toBe('');
      }
    },
    patient(60_000),
  );
});
