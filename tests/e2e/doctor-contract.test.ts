/**
 * `vigil doctor --agent-command CMD` drives every role of the agent contract once (the planner's
 * task list included), as a user
 * would run it: a command that answers by VIGIL_ANSWER passes; one that gives a reviewer no
 * VERDICT line and a council member a lowercase vote is told exactly which roles are wrong; the
 * demo's own scripted agent, which plays no optional role (planner, memory, acceptance), passes with a ⚠ each.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DoctorContractJsonSchema } from '../../schemas/cli-output.js';
import { assertBuilt, ROOT } from '../support/harness.js';
import { cleanEnv, runVigil, show } from './cli-helpers.js';

function agent(name: string, body: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-contract-agent-'));
  const file = path.join(dir, name);
  writeFileSync(file, `#!/usr/bin/env bash\ncat > /dev/null\ncase "$VIGIL_ANSWER" in\n${body}\nesac\n`);
  chmodSync(file, 0o755);
  return file;
}

const GOOD = agent(
  'good-agent',
  [
    '  work) echo "wrote src/greet.js" ;;',
    '  vote) printf "VOTE: APPROVE\\nREASON: greet works\\n" ;;',
    '  verdict) printf "Read the diff.\\nVERDICT: PASS\\n" ;;',
    `  checklist) echo '[{"id": "REQ-1", "title": "greet exists", "priority": "critical", "verify": "call it"}]' ;;`,
    '  items) grep -o "REQ-[0-9]*" "$VIGIL_PROMPT_FILE" | sort -u | while read -r id; do echo "ITEM $id: PASS - checked"; done ;;',
    '  tasks) ids=$(grep -o "^- REQ-[0-9]*" "$VIGIL_PROMPT_FILE" | cut -c3- | sort -u | sed \'s/.*/"&"/\' | paste -sd,); ' +
      'printf \'```json\\n[{"id": "all", "title": "everything", "items": [%s]}]\\n```\\n\' "$ids" ;;',
    `  lessons) echo '{"lessons": [{"id": 1, "lesson": "greet(name) must return Hello, <name>!"}], "merges": [{"keep": 1, "merge": [2]}]}' ;;`,
    `  files) printf 'import { test } from "node:test";\\nimport assert from "node:assert/strict";\\nimport { greet } from ` +
      `"./src/greet.js";\\ntest("greets Ada", () => assert.equal(greet("Ada"), "Hello, Ada!"));\\n' > ` +
      `"$VIGIL_ACCEPTANCE_DIR/greet.test.mjs" ;;`,
  ].join('\n'),
);

const WRONG = agent(
  'wrong-agent',
  [
    '  work) echo "wrote src/greet.js" ;;',
    '  vote) printf "VOTE: approve\\n" ;;',
    '  verdict) echo "Looks good to me." ;;',
    `  checklist) echo '[{"id": "REQ-1", "title": "greet exists", "priority": "critical", "verify": "call it"}]' ;;`,
    '  items) grep -o "REQ-[0-9]*" "$VIGIL_PROMPT_FILE" | sort -u | while read -r id; do echo "ITEM $id: PASS - checked"; done ;;',
    '  tasks) ids=$(grep -o "^- REQ-[0-9]*" "$VIGIL_PROMPT_FILE" | cut -c3- | sort -u | sed \'s/.*/"&"/\' | paste -sd,); ' +
      'printf \'```json\\n[{"id": "all", "title": "everything", "items": [%s]}]\\n```\\n\' "$ids" ;;',
    `  lessons) echo '{"lessons": [{"id": 1, "lesson": "greet(name) must return Hello, <name>!"}], "merges": [{"keep": 1, "merge": [2]}]}' ;;`,
    `  files) printf 'import { test } from "node:test";\\nimport assert from "node:assert/strict";\\nimport { greet } from ` +
      `"./src/greet.js";\\ntest("greets Ada", () => assert.equal(greet("Ada"), "Hello, Ada!"));\\n' > ` +
      `"$VIGIL_ACCEPTANCE_DIR/greet.test.mjs" ;;`,
  ].join('\n'),
);

describe('vigil doctor --agent-command', () => {
  it('passes a command that answers every role as the contract asks', async () => {
    assertBuilt();
    const r = await runVigil(['doctor', '--agent-command', GOOD], cleanEnv({}), { timeoutMs: 60_000 });
    expect(r.code, show(r)).toBe(0);
    for (const role of [
      'iteration',
      'checklist',
      'checklist-verifier',
      'planner',
      'memory',
      'acceptance',
      'reviewer',
      'devils-advocate (code review)',
      'council',
      'devils-advocate (council)',
    ]) {
      expect(r.stdout, role).toMatch(new RegExp(`✓ ${role.replace(/[()]/g, '\\$&')}: VIGIL_ANSWER=`));
    }
    expect(r.stdout).toContain('every role answers as the agent contract asks');
  });

  it('names each role whose answer lacks its line, with the fix, and exits 1', async () => {
    const r = await runVigil(['doctor', '--agent-command', WRONG, '--json'], cleanEnv({}), { timeoutMs: 60_000 });
    expect(r.code, show(r)).toBe(1);
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: { role: string; ok: boolean; detail: string; fix: string | null }[] };
    expect(report.ok).toBe(false);
    const wrong = report.checks.filter((c) => !c.ok).map((c) => c.role);
    expect(wrong).toEqual(['reviewer', 'devils-advocate (code review)', 'council', 'devils-advocate (council)']);
    const reviewer = report.checks.find((c) => c.role === 'reviewer');
    expect(reviewer?.detail).toContain('no `VERDICT: PASS` or `VERDICT: FAIL` line');
    expect(reviewer?.fix).toContain('VIGIL_ROLE=reviewer and VIGIL_ANSWER=verdict');
  });

  it("passes the demo's own scenario, whose agent plays no planner or memory role: those are ⚠ optional, exit 0", async () => {
    const demo = `"${path.join(ROOT, 'examples/agents/scripted-agent/scripted-agent')}" --scenario "${path.join(ROOT, 'examples/demo/scenario.json')}"`;
    const r = await runVigil(['doctor', '--agent-command', demo], cleanEnv({}), { timeoutMs: 90_000 });
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toMatch(
      /⚠ planner: .*\(optional: asked only with parallelStreams above 1 and taskPlanner=agent; a wrong answer falls back/,
    );
    expect(r.stdout).toMatch(/⚠ memory: .*\(optional: asked after a run that ends with the event store on \(memoryJudge\)/);
    expect(r.stdout).toMatch(/⚠ acceptance: .*holds no test file.*\(optional: asked only with acceptanceFromPrd/);
    for (const role of ['iteration', 'checklist', 'checklist-verifier', 'reviewer', 'council'])
      expect(r.stdout, role).toContain(`✓ ${role}: `);
    expect(r.stdout).not.toContain('✗');
    expect(r.stdout).toContain(
      'every required role answers as the agent contract asks; 3 optional role(s) answer wrongly (⚠ above: the run goes on without them)',
    );
    const js = await runVigil(['doctor', '--agent-command', demo, '--json'], cleanEnv({}), { timeoutMs: 90_000 });
    expect(js.code, show(js)).toBe(0);
    const report = DoctorContractJsonSchema.parse(JSON.parse(js.stdout));
    expect(report.ok).toBe(true);
    expect(report.checks.filter((c) => !c.ok).map((c) => [c.role, c.required])).toEqual([
      ['planner', false],
      ['memory', false],
      ['acceptance', false],
    ]);
  });

  it('refuses an empty command as a usage error', async () => {
    const r = await runVigil(['doctor', '--agent-command', '  '], cleanEnv({}), { timeoutMs: 30_000 });
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain('--agent-command is empty');
  });
});
