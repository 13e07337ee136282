/**
 * Owns the unit tests of schemas/knobs.ts: splitCommandLine, every knob's fromString (happy and
 * sad paths, checked through the knob's own schema), the registry's shape, and defaultKnobs().
 */
import { describe, expect, it } from 'vitest';
import { KNOBS, KNOB_NAMES, KnobsSchema, defaultKnobs, splitCommandLine, type KnobName } from '../../schemas/knobs.js';

describe('splitCommandLine', () => {
  it.each<[string, string[]]>([
    ['', []],
    ['   \t\n ', []],
    ['claude', ['claude']],
    ['a b  c', ['a', 'b', 'c']],
    ['  a\tb\nc  ', ['a', 'b', 'c']],
    [`'a b' "c d"`, ['a b', 'c d']],
    [`ab"cd ef"gh`, ['abcd efgh']],
    [`"" ''`, ['', '']],
    [`a "" b`, ['a', '', 'b']],
    [`"say \\"hi\\""`, ['say "hi"']],
    [`"back\\\\slash"`, ['back\\slash']],
    [`"\\$HOME and \\\`x\\\`"`, ['$HOME and `x`']],
    [`"C:\\dir\\d+"`, ['C:\\dir\\d+']],
    [`'no \\escapes\\ here'`, ['no \\escapes\\ here']],
    [`'single "double" inside'`, ['single "double" inside']],
    [`"double 'single' inside"`, [`double 'single' inside`]],
    ['a\\ b', ['a b']],
    ['\\"quoted\\"', ['"quoted"']],
    ['trailing\\', ['trailing\\']],
    ['a \\\n b', ['a', 'b']],
    ['"a\\\nb"', ['ab']],
    ['$HOME *.ts ~ $(rm -rf /)', ['$HOME', '*.ts', '~', '$(rm', '-rf', '/)']],
    [`claude -p "fix the \\"bug\\"" --model 'opus 4'`, ['claude', '-p', 'fix the "bug"', '--model', 'opus 4']],
  ])('splits %j', (line, words) => {
    expect(splitCommandLine(line)).toEqual(words);
  });

  it('rejects an unterminated double quote', () => {
    expect(() => splitCommandLine('claude -p "fix it')).toThrow(/unterminated " quote/);
  });

  it('rejects an unterminated single quote', () => {
    expect(() => splitCommandLine("claude -p 'fix it")).toThrow(/unterminated ' quote/);
  });

  it("has no escapes inside single quotes: 'it\\'s' leaves a quote open", () => {
    expect(() => splitCommandLine(`'it\\'s'`)).toThrow(/unterminated ' quote/);
  });

  it('does not treat an escaped quote as an opening quote', () => {
    expect(() => splitCommandLine('a\\"b')).not.toThrow();
    expect(splitCommandLine('a\\"b')).toEqual(['a"b']);
  });
});

/** What `fromString` + the knob's schema should accept (with the value) and refuse. */
interface Cases {
  good: [string, unknown][];
  bad: string[];
}

function intCases(min: number, max: number): Cases {
  return {
    good: [
      [String(min), min],
      [String(max), max],
      [` ${max} `, max],
      [`0${min}`, min],
    ],
    bad: [String(min - 1), String(max + 1), 'abc', '1.5', '', ' ', '1e3', '0x10', '+5', '5 5', '9'.repeat(400)],
  };
}

/** A limit: 0 (off), or an integer within the bounds; nothing in between. */
function limitCases(min: number, max: number): Cases {
  return {
    good: [['0', 0], ...intCases(min, max).good],
    bad: ['1', String(min - 1), String(max + 1), '-1', 'abc', '1.5', '', 'max', '4g'],
  };
}
const boolCases: Cases = {
  good: [
    ['true', true],
    ['TRUE', true],
    [' yes ', true],
    ['1', true],
    ['on', true],
    ['false', false],
    ['False', false],
    ['no', false],
    ['0', false],
    ['off', false],
  ],
  bad: ['maybe', '', '2', 'y', 'truee'],
};

const urlCases: Cases = {
  good: [
    ['', ''],
    ['https://hooks.example.com/vigil', 'https://hooks.example.com/vigil'],
    [' http://127.0.0.1:8080/hook ', 'http://127.0.0.1:8080/hook'],
    ['env:SLACK_HOOK', 'env:SLACK_HOOK'],
  ],
  bad: ['hooks.example.com/x', 'ftp://example.com/x', 'not a url', `https://example.com/${'x'.repeat(2048)}`, 'env:', 'env:1X', 'env:A-B'],
};

/** A duration: seconds, or a number with a unit (s, m, h, d), up to a year; 0 is off. */
const durationCases: Cases = {
  good: [
    ['0', 0],
    ['90', 90],
    ['30s', 30],
    [' 15m ', 900],
    ['4h', 14_400],
    ['4H', 14_400],
    ['3d', 259_200],
    ['365d', 31_536_000],
  ],
  bad: ['366d', '-1', '1.5h', '4 hours', 'h', '', '4w', '1e3'],
};

function modelCases(): Cases {
  return {
    good: [
      ['', ''],
      ['opus', 'opus'],
      ['anthropic/claude-sonnet-4-5', 'anthropic/claude-sonnet-4-5'],
    ],
    bad: ['x'.repeat(201)],
  };
}

const CASES: Record<KnobName, Cases> = {
  maxIterations: intCases(1, 1_000_000),
  maxDurationSeconds: intCases(0, 31_536_000),
  maxRetries: intCases(1, 10_000),
  baseWaitSeconds: intCases(0, 86_400),
  maxWaitSeconds: intCases(0, 604_800),
  backoffJitterSeconds: intCases(0, 3600),
  provider: {
    good: [
      ['command', 'command'],
      [' Command ', 'command'],
      ['claude', 'claude'],
      ['CODEX', 'codex'],
      ['gemini', 'gemini'],
      ['aider', 'aider'],
      ['opencode', 'opencode'],
      ['cline', 'cline'],
    ],
    bad: ['', 'clines', 'commands', 'claude-code'],
  },
  agentCommand: {
    good: [
      ['', []],
      ['claude -p', ['claude', '-p']],
      [`my-agent --msg "two words" 'x y'`, ['my-agent', '--msg', 'two words', 'x y']],
      ['["claude", "-p", "a b"]', ['claude', '-p', 'a b']],
      [' [ "x" ] ', ['x']],
      ['[]', []],
    ],
    bad: [
      'claude "unterminated',
      "claude 'unterminated",
      '["claude", ',
      '["claude", 5]',
      '["claude", ""]',
      'a ""',
      JSON.stringify(Array.from({ length: 257 }, () => 'w')),
      `["${'x'.repeat(4097)}"]`,
    ],
  },
  model: modelCases(),
  modelPlanning: modelCases(),
  modelDevelopment: modelCases(),
  modelFast: modelCases(),
  effort: {
    good: [
      ['', ''],
      ['xhigh', 'xhigh'],
    ],
    bad: ['x'.repeat(21)],
  },
  fallbackModel: modelCases(),
  councilProvider: {
    good: [
      ['', ''],
      ['codex', 'codex'],
      [' Claude ', 'claude'],
    ],
    bad: ['gpt', 'claude code'],
  },
  councilModel: modelCases(),
  devilsAdvocateProvider: {
    good: [
      ['', ''],
      ['gemini', 'gemini'],
    ],
    bad: ['gpt'],
  },
  devilsAdvocateModel: modelCases(),
  providerFailover: {
    good: [
      ['', ''],
      ['codex', 'codex'],
      [' Codex,gemini ', 'codex,gemini'],
      ['codex,cline', 'codex,cline'],
    ],
    bad: ['command', 'codex,clines', 'x'.repeat(201)],
  },
  failoverAfterSeconds: intCases(0, 604_800),
  providerBreaker: boolCases,
  breakerFailures: intCases(1, 100),
  breakerWindowSeconds: intCases(1, 86_400),
  breakerCooldownSeconds: intCases(1, 86_400),
  breakerProbeSeconds: intCases(1, 3600),
  breakerSuccesses: intCases(1, 100),
  agentTimeoutSeconds: intCases(1, 172_800),
  agentSilenceMinutes: {
    good: [
      ['15', 15],
      ['0', 0],
      ['0.1', 0.1],
      [' 2.5 ', 2.5],
      ['2880', 2880],
    ],
    bad: ['-1', '2881', 'abc', '', '15m', '1e3', 'off'],
  },
  heartbeatTimeoutSeconds: intCases(2, 600),
  completionPromise: {
    good: [
      ['', ''],
      ['DONE', 'DONE'],
      ['  spaced  ', '  spaced  '],
      ['x'.repeat(500), 'x'.repeat(500)],
    ],
    bad: ['x'.repeat(501)],
  },
  testCommand: {
    good: [
      ['', ''],
      ['npm test -- --run', 'npm test -- --run'],
      ['x'.repeat(4096), 'x'.repeat(4096)],
    ],
    bad: ['x'.repeat(4097)],
  },
  testTimeoutSeconds: intCases(1, 86_400),
  affectedTestsFullEvery: intCases(1, 1000),
  acceptanceTests: {
    good: [
      ['', ''],
      ['/srv/acceptance', '/srv/acceptance'],
      ['x'.repeat(4096), 'x'.repeat(4096)],
    ],
    bad: ['x'.repeat(4097)],
  },
  acceptanceFromPrd: boolCases,
  acceptanceCommand: {
    good: [
      ['', ''],
      ['python3 -m pytest -q', 'python3 -m pytest -q'],
      ['x'.repeat(4096), 'x'.repeat(4096)],
    ],
    bad: ['x'.repeat(4097)],
  },
  tier: {
    good: [
      ['planning', 'planning'],
      ['development', 'development'],
      ['FAST', 'fast'],
      [' fast ', 'fast'],
    ],
    bad: ['', 'turbo', 'dev'],
  },
  maxTier: {
    good: [
      ['planning', 'planning'],
      ['Development', 'development'],
      [' fast ', 'fast'],
    ],
    bad: ['', 'opus', 'haiku'],
  },
  complexity: {
    good: [
      ['auto', 'auto'],
      ['OFF', 'off'],
      [' simple ', 'simple'],
      ['standard', 'standard'],
      ['complex', 'complex'],
    ],
    bad: ['', 'hard', 'on'],
  },
  legacyTierRotation: boolCases,
  continueAsNewEvery: intCases(1, 100_000),
  councilEnabled: boolCases,
  councilSize: intCases(1, 9),
  councilThreshold: intCases(0, 9),
  councilCheckInterval: intCases(1, 10_000),
  councilMinIterations: intCases(1, 10_000),
  councilEarlyCheck: boolCases,
  councilMemberTimeoutSeconds: intCases(1, 7200),
  councilBlind: boolCases,
  councilSeverityThreshold: {
    good: [
      ['low', 'low'],
      ['Medium', 'medium'],
      [' HIGH ', 'high'],
      ['critical', 'critical'],
    ],
    bad: ['', 'severe', 'lowest'],
  },
  councilErrorBudget: {
    good: [
      ['0', 0],
      ['0.25', 0.25],
      ['.5', 0.5],
      [' 1 ', 1],
      ['1.0', 1],
    ],
    bad: ['-0.1', '1.01', 'abc', '', '1e-3', '50%', '0,5'],
  },
  stagnationLimit: intCases(1, 10_000),
  doneSignalLimit: intCases(1, 10_000),
  onStuck: {
    good: [
      ['stop', 'stop'],
      [' Fork ', 'fork'],
    ],
    bad: ['branch', ''],
  },
  forkAttempts: intCases(1, 9),
  forkWith: {
    good: [
      ['', ''],
      ['tier:planning', 'tier:planning'],
      [' model:opus,agent:codex+tier:fast ', 'model:opus,agent:codex+tier:fast'],
      ['agent:claude+model:sonnet, model:strong', 'agent:claude+model:sonnet, model:strong'],
    ],
    bad: ['opus', 'agent:gpt', 'tier:high', 'model:', 'colour:red', `model:${'x'.repeat(201)}`],
  },
  evidenceGate: boolCases,
  evidenceSecretScan: boolCases,
  evidenceNoTestsAffirmative: boolCases,
  autonomyMode: {
    good: [
      ['supervised', 'supervised'],
      [' Perpetual ', 'perpetual'],
    ],
    bad: ['', 'checkpoint', 'auto'],
  },
  deliver: {
    good: [
      ['branch', 'branch'],
      [' PR ', 'pr'],
      [' None ', 'none'],
    ],
    bad: ['pull-request', 'main', ''],
  },
  followPr: boolCases,
  followPrDays: intCases(1, 365),
  prPollEvery: {
    good: [
      ['0', 0],
      ['90', 90],
      [' 10m ', 600],
      ['1d', 86_400],
    ],
    bad: ['2d', '-1', '1.5h', '10 minutes', ''],
  },
  prUpdate: {
    good: [
      ['rebase', 'rebase'],
      [' Merge ', 'merge'],
    ],
    bad: ['squash', ''],
  },
  deliverToCurrent: boolCases,
  parallelStreams: intCases(1, 8),
  mergeConflicts: {
    good: [
      ['agent', 'agent'],
      [' Person ', 'person'],
    ],
    bad: ['', 'human', 'auto'],
  },
  taskPlanner: {
    good: [
      ['agent', 'agent'],
      [' Checklist ', 'checklist'],
    ],
    bad: ['', 'planner', 'file'],
  },
  uncertaintyEscalation: boolCases,
  uncertaintyRounds: intCases(1, 100),
  uncertaintyNoChangeMin: intCases(0, 10_000),
  uncertaintySplitRounds: intCases(1, 100),
  selfHeal: boolCases,
  iterationGrace: boolCases,
  notifyWebhookUrl: urlCases,
  notifySlackWebhookUrl: urlCases,
  notifyDiscordWebhookUrl: urlCases,
  notifyFile: {
    good: [
      ['', ''],
      ['/var/log/vigil/notifications.jsonl', '/var/log/vigil/notifications.jsonl'],
    ],
    bad: ['x'.repeat(4097)],
  },
  notifyDesktop: boolCases,
  escalationRemindAfter: durationCases,
  escalationRerouteAfter: durationCases,
  escalationDeadline: durationCases,
  onDeadline: {
    good: [
      ['stop', 'stop'],
      [' Continue ', 'continue'],
      ['default-answer', 'default-answer'],
    ],
    bad: ['', 'wait', 'default'],
  },
  rerouteWebhookUrl: urlCases,
  rerouteSlackWebhookUrl: urlCases,
  rerouteDiscordWebhookUrl: urlCases,
  rerouteFile: {
    good: [
      ['', ''],
      ['/srv/team/notifications.jsonl', '/srv/team/notifications.jsonl'],
    ],
    bad: ['x'.repeat(4097)],
  },
  tierLadder: boolCases,
  tierLowMaxFailures: intCases(0, 100),
  tierMediumMaxFailures: intCases(0, 100),
  tierHighMaxFailures: intCases(0, 100),
  tierDeescalateSuccesses: intCases(1, 1000),
  deadLetterAfter: intCases(0, 1000),
  budgetUsd: {
    good: [
      ['0', 0],
      ['12.5', 12.5],
      [' 1000000 ', 1_000_000],
    ],
    bad: ['-1', '1000000.01', 'ten', '$5', ''],
  },
  orchestrationBudgetShare: {
    good: [
      ['0', 0],
      ['0.3', 0.3],
      [' 1 ', 1],
    ],
    bad: ['-0.1', '1.5', '30%', ''],
  },
  rateLimitRpm: intCases(1, 100_000),
  rateLimitNotifySeconds: intCases(0, 604_800),
  notifyTimeoutSeconds: intCases(1, 120),
  qualityGates: boolCases,
  gateCadence: {
    good: [
      ['changed', 'changed'],
      [' Claim ', 'claim'],
    ],
    bad: ['', 'always', 'every'],
  },
  gateTimeoutSeconds: intCases(1, 86_400),
  gateStaticAnalysis: boolCases,
  gateSecretScan: boolCases,
  gateTests: boolCases,
  buildCommand: {
    good: [
      ['', ''],
      ['off', 'off'],
      ['npm run build:prod', 'npm run build:prod'],
      ['x'.repeat(4096), 'x'.repeat(4096)],
    ],
    bad: ['x'.repeat(4097)],
  },
  appCheck: {
    good: [
      ['', ''],
      ['off', 'off'],
      ['sh scripts/boot-and-probe.sh', 'sh scripts/boot-and-probe.sh'],
    ],
    bad: ['x'.repeat(4097)],
  },
  e2eCommand: {
    good: [
      ['', ''],
      ['npx playwright test', 'npx playwright test'],
    ],
    bad: ['x'.repeat(4097)],
  },
  perfCommand: {
    good: [
      ['', ''],
      ['node bench.js', 'node bench.js'],
    ],
    bad: ['x'.repeat(4097)],
  },
  gateMockIntegrity: boolCases,
  gateTestMutation: boolCases,
  gateTestGaming: boolCases,
  gateDocCoverage: boolCases,
  gateCoverage: boolCases,
  coverageThreshold: {
    good: [
      ['0', 0],
      ['80', 80],
      ['92.5', 92.5],
      ['100', 100],
    ],
    bad: ['-1', '100.1', 'most', ''],
  },
  gateEscalateAfter: intCases(1, 1000),
  gatePauseAfter: intCases(1, 1000),
  gateStuckAfter: intCases(0, 1000),
  gateFindingsInPrompt: intCases(0, 100),
  codeReview: boolCases,
  reviewComplexity: {
    good: [
      ['simple', 'simple'],
      ['Standard', 'standard'],
      [' complex ', 'complex'],
    ],
    bad: ['', 'hard'],
  },
  reviewMaxReviewers: intCases(0, 12),
  reviewProvider: {
    good: [
      ['', ''],
      ['codex', 'codex'],
    ],
    bad: ['gpt'],
  },
  reviewModel: modelCases(),
  reviewDevilsAdvocate: boolCases,
  reviewInconclusiveBlocks: boolCases,
  reviewMergeabilityMin: intCases(0, 100),
  reviewMaxDiffBytes: intCases(0, 10_000_000),
  batchRounds: {
    good: [
      ['auto', 'auto'],
      [' OFF ', 'off'],
    ],
    bad: ['', 'on', 'true', 'batched'],
  },
  prdChecklist: boolCases,
  checklistHeldOut: boolCases,
  sandbox: {
    good: [
      ['auto', 'auto'],
      [' Strict ', 'strict'],
      ['off', 'off'],
    ],
    bad: ['', 'on', 'true', 'bwrap'],
  },
  sandboxRegistries: boolCases,
  sandboxPids: limitCases(32, 4_194_304),
  sandboxMemoryMb: limitCases(256, 16_777_216),
  sandboxCpuWeight: intCases(1, 10_000),
  eventStore: boolCases,
  checkpointsKept: intCases(0, 200),
  memoryBudgetChars: intCases(0, 100_000),
  memoryIndexTokens: intCases(0, 20_000),
  memoryTimelineTokens: intCases(0, 20_000),
  memoryEntriesTokens: intCases(0, 20_000),
  memoryJudge: boolCases,
  promptTemplate: {
    good: [
      ['', ''],
      [' prompts/vigil.md ', 'prompts/vigil.md'],
      ['/etc/vigil/prompt.md', '/etc/vigil/prompt.md'],
    ],
    bad: ['x'.repeat(4097)],
  },
};

describe('knob fromString', () => {
  for (const name of KNOB_NAMES) {
    const spec = KNOBS[name];
    const cases = CASES[name];

    it.each(cases.good)(`${name}: accepts %j`, (raw, expected) => {
      const parsed = spec.schema.safeParse(spec.fromString(raw));
      expect(parsed.success).toBe(true);
      expect(parsed.data).toEqual(expected);
    });

    it.each(cases.bad.map((b) => [b.length > 40 ? `${b.slice(0, 40)}… (${b.length} chars)` : b, b]))(
      `${name}: refuses %j`,
      (_label, raw) => {
        expect(() => spec.fromString(raw)).not.toThrow();
        expect(spec.schema.safeParse(spec.fromString(raw)).success).toBe(false);
      },
    );
  }
});

describe('registry', () => {
  it('has the expected knobs in explain order', () => {
    expect(KNOB_NAMES).toEqual(Object.keys(CASES));
  });

  it('gives every knob a unique VIGIL_ environment variable, a doc line and an allowed text', () => {
    const envs = KNOB_NAMES.map((k) => KNOBS[k].env);
    expect(new Set(envs).size).toBe(envs.length);
    for (const k of KNOB_NAMES) {
      expect(KNOBS[k].env).toMatch(/^VIGIL_[A-Z_]+$/);
      expect(KNOBS[k].doc.length).toBeGreaterThan(10);
      expect(KNOBS[k].doc).not.toContain('\n');
      expect(KNOBS[k].allowed.length).toBeGreaterThan(3);
    }
  });

  it('states integer ranges in `allowed`', () => {
    expect(KNOBS.maxIterations.allowed).toBe('an integer from 1 to 1000000');
    expect(KNOBS.heartbeatTimeoutSeconds.allowed).toBe('an integer from 2 to 600');
    expect(KNOBS.tier.allowed).toBe('one of planning, development, fast');
    expect(KNOBS.legacyTierRotation.allowed).toBe('true or false');
  });

  it("accepts each knob's default with its own schema", () => {
    for (const k of KNOB_NAMES) {
      expect(KNOBS[k].schema.safeParse(KNOBS[k].default).success, k).toBe(true);
    }
  });
});

describe('defaultKnobs', () => {
  it('passes KnobsSchema and holds every default', () => {
    const knobs = defaultKnobs();
    expect(KnobsSchema.parse(knobs)).toEqual(knobs);
    expect(Object.keys(knobs)).toEqual(KNOB_NAMES);
    for (const k of KNOB_NAMES) expect(knobs[k]).toEqual(KNOBS[k].default);
  });

  it('matches the documented run-loop defaults', () => {
    expect(defaultKnobs()).toMatchObject({
      maxIterations: 25,
      maxRetries: 50,
      provider: 'command',
      agentCommand: [],
      tier: 'development',
      legacyTierRotation: false,
      completionPromise: 'COMPLETION PROMISE FULFILLED',
    });
  });

  it('returns fresh arrays, so callers cannot mutate the registry', () => {
    const a = defaultKnobs();
    a.agentCommand.push('mutated');
    expect(defaultKnobs().agentCommand).toEqual([]);
    expect(KNOBS.agentCommand.default).toEqual([]);
  });

  it('is refused by KnobsSchema when a knob is out of range', () => {
    expect(KnobsSchema.safeParse({ ...defaultKnobs(), maxIterations: 0 }).success).toBe(false);
    expect(KnobsSchema.safeParse({ ...defaultKnobs(), tier: 'turbo' }).success).toBe(false);
  });
});
