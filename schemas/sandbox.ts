/**
 * The agent sandbox's contract (docs/security.md, The agent's sandbox): the modes a run or a
 * worker may ask for, the limits a call runs under, and what an agent call, a test run or a gate
 * reports about its isolation — whether it ran sandboxed, how, why not, the escape attempts the
 * sandbox refused, and the limit that ended it.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';

/** auto: sandboxed where the platform allows it; strict: refuse to run unsandboxed; off: never. */
export const SANDBOX_MODES = ['auto', 'strict', 'off'] as const;
export const SandboxModeSchema = z.enum(SANDBOX_MODES);
export type SandboxMode = z.infer<typeof SandboxModeSchema>;

/**
 * One kind of escape attempt the sandbox refused, as seen from outside: `connect`, a connection
 * the network proxy refused (or one to a port of the worker's own services on the sandbox's
 * loopback); `write`, a write refused by a read-only mount (EROFS); `access`, a permission refused
 * (EACCES). Writes and permissions are read from the call's output (the kernel tells only the
 * agent), so they are as precise as the agent's error messages.
 */
export const SandboxDenialSchema = shared('schemas/sandbox:SandboxDenialSchema', () =>
  z.object({
    kind: z.enum(['connect', 'write', 'access']),
    /** host:port for a connect, the path (as the output names it) otherwise. */
    target: z.string().max(300),
    count: z.number().int().min(1),
  }),
);
export type SandboxDenial = z.infer<typeof SandboxDenialSchema>;

/** At most this many distinct denials are kept per call (a loop of attempts is counted, not listed). */
export const MAX_SANDBOX_DENIALS = 30;

/**
 * The limits a sandboxed call runs under (docs/security.md, Limits inside the sandbox), as the
 * run's knobs resolved them: tasks (processes and threads), memory, and the CPU weight against
 * the worker's own processes. 0 turns the pid or the memory limit off.
 */
export const SANDBOX_LIMIT_BOUNDS = {
  pids: { min: 32, max: 4_194_304 },
  memoryMb: { min: 256, max: 16_777_216 },
  cpuWeight: { min: 1, max: 10_000 },
} as const;

const limitValue = (b: { min: number; max: number }) => z.union([z.literal(0), z.number().int().min(b.min).max(b.max)]);

export const SandboxLimitsSchema = shared('schemas/sandbox:SandboxLimitsSchema', () =>
  z.object({
    pids: limitValue(SANDBOX_LIMIT_BOUNDS.pids),
    memoryMb: limitValue(SANDBOX_LIMIT_BOUNDS.memoryMb),
    cpuWeight: z.number().int().min(SANDBOX_LIMIT_BOUNDS.cpuWeight.min).max(SANDBOX_LIMIT_BOUNDS.cpuWeight.max),
  }),
);
export type SandboxLimits = z.infer<typeof SandboxLimitsSchema>;

/**
 * A call's (or a run's) package fetches, counted (rules/package-fetches.ts): the
 * connections the sandbox's proxy let through to a package registry, by host, and those it refused
 * there, with why (the run closed the registries, or a reviewing role asked). Each fetch itself is
 * a line of the run's fetch log (`.vigil/runs/<run>/packages.jsonl`), never a payload.
 */
/** Hosts a fetch count lists at most (MAX_FETCH_HOSTS of rules/package-fetches.ts, which imports nothing). */
export const MAX_PACKAGE_HOSTS = 12;

export const PackageFetchesSchema = shared('schemas/sandbox:PackageFetchesSchema', () =>
  z.object({
    fetches: z.number().int().min(0),
    bytes: z.number().int().min(0),
    hosts: z
      .array(z.object({ host: z.string().max(300), fetches: z.number().int().min(0), bytes: z.number().int().min(0) }))
      .max(MAX_PACKAGE_HOSTS),
    refused: z.number().int().min(0),
    refusedHosts: z.array(z.string().max(300)).max(MAX_PACKAGE_HOSTS),
    refusedWhy: z.enum(['closed', 'reviewing']).nullable(),
  }),
);
export type PackageFetches = z.infer<typeof PackageFetchesSchema>;

/** What one sandboxed (or not) process reports about its isolation. */
export const SandboxReportSchema = shared('schemas/sandbox:SandboxReportSchema', () =>
  z.object({
    /** The mode the call ran under (the run's, or the worker's when stricter). */
    mode: SandboxModeSchema,
    /** Whether the process ran in the sandbox. */
    applied: z.boolean(),
    /** How it was isolated, in one line (e.g. "bubblewrap 0.8.0; repository read-only; network: 2 endpoints via proxy"). */
    isolation: z.string().max(300),
    /** Why it was not sandboxed (mode off, the platform cannot), else null. */
    reason: z.string().max(500).nullable(),
    denied: z.array(SandboxDenialSchema).max(MAX_SANDBOX_DENIALS),
    /** How the call was limited ("cgroup v2: 4096 tasks, 4096 MiB, cpu weight 50"; the fallback says what it does not limit); absent from older workers. */
    limits: z.string().max(300).optional(),
    /** Why a limit ended the call ("the agent started 4096 processes: pid limit (sandboxPids=4096)"), else null; absent from older workers. */
    limitHit: z.string().max(300).nullable().optional(),
    /** Its package fetches (absent: none, or a worker from before the fetch log). */
    packages: PackageFetchesSchema.optional(),
  }),
);
export type SandboxReport = z.infer<typeof SandboxReportSchema>;

/** A refused escape attempt as the run remembers it: which call made it. */
export const SandboxDenialSeenSchema = shared('schemas/sandbox:SandboxDenialSeenSchema', () =>
  SandboxDenialSchema.extend({
    /** The iteration whose call (or test run, gate or round) made it. */
    iteration: z.number().int().min(0),
    /** builder, tests, gates, reviewer, council, devils-advocate, checklist, checklist-verifier. */
    role: z.string().max(40),
  }),
);
export type SandboxDenialSeen = z.infer<typeof SandboxDenialSeenSchema>;

/** A call a sandbox limit ended, as the run remembers it. */
export const SandboxLimitHitSchema = shared('schemas/sandbox:SandboxLimitHitSchema', () =>
  z.object({
    iteration: z.number().int().min(0),
    role: z.string().max(40),
    reason: z.string().max(300),
  }),
);
export type SandboxLimitHit = z.infer<typeof SandboxLimitHitSchema>;

/** The limit hits a run keeps (newest). */
export const MAX_RUN_LIMIT_HITS = 5;

/** The refused attempts a run keeps (newest, merged by role, kind and target). */
export const MAX_RUN_DENIALS = 30;

/** What a run knows of its isolation: how its latest call ran, and the escape attempts refused so far. */
export const SandboxStateSchema = shared('schemas/sandbox:SandboxStateSchema', () =>
  z.object({
    /** How the latest reported call ran (null: no call has reported yet). */
    last: SandboxReportSchema.omit({ denied: true, packages: true }).nullable(),
    /** The latest refused attempts, merged by role, kind and target (the count adds up). */
    denied: z.array(SandboxDenialSeenSchema).max(MAX_RUN_DENIALS),
    /** Every refused attempt of the run, counted (the list above is bounded). */
    deniedTotal: z.number().int().min(0),
    /** Calls that ran outside the sandbox (mode off, or the platform could not). */
    unsandboxedCalls: z.number().int().min(0),
    /** The latest calls a sandbox limit ended (pids, memory), newest last; absent until one did. */
    limitHits: z.array(SandboxLimitHitSchema).max(MAX_RUN_LIMIT_HITS).optional(),
    /** Every call of the run a limit ended, counted (the list above is bounded). */
    limitHitsTotal: z.number().int().min(0).optional(),
    /** The run's package fetches, counted over its calls (absent until one fetched or was refused a fetch). */
    packages: PackageFetchesSchema.optional(),
  }),
);
export type SandboxState = z.infer<typeof SandboxStateSchema>;

/** At a run's end: the files its sandboxed calls kept on the worker's disk are removed (activity releaseRunFiles). */
export const ReleaseRunFilesInputSchema = shared('schemas/sandbox:ReleaseRunFilesInputSchema', () =>
  z.object({ runId: z.string().min(1) }),
);
export type ReleaseRunFilesInput = z.input<typeof ReleaseRunFilesInputSchema>;

export const ReleaseRunFilesResultSchema = shared('schemas/sandbox:ReleaseRunFilesResultSchema', () =>
  z.object({
    /** The folders removed (VIGIL_HOME-relative). */
    removed: z.array(z.string().max(300)).max(10),
    /** What could not be removed, and why (null: nothing left behind). */
    problem: z.string().max(500).nullable(),
  }),
);
export type ReleaseRunFilesResult = z.infer<typeof ReleaseRunFilesResultSchema>;

/** A round's call report with the role that made it (reviewer, council, devils-advocate). */
export interface RoleSandbox {
  role: string;
  report: SandboxReport;
}
