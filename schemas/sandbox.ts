/**
 * The agent sandbox's contract (docs/security.md, The agent's sandbox): the modes a run or a
 * worker may ask for, and what an agent call, a test run or a gate reports about its isolation —
 * whether it ran sandboxed, how, why not, and the escape attempts the sandbox refused.
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

/** The refused attempts a run keeps (newest, merged by role, kind and target). */
export const MAX_RUN_DENIALS = 30;

/** What a run knows of its isolation: how its latest call ran, and the escape attempts refused so far. */
export const SandboxStateSchema = shared('schemas/sandbox:SandboxStateSchema', () =>
  z.object({
    /** How the latest reported call ran (null: no call has reported yet). */
    last: SandboxReportSchema.omit({ denied: true }).nullable(),
    /** The latest refused attempts, merged by role, kind and target (the count adds up). */
    denied: z.array(SandboxDenialSeenSchema).max(MAX_RUN_DENIALS),
    /** Every refused attempt of the run, counted (the list above is bounded). */
    deniedTotal: z.number().int().min(0),
    /** Calls that ran outside the sandbox (mode off, or the platform could not). */
    unsandboxedCalls: z.number().int().min(0),
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
