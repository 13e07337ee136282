/**
 * The run secret and what it signs: the claims a CLI signs when it starts a run (the PRD, the
 * knobs, the names of the knobs a person set, a nonce, an expiry) and the digests they carry. The
 * worker checks them (activities/run-authorization.ts); the CLI makes them (cli/runs.ts). No
 * Temporal in here: both sides read the same functions.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  canonicalClaims,
  canonicalKnobs,
  canonicalKnobsGiven,
  RUN_SIGNATURE_TTL_MS,
  type RunAuthorization,
  type RunClaims,
} from '../schemas/authorization.js';
import type { Knobs } from '../schemas/knobs.js';
import { vigilHome } from './paths.js';
import { writePrivateFile } from './safe-files.js';

export function runSecretPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.VIGIL_RUN_SECRET_FILE?.trim() || path.join(vigilHome(env), 'run-secret');
}

/** The installation's secret, or null when none exists yet (and `create` is false). */
export function runSecret(env: NodeJS.ProcessEnv = process.env, create = false): Buffer | null {
  const file = runSecretPath(env);
  if (existsSync(file)) {
    const text = readFileSync(file, 'utf8').trim();
    if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${file} is not a run secret (64 hex characters); delete it to make a new one`);
    return Buffer.from(text, 'hex');
  }
  if (!create) return null;
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writePrivateFile(file, `${randomBytes(32).toString('hex')}\n`);
  return runSecret(env, false);
}

export function signClaims(secret: Buffer, claims: RunClaims): string {
  return createHmac('sha256', secret).update(canonicalClaims(claims)).digest('hex');
}

export function signRun(secret: Buffer, claims: RunClaims): RunAuthorization {
  return { claims, signature: signClaims(secret, claims) };
}

export const sha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** The digest of the knobs a signature binds (schemas/authorization.ts `canonicalKnobs`). */
export function knobsDigest(knobs: Knobs): string {
  return sha256Hex(canonicalKnobs(knobs));
}

/** The digest of the names of the knobs a person set (schemas/authorization.ts `canonicalKnobsGiven`). */
export function knobsGivenDigest(names: readonly string[]): string {
  return sha256Hex(canonicalKnobsGiven(names));
}

/**
 * What a current CLI adds to a run's claims: the PRD (its path, and its digest when the CLI can
 * read it: null for a PRD on another host), the knobs' digest, a fresh nonce and the expiry
 * (`RUN_SIGNATURE_TTL_MS` from now; none for a schedule's template, whose runs start later).
 */
export function startClaims(opts: {
  prdPath: string;
  prdSha256: string | null;
  knobs: Knobs;
  scheduled: boolean;
  now?: number;
}): Pick<RunClaims, 'prdPath' | 'prdSha256' | 'knobsSha256' | 'nonce' | 'expiresAt'> {
  return {
    prdPath: opts.prdPath,
    prdSha256: opts.prdSha256,
    knobsSha256: knobsDigest(opts.knobs),
    nonce: randomBytes(16).toString('hex'),
    expiresAt: opts.scheduled ? null : new Date((opts.now ?? Date.now()) + RUN_SIGNATURE_TTL_MS).toISOString(),
  };
}

/** The sha256 of a PRD file's bytes, or null when it cannot be read here. */
export function prdDigest(file: string): string | null {
  try {
    return sha256Hex(readFileSync(file));
  } catch {
    return null;
  }
}
