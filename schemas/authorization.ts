/**
 * What an operator's signature on a run covers: the commands a worker will execute for it and
 * where, the PRD and the knobs it runs with, and when and how often it may start. A worker that
 * requires signed runs admits the run once, at its start (activities/run-authorization.ts
 * `admitRun`: the signature, the expiry, the PRD's and the knobs' digests, and a nonce used by no
 * other run), then checks before every agent call and test run that the call matches these claims
 * and belongs to the run it admitted.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { defaultKnobs, KnobsSchema, type Knobs } from './knobs.js';
import { shared } from './shared.js';

/** How long a signature admits a run start, from signing (`vigil start`): an hour. */
export const RUN_SIGNATURE_TTL_MS = 60 * 60 * 1000;

const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const RunClaimsSchema = shared('schemas/authorization:RunClaimsSchema', () =>
  z.object({
    workflowId: z.string(),
    repoPath: z.string(),
    provider: z.string(),
    agentCommand: z.array(z.string()),
    councilProvider: z.string(),
    testCommand: z.string(),
    /** Providers that may take iterations over (knob providerFailover), with their own CLIs. */
    failover: z.array(z.string()).optional(),
    /** A schedule's runs: the signature covers `<workflowId>-<scheduled time>` (Temporal's id for each run). */
    scheduled: z.boolean().optional(),
    // Signed by every CLI from the admission on; a worker that requires signed runs refuses claims without them.
    /** The PRD the run reads (its absolute path on the run's host). */
    prdPath: z.string().optional(),
    /** sha256 (hex) of the PRD's bytes when signed; null: a PRD on another host, bound by its path only. */
    prdSha256: Sha256Hex.nullable().optional(),
    /** sha256 (hex) of `canonicalKnobs(knobs)`. */
    knobsSha256: Sha256Hex.optional(),
    /** Random, hex: admitted once per run (per scheduled run id for a schedule). */
    nonce: z
      .string()
      .regex(/^[0-9a-f]{32,64}$/)
      .optional(),
    /** ISO time after which the signature admits no run start; null: a schedule's template, which has none. */
    expiresAt: z.string().nullable().optional(),
    /** sha256 (hex) of `canonicalTasks(tasks)` when the run was given a task list (`vigil start --tasks`). */
    tasksSha256: Sha256Hex.optional(),
    /**
     * sha256 (hex) of `canonicalKnobsGiven(knobsGiven)` when the run says which knobs a person set
     * (they decide where the measured complexity may size the council and the review panel).
     */
    knobsGivenSha256: Sha256Hex.optional(),
  }),
);
export type RunClaims = z.infer<typeof RunClaimsSchema>;

export const RunAuthorizationSchema = shared('schemas/authorization:RunAuthorizationSchema', () =>
  z.object({
    claims: RunClaimsSchema,
    /** HMAC-SHA256 (hex) of the canonical claims with the installation's run secret. */
    signature: z.string().regex(/^[0-9a-f]{64}$/),
    /**
     * Not signed: the run's first execution (Temporal's firstExecutionRunId, the same across
     * continue-as-new), set by the workflow on what it hands its activities, whatever the input said.
     * The admission is recorded for it; every call must belong to it.
     */
    firstExecutionRunId: z.string().optional(),
  }),
);
export type RunAuthorization = z.infer<typeof RunAuthorizationSchema>;

/** The input of the admission activity (`admitRun`), asked once per run at its start. */
export const AdmitRunInputSchema = shared('schemas/authorization:AdmitRunInputSchema', () =>
  z.object({
    /** The workflow id. */
    runId: z.string(),
    repoPath: z.string(),
    prdPath: z.string(),
    /** The knobs the run started with (its input's). */
    knobs: KnobsSchema,
    authorization: RunAuthorizationSchema.nullable(),
    /** The task list the run was given (`vigil start --tasks`), checked against the signed digest. */
    tasks: z.array(z.object({ id: z.string(), title: z.string(), items: z.array(z.unknown()), dependsOn: z.array(z.string()) })).optional(),
    /** The names of the knobs a person set (the run input's `knobsGiven`), checked against the signed digest. */
    knobsGiven: z.array(z.string()).optional(),
    /** The workflow that started this one as its child, as Temporal says (a client cannot set it): how a parallel stream shows it belongs to its run. */
    parent: z.object({ workflowId: z.string() }).nullable().optional(),
  }),
);
export type AdmitRunInput = z.infer<typeof AdmitRunInputSchema>;

export const AdmitRunResultSchema = shared('schemas/authorization:AdmitRunResultSchema', () =>
  z.object({
    /** Why the worker does not run it (the run ends `agent_not_runnable` with it); null: admitted. */
    refused: z.string().nullable(),
  }),
);
export type AdmitRunResult = z.infer<typeof AdmitRunResultSchema>;

/** Whether the claims carry what the admission checks (signed by a current CLI). */
export function claimsAdmittable(c: RunClaims): c is RunClaims & { prdPath: string; knobsSha256: string; nonce: string } {
  return (
    c.prdPath !== undefined &&
    c.knobsSha256 !== undefined &&
    c.nonce !== undefined &&
    c.expiresAt !== undefined &&
    c.prdSha256 !== undefined
  );
}

/** The claims' canonical text: a fixed field order, JSON. */
export function canonicalClaims(c: RunClaims): string {
  const legacy = [
    c.workflowId,
    c.repoPath,
    c.provider,
    c.agentCommand,
    c.councilProvider,
    c.testCommand,
    c.failover ?? [],
    ...(c.scheduled ? [true] : []),
  ];
  if (c.nonce === undefined) return JSON.stringify(legacy);
  return JSON.stringify([
    ...legacy,
    {
      prdPath: c.prdPath ?? null,
      prdSha256: c.prdSha256 ?? null,
      knobsSha256: c.knobsSha256 ?? null,
      nonce: c.nonce,
      expiresAt: c.expiresAt ?? null,
      scheduled: c.scheduled === true,
      ...(c.tasksSha256 ? { tasksSha256: c.tasksSha256 } : {}),
      ...(c.knobsGivenSha256 ? { knobsGivenSha256: c.knobsGivenSha256 } : {}),
    },
  ]);
}

/**
 * The knobs as the signature covers them: JSON with sorted keys, without the knobs at their
 * default (so a worker that knows a knob the signing CLI did not computes the same text).
 */
export function canonicalKnobs(knobs: Knobs): string {
  const defaults = defaultKnobs() as Record<string, unknown>;
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  const entries = Object.keys(knobs)
    .sort()
    .filter((k) => JSON.stringify(sorted((knobs as Record<string, unknown>)[k])) !== JSON.stringify(sorted(defaults[k])))
    .map((k) => [k, sorted((knobs as Record<string, unknown>)[k])]);
  return JSON.stringify(Object.fromEntries(entries));
}

/** The names of the knobs a person set, as the signature covers them: sorted, once each. */
export function canonicalKnobsGiven(names: readonly string[]): string {
  return JSON.stringify([...new Set(names)].sort());
}

/** The task list as the signature covers it: JSON of each task's id, title, items and dependencies, in order. */
export function canonicalTasks(
  tasks: readonly { id: string; title: string; items: readonly unknown[]; dependsOn: readonly string[] }[],
): string {
  return JSON.stringify(tasks.map((t) => [t.id, t.title, t.items, t.dependsOn]));
}

const STREAM_TASK = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * Whether `runId` is a parallel stream of a run the claims cover (`<run>--<task>`, a child run the
 * covered run starts): the run's id and the task; null otherwise.
 */
export function streamOfClaims(c: RunClaims, runId: string): { parentId: string; task: string } | null {
  for (let i = runId.indexOf('--'); i > 0; i = runId.indexOf('--', i + 1)) {
    const parentId = runId.slice(0, i);
    const task = runId.slice(i + 2);
    if (STREAM_TASK.test(task) && task.length <= 40 && claimsCoverRun(c, parentId)) return { parentId, task };
  }
  return null;
}

/** Whether `runId` is a run the claims cover: the signed id, or for a schedule one of its runs. */
export function claimsCoverRun(c: RunClaims, runId: string): boolean {
  if (c.workflowId === runId) return true;
  if (!c.scheduled || !runId.startsWith(`${c.workflowId}-`)) return false;
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(runId.slice(c.workflowId.length + 1));
}
