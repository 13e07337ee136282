/**
 * What an operator's signature on a run covers: the commands a worker will execute for it and
 * where. A worker that requires signed runs checks, before every agent call and test run, that
 * the call matches these claims and that the signature over them was made with the
 * installation's secret (activities/run-authorization.ts).
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';

export const RunClaimsSchema = shared('schemas/authorization:RunClaimsSchema', () => z.object({
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
}));
export type RunClaims = z.infer<typeof RunClaimsSchema>;

export const RunAuthorizationSchema = shared('schemas/authorization:RunAuthorizationSchema', () => z.object({
  claims: RunClaimsSchema,
  /** HMAC-SHA256 (hex) of the canonical claims with the installation's run secret. */
  signature: z.string().regex(/^[0-9a-f]{64}$/),
}));
export type RunAuthorization = z.infer<typeof RunAuthorizationSchema>;

/** The claims' canonical text: a fixed field order, JSON. */
export function canonicalClaims(c: RunClaims): string {
  return JSON.stringify([c.workflowId, c.repoPath, c.provider, c.agentCommand, c.councilProvider, c.testCommand, c.failover ?? [], ...(c.scheduled ? [true] : [])]);
}

/** Whether `runId` is a run the claims cover: the signed id, or for a schedule one of its runs. */
export function claimsCoverRun(c: RunClaims, runId: string): boolean {
  if (c.workflowId === runId) return true;
  if (!c.scheduled || !runId.startsWith(`${c.workflowId}-`)) return false;
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(runId.slice(c.workflowId.length + 1));
}
