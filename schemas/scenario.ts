/**
 * Owns the format of scenario files for the scripted agent (examples/agents/scripted-agent): a
 * fake coding agent, with no LLM, that does exactly what a JSON file tells it to do, so the demo
 * and the test suite can drive Vigil through any sequence of iterations deterministically.
 *
 * A scenario lists one step per iteration (VIGIL_ITERATION 1 is `iterations[0]`), an optional
 * `default` step for iterations beyond the list, and optional per-role scripts for the council,
 * devil's advocate and reviewer calls (the council's optionally per member, under `members`). Every object is strict, so a typo in a scenario file is an
 * error naming the field rather than a silently ignored key.
 *
 * Sandbox-safe: imports only zod, no Node APIs.
 */
import { z } from 'zod';
import { shared } from './shared.js';

/** Completion promise printed by `claim: "promise"` when the scenario does not set `promiseText`.
 * Matches the default of the VIGIL_COMPLETION_PROMISE knob. */
export const DEFAULT_PROMISE_TEXT = 'COMPLETION PROMISE FULFILLED';

/** Longest sleep a step may ask for (one day); keeps setTimeout within its range. */
export const MAX_SLEEP_MS = 24 * 60 * 60 * 1000;

/** Roles other than `iteration` that a scenario can script (see `roles`). */
export const SCRIPTED_ROLES = [
  'council',
  'devils-advocate',
  'reviewer',
  'checklist',
  'checklist-verifier',
  'memory',
  'planner',
  'acceptance',
  'discovery',
] as const;
export type ScriptedRole = (typeof SCRIPTED_ROLES)[number];

/**
 * Why a path given in writes/appends/deletes is unacceptable, or null when it is fine. Paths are
 * relative to the repository root and may not leave it, nor reach into `.git/`.
 */
export function repoPathProblem(path: string): string | null {
  if (path.length === 0) return 'path must not be empty';
  if (path.includes('\0')) return 'path must not contain NUL characters';
  if (path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path)) {
    return `path must be relative to the repository, got absolute path "${path}"`;
  }
  const segments = path.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) return `path must not contain ".." segments (escapes the repository): "${path}"`;
  if (segments.length === 0) return `path must name a file inside the repository, got "${path}"`;
  if (segments[0]?.toLowerCase() === '.git') return `path must not point into .git/: "${path}"`;
  return null;
}

/** A file path relative to the repository root (the agent's working directory). */
export const RepoRelativePathSchema = shared('schemas/scenario:RepoRelativePathSchema', () =>
  z.string().superRefine((path, ctx) => {
    const problem = repoPathProblem(path);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  }),
);

/** What the agent does in one invocation. Actions happen in the order the fields are listed. */
export const ScenarioStepSchema = shared('schemas/scenario:ScenarioStepSchema', () =>
  z.strictObject({
    /** Milliseconds to sleep first, before any other action (simulates a slow start). Default 0. */
    sleepBeforeMs: z.number().int().min(0).max(MAX_SLEEP_MS).default(0),
    /** Paths to delete; a missing file is fine. Directories are removed recursively. */
    deletes: z.array(RepoRelativePathSchema).default([]),
    /** Path -> full content to write (file replaced; parent directories created). */
    writes: z.record(RepoRelativePathSchema, z.string()).default({}),
    /** Path -> text appended to the file (created, with parent directories, when missing). */
    appends: z.record(RepoRelativePathSchema, z.string()).default({}),
    /** Text printed to stdout as is (no newline added). */
    output: z.string().optional(),
    /** Text printed to stderr as is (no newline added). */
    stderr: z.string().optional(),
    /**
     * Claim completion: `"promise"` prints the scenario's `promiseText` on its own line on stdout;
     * `"file"` writes `.vigil/signals/COMPLETION_REQUESTED` (a short JSON body). Absent: no claim.
     */
    claim: z.enum(['promise', 'file']).optional(),
    /**
     * Commit message: when set, every change in the working tree except `.vigil/` is staged
     * (`git add -A`) and committed as "Scripted Agent <agent@vigil.invalid>", even when there is
     * nothing to commit (an empty commit), hooks and signing off.
     */
    commit: z.string().min(1).optional(),
    /** Milliseconds to sleep last, after files, output, claim and commit, before exiting (so a test
     * can kill the agent after its changes were made). Default 0. */
    sleepMs: z.number().int().min(0).max(MAX_SLEEP_MS).default(0),
    /** Exit code of the process, 0..255. Default 0. */
    exitCode: z.number().int().min(0).max(255).default(0),
  }),
);
export type ScenarioStep = z.infer<typeof ScenarioStepSchema>;

/**
 * Script of one non-iteration role. The step is chosen by how many times the role was called
 * before in this repository (a counter in `.vigil/scripted-agent/state.json`; for the council one
 * counter per member, key `council:<VIGIL_MEMBER>`): call n (0-based) runs `rounds[n]`, or
 * `default` beyond the list, or nothing when neither exists.
 */
export const RoleScriptSchema = shared('schemas/scenario:RoleScriptSchema', () =>
  z.strictObject({
    /** Steps of the first, second, ... call of the role. */
    rounds: z.array(ScenarioStepSchema).default([]),
    /** Step for calls beyond `rounds`. */
    default: ScenarioStepSchema.optional(),
  }),
);
export type RoleScript = z.infer<typeof RoleScriptSchema>;

/** A key of the council's `members`: a 0-based member index in plain decimal ("0", "1", "12"). */
export const CouncilMemberKeySchema = z
  .string()
  .regex(/^(0|[1-9][0-9]*)$/, 'member key must be a non-negative integer in decimal (the 0-based VIGIL_MEMBER), e.g. "0"');

/**
 * The council's script: the shared `rounds`/`default` of a RoleScript for every member, plus
 * optional per-member scripts keyed by the member index (`"0"`, `"1"`, ...). Member m's call n
 * (n counted per member) runs `members[m].rounds[n]`, else `members[m].default`, else the shared
 * `rounds[n]`, else the shared `default`, else nothing. Only the council accepts `members`.
 */
export const CouncilScriptSchema = shared('schemas/scenario:CouncilScriptSchema', () =>
  RoleScriptSchema.extend({
    /** Member index -> that member's own script, tried before the shared one. */
    members: z.record(CouncilMemberKeySchema, RoleScriptSchema).optional(),
  }),
);
export type CouncilScript = z.infer<typeof CouncilScriptSchema>;

/** A reviewer name as Vigil passes it in VIGIL_REVIEWER (`security-sentinel`, `devils-advocate`, ...). */
export const ReviewerKeySchema = shared('schemas/scenario:ReviewerKeySchema', () =>
  z.string().regex(/^[a-z][a-z0-9-]{0,63}$/, 'reviewer key must be a reviewer name such as "security-sentinel"'),
);

/**
 * The code reviewers' script: a shared RoleScript plus optional per-reviewer scripts keyed by the
 * reviewer's name (VIGIL_REVIEWER). Calls are counted per reviewer, so call n is review round n.
 */
export const ReviewerScriptSchema = shared('schemas/scenario:ReviewerScriptSchema', () =>
  RoleScriptSchema.extend({
    /** Reviewer name -> that reviewer's own script, tried before the shared one. */
    reviewers: z.record(ReviewerKeySchema, RoleScriptSchema).optional(),
  }),
);
export type ReviewerScript = z.infer<typeof ReviewerScriptSchema>;

/**
 * The step of call `index` (0-based, counted per member for the council) of a role script, or
 * undefined when the script has none. `member` picks the council member's own script first.
 */
export function roleStep(
  script: RoleScript | CouncilScript | ReviewerScript | undefined,
  index: number,
  member: number | string | null = null,
): ScenarioStep | undefined {
  if (script === undefined) return undefined;
  const members = 'members' in script ? script.members : 'reviewers' in script ? script.reviewers : undefined;
  const own = member === null || members === undefined ? undefined : members[String(member)];
  return own?.rounds[index] ?? own?.default ?? script.rounds[index] ?? script.default;
}

export const ScenarioSchema = shared('schemas/scenario:ScenarioSchema', () =>
  z.strictObject({
    /** Format version; always 1. */
    version: z.literal(1),
    /** Optional free text saying what the scenario exercises; ignored by the agent. */
    description: z.string().optional(),
    /** Text printed by `claim: "promise"`; must match the run's completion promise. */
    promiseText: z.string().min(1).default(DEFAULT_PROMISE_TEXT),
    /** Step of each iteration: VIGIL_ITERATION 1 runs `iterations[0]`, 2 runs `iterations[1]`, ... */
    iterations: z.array(ScenarioStepSchema),
    /** Step for iterations beyond the list. Absent: such iterations print
     * "scripted-agent: no step for iteration N" and exit 0. */
    default: ScenarioStepSchema.optional(),
    /** Scripts for the non-iteration roles (VIGIL_ROLE); a role without a script does nothing. */
    roles: z
      .strictObject({
        council: CouncilScriptSchema.optional(),
        'devils-advocate': RoleScriptSchema.optional(),
        reviewer: ReviewerScriptSchema.optional(),
        checklist: RoleScriptSchema.optional(),
        'checklist-verifier': RoleScriptSchema.optional(),
        memory: RoleScriptSchema.optional(),
        planner: RoleScriptSchema.optional(),
        /** The acceptance role (knob acceptanceFromPrd): its writes, appends and deletes are relative to $VIGIL_ACCEPTANCE_DIR. */
        acceptance: RoleScriptSchema.optional(),
        /** The discovery call of a run started from a goal: its writes are relative to the folder of $VIGIL_PRD_FILE (write `PRD.md`). */
        discovery: RoleScriptSchema.optional(),
      })
      .default({}),
  }),
);
export type Scenario = z.infer<typeof ScenarioSchema>;

/** Dotted path of an issue (`iterations.2.exitCode`); keys that are not plain words, such as
 * file paths in `writes`, are quoted in brackets (`writes["../x"]`). */
function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const segment of path) {
    const text = String(segment);
    if (/^[A-Za-z0-9_$-]+$/.test(text)) out += out === '' ? text : `.${text}`;
    else out += `[${JSON.stringify(text)}]`;
  }
  return out;
}

/** Like formatPath, but the last segment (a record key) is always quoted in brackets. */
function formatKeyPath(path: readonly PropertyKey[]): string {
  const key = path.at(-1);
  if (key === undefined) return formatPath(path);
  const parent = path.slice(0, -1);
  return `${parent.length === 0 ? '' : formatPath(parent)}[${JSON.stringify(String(key))}]`;
}

/** Extra words for an unknown key that is valid elsewhere: `members` under a non-council role. */
function unknownKeyHint(path: readonly PropertyKey[], key: string): string {
  const [first, role] = path;
  if (key === 'members' && path.length === 2 && first === 'roles' && role !== 'council') {
    return ' (only roles.council accepts per-member scripts)';
  }
  return '';
}

/** One line per issue: `scenario: <path>: <message>`; unknown keys are named one by one. */
export function formatScenarioIssues(error: z.ZodError): string[] {
  const lines: string[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        lines.push(`scenario: ${formatPath([...issue.path, key])}: unknown key${unknownKeyHint(issue.path, key)}`);
      }
    } else if (issue.code === 'invalid_key') {
      // A bad record key (a file path in writes/appends, a council member key): the path ends
      // with the key itself, always shown quoted in brackets so it reads as a key, not a field.
      const messages = issue.issues.map((inner) => inner.message);
      lines.push(`scenario: ${formatKeyPath(issue.path)}: ${messages.join('; ') || issue.message}`);
    } else {
      lines.push(`scenario: ${formatPath(issue.path)}: ${issue.message}`);
    }
  }
  return lines;
}

/** Validates a parsed scenario file; throws an Error listing every bad field, one per line. */
export function parseScenario(json: unknown): Scenario {
  const result = ScenarioSchema.safeParse(json);
  if (result.success) return result.data;
  const lines = formatScenarioIssues(result.error);
  throw new Error(`invalid scenario (${lines.length} problem${lines.length === 1 ? '' : 's'}):\n${lines.join('\n')}`);
}
