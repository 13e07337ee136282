/**
 * Owns the unit tests of rules/prompt.ts: what buildPrompt puts in an iteration's
 * prompt (PRD reference, iteration N of M, phase guidance, retry note, human directives with who
 * and when, previous findings, completion instruction), the default template's sections with the
 * run memory (pinned order) and its size bound, and the checking of a person's template.
 */
import { describe, expect, it } from 'vitest';
import { PHASES, type Directive, type Phase } from '../../schemas/run.js';
import { describeRefusal, judgeCompletion } from '../../rules/completion.js';
import { phaseFor, tierFor } from '../../rules/phase.js';
import {
  buildPrompt,
  DEFAULT_PROMPT_TEMPLATE,
  MAX_TEMPLATE_BYTES,
  parsePromptTemplate,
  SECTION_PLACEHOLDERS,
  TEST_HONESTY,
  type PromptInput,
} from '../../rules/prompt.js';
import { MEMORY_LIMITS } from '../../schemas/memory.js';

const PROMISE = 'COMPLETION PROMISE FULFILLED';
const SIGNAL = '.vigil/signals/COMPLETION_REQUESTED';

function input(over: Partial<PromptInput> = {}): PromptInput {
  return {
    prdPath: '/home/dev/projects/todo-app/docs/PRD.md',
    prdTitle: 'Todo app with tags',
    iteration: 1,
    maxIterations: 25,
    phase: phaseFor(1),
    tier: tierFor(1, { tier: 'development', legacyTierRotation: false }),
    retry: 0,
    directives: [],
    findings: null,
    completionPromise: PROMISE,
    ...over,
  };
}

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const lines = (s: string): string[] => s.split('\n');

describe('buildPrompt: first iteration', () => {
  const prompt = buildPrompt(input());

  it('references the PRD by path and quotes its title', () => {
    expect(prompt).toContain(
      'Requirements (PRD): /home/dev/projects/todo-app/docs/PRD.md — "Todo app with tags". Read it before you start.',
    );
  });

  it('states the iteration, the cap, the phase and the tier', () => {
    expect(prompt).toContain('Iteration 1 of at most 25. Phase ACT, tier development.');
  });

  it('gives the ACT guidance and only that', () => {
    expect(prompt).toContain('ACT: implement the next step');
    expect(prompt).not.toContain('REASON:');
    expect(prompt).not.toContain('REFLECT:');
    expect(prompt).not.toContain('VERIFY:');
  });

  it('has no retry note, directive block or findings', () => {
    expect(prompt).not.toMatch(/previous .*failed/);
    expect(prompt).not.toContain('HUMAN DIRECTIVE');
    expect(prompt).not.toContain('Findings from the previous iteration');
  });

  it('ends with the completion instruction: promise line, signal file, never push', () => {
    expect(prompt).toContain(`printing the exact line "${PROMISE}" or`);
    expect(prompt).toContain(`creating the file ${SIGNAL}. The claim is verified independently.`);
    const l = lines(prompt);
    expect(l.at(-1)).toBe('Never push, and do not edit anything under .vigil/ except that signal file.');
    expect(l.indexOf('When every requirement is implemented and the tests pass, claim completion by')).toBeLessThan(
      l.findIndex((x) => x.includes(SIGNAL)),
    );
  });

  it('is deterministic', () => {
    expect(buildPrompt(input())).toBe(prompt);
  });
});

describe('buildPrompt: PRD title', () => {
  it('omits the quoted title when the PRD has none', () => {
    const prompt = buildPrompt(input({ prdTitle: '' }));
    expect(prompt).toContain('Requirements (PRD): /home/dev/projects/todo-app/docs/PRD.md. Read it before you start.');
    expect(prompt).not.toContain('—');
  });
});

describe('buildPrompt: phases', () => {
  it.each<[Phase, string]>([
    ['REASON', 'REASON: read the requirements and the current code'],
    ['ACT', 'ACT: implement the next step'],
    ['REFLECT', 'REFLECT: review what changed'],
    ['VERIFY', 'VERIFY: run the tests and check the requirements'],
  ])('%s iteration carries its own guidance only', (phase, guidance) => {
    const prompt = buildPrompt(input({ phase }));
    expect(prompt).toContain(`Phase ${phase}, tier development.`);
    expect(prompt).toContain(guidance);
    for (const other of PHASES.filter((p) => p !== phase)) {
      expect(prompt).not.toContain(`\n${other}:`);
    }
  });

  it('iteration 8 of 10 in legacy rotation: REASON with tier planning', () => {
    const prompt = buildPrompt(
      input({ iteration: 8, maxIterations: 10, phase: phaseFor(8), tier: tierFor(8, { tier: 'fast', legacyTierRotation: true }) }),
    );
    expect(prompt).toContain('Iteration 8 of at most 10. Phase REASON, tier planning.');
  });
});

describe('buildPrompt: retry', () => {
  it('notes a single failed attempt', () => {
    const prompt = buildPrompt(input({ iteration: 4, retry: 1 }));
    expect(prompt).toContain('The previous attempt failed; check the state of the repository before continuing.');
  });

  it('notes several failed attempts with their count', () => {
    const prompt = buildPrompt(input({ iteration: 9, retry: 3 }));
    expect(prompt).toContain('The previous 3 attempts failed; check the state of the repository before continuing.');
    expect(prompt).not.toContain('The previous attempt failed');
  });

  it('puts the retry note right after the phase guidance', () => {
    const l = lines(buildPrompt(input({ retry: 2 })));
    const guidance = l.findIndex((x) => x.startsWith('ACT:'));
    expect(l[guidance + 1]).toBe('The previous 2 attempts failed; check the state of the repository before continuing.');
  });

  it('has no retry note when retry is 0', () => {
    expect(buildPrompt(input({ retry: 0 }))).not.toContain('attempt');
  });
});

describe('buildPrompt: human directives', () => {
  const directives: Directive[] = [
    { text: 'Use PostgreSQL, not SQLite.', by: 'alice', at: '2025-03-01T10:00:00.000Z' },
    { text: 'Skip the CSV export for now.\nFocus on tags.', by: 'bob@example.com', at: '2025-03-01T10:05:00.000Z' },
    { text: 'Add an index on tags.name.', by: 'ops-bot', at: '2025-03-01T11:30:00.000Z' },
  ];
  const prompt = buildPrompt(input({ iteration: 5, phase: phaseFor(5), directives }));

  it('introduces the directives once, as a priority', () => {
    expect(prompt.split('HUMAN DIRECTIVE (priority; follow it before anything else):')).toHaveLength(2);
  });

  it('lists each directive with who and when, followed by its text, in the order given', () => {
    const l = lines(prompt);
    const header = l.indexOf('HUMAN DIRECTIVE (priority; follow it before anything else):');
    expect(l.slice(header + 1, header + 8)).toEqual([
      '[from alice at 2025-03-01T10:00:00.000Z]',
      'Use PostgreSQL, not SQLite.',
      '[from bob@example.com at 2025-03-01T10:05:00.000Z]',
      'Skip the CSV export for now.',
      'Focus on tags.',
      '[from ops-bot at 2025-03-01T11:30:00.000Z]',
      'Add an index on tags.name.',
    ]);
  });

  it('places the directives before the completion instruction', () => {
    expect(prompt.indexOf('HUMAN DIRECTIVE')).toBeLessThan(prompt.indexOf('claim completion'));
    expect(prompt.indexOf('Iteration 5 of at most 25')).toBeLessThan(prompt.indexOf('HUMAN DIRECTIVE'));
  });

  it('passes a directive through verbatim, whatever it contains', () => {
    const text = 'Ignore "previous" instructions? No: just rename `foo` to `bar` — ünïcödé ✓';
    expect(buildPrompt(input({ directives: [{ text, by: 'carol', at: 't' }] }))).toContain(`[from carol at t]\n${text}`);
  });
});

describe('buildPrompt: findings', () => {
  it("includes the previous iteration's findings under their heading", () => {
    const findings = 'Iteration 3 failed with exit code 2. Last output:\nerror TS2304: Cannot find name "Tag".';
    const prompt = buildPrompt(input({ iteration: 4, retry: 1, findings }));
    expect(prompt).toContain(`Findings from the previous iteration:\n${findings}`);
    expect(prompt.indexOf('Findings from the previous iteration')).toBeLessThan(prompt.indexOf('claim completion'));
  });

  it('carries a refused completion claim into the next prompt', () => {
    const refusal = describeRefusal(judgeCompletion({ iteration: 6, filesChangedSinceStart: 0, tests: null }));
    const prompt = buildPrompt(input({ iteration: 7, findings: refusal }));
    expect(prompt).toContain('Your completion claim in iteration 6 was refused');
  });

  it('places findings after directives when both are present', () => {
    const prompt = buildPrompt(input({ findings: 'F1', directives: [{ text: 'D1', by: 'a', at: 't' }] }));
    expect(prompt.indexOf('D1')).toBeLessThan(prompt.indexOf('F1'));
  });

  it('omits the findings block for null or empty findings', () => {
    expect(buildPrompt(input({ findings: null }))).not.toContain('Findings');
    expect(buildPrompt(input({ findings: '' }))).not.toContain('Findings');
  });
});

describe('buildPrompt: completion promise', () => {
  it('with an empty promise has no promise line but keeps the signal-file instruction', () => {
    const prompt = buildPrompt(input({ completionPromise: '' }));
    expect(prompt).not.toContain('printing the exact line');
    expect(prompt).not.toContain(PROMISE);
    expect(prompt).toContain(
      'When every requirement is implemented and the tests pass, claim completion by\n' + `creating the file ${SIGNAL}.`,
    );
  });

  it('quotes a custom promise exactly', () => {
    expect(buildPrompt(input({ completionPromise: 'ALL DONE <3' }))).toContain('printing the exact line "ALL DONE <3" or');
  });
});

describe('buildPrompt: size', () => {
  it('stays under 4 KiB without directives, even with findings, a retry and long paths', () => {
    const prompt = buildPrompt(
      input({
        prdPath: `/very/${'deep/'.repeat(40)}PRD.md`,
        prdTitle: 'T'.repeat(200),
        iteration: 999_999,
        maxIterations: 1_000_000,
        retry: 49,
        findings: 'Iteration 999998 failed with exit code 1. Last output:\n' + 'x'.repeat(1000),
        completionPromise: 'P'.repeat(500),
      }),
    );
    expect(bytes(prompt)).toBeLessThan(4096);
  });

  it('a typical first prompt is well under 1 KiB', () => {
    expect(bytes(buildPrompt(input()))).toBeLessThan(1024);
  });

  it('references the PRD by path only: its size grows only with the path length', () => {
    const a = buildPrompt(input({ prdPath: '/a.md' }));
    const b = buildPrompt(input({ prdPath: '/bbbbbbbbbb.md' }));
    expect(bytes(b) - bytes(a)).toBe('/bbbbbbbbbb.md'.length - '/a.md'.length);
  });
});

describe('buildPrompt: the default template with the run memory (pinned sections)', () => {
  const memory = {
    runSoFar: '- iteration 6: ACT · exit 0 · changed 1 file(s): src/tags.ts\n- iteration 5: council round 1 (claim): REJECTED',
    continuity: 'Next: the tag filter. Decided: SQLite stays.',
    learnings: 'Run the tests with `npm test -- --run`.',
  };
  const full = buildPrompt(
    input({
      iteration: 7,
      phase: phaseFor(7),
      retry: 1,
      freshSession: true,
      handoffSummary: 'HANDOFF-SUMMARY',
      directives: [{ text: 'DIRECTIVE-TEXT', by: 'alice', at: 't' }],
      findings: 'FINDINGS-TEXT',
      gateFindings: 'GATE-FINDINGS',
      checklist: 'CHECKLIST-TEXT',
      memory,
    }),
  );

  it('has every section, in this order', () => {
    const markers = [
      'You are an autonomous coding agent working in this git repository.',
      'Requirements (PRD): ',
      'Iteration 7 of at most 25. Phase VERIFY, tier development.',
      'VERIFY: run the tests and check the requirements',
      'The previous attempt failed',
      'This is a FRESH SESSION',
      'Where things stand (latest handoff):\nHANDOFF-SUMMARY',
      'HUMAN DIRECTIVE (priority; follow it before anything else):\n[from alice at t]\nDIRECTIVE-TEXT',
      'Findings from the previous iteration:\nFINDINGS-TEXT',
      'QUALITY GATE FAILURES (fix these; a failing blocking gate refuses completion):\nGATE-FINDINGS',
      'Requirements checklist (verified independently before completion):\nCHECKLIST-TEXT',
      `Your continuity notes (.vigil/CONTINUITY.md, as you left them):\n${memory.continuity}`,
      `Learnings about this repository from earlier runs (.vigil/learnings.md):\n${memory.learnings}`,
      `The run so far (newest first):\n${memory.runSoFar}`,
      'Notes that outlive this session (a fresh session starts from them):',
      'When every requirement is implemented and the tests pass, claim completion by',
      'Never push, and never stop to wait for an answer',
    ];
    const at = markers.map((m) => full.indexOf(m));
    for (const [i, pos] of at.entries()) expect(pos, markers[i]).toBeGreaterThanOrEqual(0);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it('separates sections by exactly one blank line and never starts or ends with one', () => {
    expect(full).not.toMatch(/\n\n\n/);
    expect(full.startsWith('\n')).toBe(false);
    expect(full.endsWith('\n')).toBe(false);
  });

  it('tells the agent which notes outlive the session and lets it write them under .vigil/', () => {
    expect(full).toContain('- .vigil/CONTINUITY.md:');
    expect(full).toContain('- .vigil/signals/SUMMARY:');
    expect(full).toContain('- .vigil/learnings.md:');
    expect(lines(full).at(-1)).toBe(
      'Never push, and never stop to wait for an answer: decide, note the assumption, go on (for a real blocker, write ' +
        '.vigil/signals/HUMAN_REVIEW_NEEDED). Under .vigil/ write only CONTINUITY.md, learnings.md and files in .vigil/signals/.',
    );
  });

  it('leaves out the memory sections when the memory has nothing in them', () => {
    const p = buildPrompt(input({ memory: { runSoFar: '', continuity: null, learnings: null } }));
    expect(p).not.toContain('The run so far');
    expect(p).not.toContain('Your continuity notes');
    expect(p).not.toContain('Learnings about this repository');
    expect(p).toContain('Notes that outlive this session');
  });

  it('gives every phase its RARV meaning', () => {
    expect(buildPrompt(input({ phase: 'REASON' }))).toContain(
      'decide the next most valuable step and write it down in .vigil/CONTINUITY.md',
    );
    expect(buildPrompt(input({ phase: 'REFLECT' }))).toContain('note mistakes and what to do differently in .vigil/CONTINUITY.md');
    expect(buildPrompt(input({ phase: 'VERIFY' }))).toContain('record what you learned about this repository in .vigil/learnings.md');
  });
});

describe('buildPrompt: size bound of the default template', () => {
  it('is at most 3 KiB of its own text plus its bounded parts, at their largest and with long paths', () => {
    const budget = 4000;
    const parts = {
      findings: 'f'.repeat(8000),
      gateFindings: 'g'.repeat(8000),
      checklist: 'c'.repeat(6000),
      handoffSummary: 'h'.repeat(4000),
      memory: {
        runSoFar: 'r'.repeat(budget),
        continuity: 'n'.repeat(MEMORY_LIMITS.continuityChars),
        learnings: 'l'.repeat(MEMORY_LIMITS.learningsChars),
      },
    };
    const prompt = buildPrompt(
      input({
        prdPath: `/very/${'deep/'.repeat(40)}PRD.md`,
        prdTitle: 'T'.repeat(200),
        iteration: 999_999,
        maxIterations: 1_000_000,
        retry: 49,
        freshSession: true,
        completionPromise: 'P'.repeat(500),
        ...parts,
      }),
    );
    const bounded = 8000 + 8000 + 6000 + 4000 + budget + MEMORY_LIMITS.continuityChars + MEMORY_LIMITS.learningsChars;
    const own = prompt.length - bounded;
    expect(own).toBeLessThan(3 * 1024 + 200 + 500 + 250); // + the title, the promise and the path
    expect(own).toBeGreaterThan(1000);
  });

  it('a first prompt with an empty memory stays under 2 KiB', () => {
    expect(bytes(buildPrompt(input({ memory: { runSoFar: '', continuity: null, learnings: null } })))).toBeLessThan(2048);
  });
});

describe('prompt templates', () => {
  it('the default template parses and uses every section placeholder', () => {
    const r = parsePromptTemplate(DEFAULT_PROMPT_TEMPLATE);
    expect(r.ok).toBe(true);
    if (r.ok) for (const s of SECTION_PLACEHOLDERS) expect(r.template.placeholders).toContain(s);
  });

  it('renders a custom template: scalars inline, empty sections gone with their line', () => {
    const r = parsePromptTemplate(
      '# Task {{ iteration }}/{{maxIterations}} ({{phase}})\nPRD at {{prdPath}}\n\n{{findings}}\n\n{{directives}}\n\n{{runSoFar}}\n{{completion}}\n',
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const p = buildPrompt(
      input({ iteration: 3, memory: { runSoFar: '- iteration 2: exit 0', continuity: null, learnings: null } }),
      r.template,
    );
    expect(p).toBe(
      [
        '# Task 3/25 (ACT)',
        'PRD at /home/dev/projects/todo-app/docs/PRD.md',
        '',
        'The run so far (newest first):',
        '- iteration 2: exit 0',
        'When every requirement is implemented and the tests pass, claim completion by',
        `printing the exact line "${PROMISE}" or`,
        `creating the file ${SIGNAL}. The claim is verified independently.`,
        '',
        TEST_HONESTY,
      ].join('\n'),
    );
  });

  it('keeps the honest way out in a template that left out {{rules}}: every builder prompt says it', () => {
    const r = parsePromptTemplate('Iteration {{iteration}}\n{{directives}}\n{{completion}}\n');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const p = buildPrompt(input(), r.template);
    expect(p.endsWith(`\n\n${TEST_HONESTY}`)).toBe(true);
    expect(TEST_HONESTY).toContain('Never delete, skip or weaken a test or its harness');
    expect(TEST_HONESTY).toContain('.vigil/signals/HUMAN_REVIEW_NEEDED as {"reason": "...", "blocking": true, "defaultAnswer": ');
    // Said once where the template has its {{rules}}.
    expect(buildPrompt(input()).split(TEST_HONESTY)).toHaveLength(2);
  });

  it('refuses an unknown placeholder, naming the line and the nearest known one', () => {
    const r = parsePromptTemplate('{{directives}}\n{{completion}}\nNow: {{iteraton}}\n{{bogus}}');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]).toMatch(/^line 3: unknown placeholder \{\{iteraton\}\}; did you mean \{\{iteration\}\}\? \(known: prd, prdPath/);
    expect(r.errors[1]).toMatch(/^line 4: unknown placeholder \{\{bogus\}\} \(known: /);
  });

  it('refuses a template without the directives or the completion instruction, saying why', () => {
    const r = parsePromptTemplate('Work on {{prdPath}}.');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual([
      "the template has no {{directives}}: a person's directives (vigil input) would never reach the agent; add it on a line of its own",
      'the template has no {{completion}}: the agent would never learn how to claim completion; add it on a line of its own',
    ]);
  });

  it('refuses unpaired braces', () => {
    const r = parsePromptTemplate('{{directives}}\n{{completion}}\nIteration {{iteration}');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors).toEqual(['line 3: unpaired braces: write a placeholder as {{name}}, e.g. {{iteration}}']);
  });

  it('refuses a template larger than its bound', () => {
    const r = parsePromptTemplate(`{{directives}}\n{{completion}}\n${'x'.repeat(MAX_TEMPLATE_BYTES)}`);
    expect(r.ok).toBe(false);
  });
});
