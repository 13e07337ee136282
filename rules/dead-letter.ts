/**
 * The dead letter (seed 001 "Dead Letter Queue"): a failure that keeps coming back the same way
 * (5+ attempts) is set aside with its context instead of being retried forever. Owns the failure
 * fingerprint, the carried `DeadLetterState` and its schema.
 *
 *   - `failureFingerprint(errorClass, tail)`: the error class plus a hash of the last 5 non-empty
 *     lines of the tail, normalised so that the same failure on another attempt fingerprints the
 *     same: ANSI colours, timestamps and clock times, UUIDs, temp-dir paths, hex ids, pids,
 *     durations and then every other number are replaced by placeholders; whitespace collapses.
 *   - `trackDeadLetter(state, observation, threshold = 5)`: counts the fingerprint; when its count
 *     reaches the threshold the failure is dead-lettered, once per fingerprint (later occurrences
 *     update the entry's attempts, last time, iterations and tail, and return null).
 *
 * Bounds: at most 50 fingerprints are counted (the least recently seen is forgotten first), at
 * most 20 dead-letter entries are kept (the oldest is dropped first); an entry keeps its last 10
 * distinct iterations and the last 1000 characters of the latest tail. A fingerprint forgotten
 * from both lists could be dead-lettered again.
 *
 * Pure: times are ISO strings given by the caller; the input state is never mutated.
 */
import {
  DEAD_LETTER_THRESHOLD,
  MAX_DEAD_LETTERS,
  MAX_ENTRY_ITERATIONS,
  MAX_ERROR_CLASS_CHARS,
  MAX_TAIL_CHARS,
  MAX_TRACKED_FINGERPRINTS,
  type DeadLetterEntry,
  type DeadLetterState,
  type TrackedFailure,
} from '../schemas/dead-letter.js';

export {
  DEAD_LETTER_THRESHOLD,
  DeadLetterEntrySchema,
  DeadLetterStateSchema,
  MAX_DEAD_LETTERS,
  MAX_ENTRY_ITERATIONS,
  MAX_TAIL_CHARS,
  MAX_TRACKED_FINGERPRINTS,
} from '../schemas/dead-letter.js';
export type { DeadLetterEntry, DeadLetterState } from '../schemas/dead-letter.js';

const FINGERPRINT_LINES = 5;

// ---- Fingerprint --------------------------------------------------------------------------------

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');

/** Applied in order: specific shapes first, bare numbers last. */
const NORMALISERS: readonly (readonly [RegExp, string])[] = [
  [ANSI, ''],
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, '<time>'],
  [/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, '<time>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<id>'],
  [/(?:\/private)?\/(?:tmp|var\/tmp|var\/folders)\/[^\s'"`:),]*/g, '<tmp>'],
  [/\b[A-Za-z]:\\[^\s'"`]*?\\Temp\\[^\s'"`:),]*/gi, '<tmp>'],
  [/\b0x[0-9a-f]+\b/gi, '<hex>'],
  [/\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/gi, '<hex>'],
  [/\bpid[\s:=#]*\d+/gi, 'pid <n>'],
  [/\b\d+(?:\.\d+)?\s*(?:ns|µs|us|ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b/gi, '<duration>'],
  [/\d+(?:\.\d+)?/g, '<n>'],
  [/\s+/g, ' '],
];

function normaliseLine(line: string): string {
  return NORMALISERS.reduce((l, [re, by]) => l.replace(re, by), line).trim();
}

/** The last 5 non-empty lines of a tail, normalised. */
export function normalisedTail(tail: string): string[] {
  return tail
    .split(/\r?\n/)
    .map(normaliseLine)
    .filter((l) => l !== '')
    .slice(-FINGERPRINT_LINES);
}

/** FNV-1a, 32 bits, from a given offset basis. */
function fnv1a(text: string, basis: number): string {
  let h = basis >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

function errorClassOf(errorClass: string): string {
  return errorClass.trim().slice(0, MAX_ERROR_CLASS_CHARS) || 'unknown';
}

/** `<error class>:<16 hex digits>`; equal for failures that differ only in the normalised parts. */
export function failureFingerprint(errorClass: string, tail: string): string {
  const cls = errorClassOf(errorClass);
  const body = `${cls}\n${normalisedTail(tail).join('\n')}`;
  return `${cls}:${fnv1a(body, 0x811c9dc5)}${fnv1a(body, 0x050c5d1f)}`;
}

// ---- State ----------------------------------------------------------------------------------

export function initialDeadLetterState(): DeadLetterState {
  return { tracked: [], entries: [] };
}

export interface FailureObservation {
  fingerprint: string;
  errorClass: string;
  tail: string;
  atIso: string;
  iteration: number;
}

function withIteration(iterations: readonly number[], iteration: number): number[] {
  return [...iterations.filter((i) => i !== iteration), iteration].slice(-MAX_ENTRY_ITERATIONS);
}

function bounded(o: FailureObservation): FailureObservation {
  return {
    fingerprint: o.fingerprint.slice(0, MAX_ERROR_CLASS_CHARS + 20) || 'unknown',
    errorClass: errorClassOf(o.errorClass),
    tail: o.tail.slice(-MAX_TAIL_CHARS),
    atIso: o.atIso.slice(0, 64),
    iteration: Number.isFinite(o.iteration) ? Math.max(0, Math.floor(o.iteration)) : 0,
  };
}

const thresholdOf = (t: number): number => (Number.isFinite(t) ? Math.max(1, Math.floor(t)) : DEAD_LETTER_THRESHOLD);

function counted(tracked: readonly TrackedFailure[], o: FailureObservation): { next: TrackedFailure; tracked: TrackedFailure[] } {
  const prior = tracked.find((t) => t.fingerprint === o.fingerprint);
  const next: TrackedFailure = prior
    ? { ...prior, count: prior.count + 1, iterations: withIteration(prior.iterations, o.iteration) }
    : { fingerprint: o.fingerprint, count: 1, firstAt: o.atIso, iterations: [o.iteration] };
  return { next, tracked: [...tracked.filter((t) => t !== prior), next].slice(-MAX_TRACKED_FINGERPRINTS) };
}

/**
 * Counts one failure. `deadLettered` is the new entry the first time the fingerprint reaches the
 * threshold, else null.
 */
export function trackDeadLetter(
  state: DeadLetterState,
  observation: FailureObservation,
  threshold: number = DEAD_LETTER_THRESHOLD,
): { state: DeadLetterState; deadLettered: DeadLetterEntry | null } {
  const o = bounded(observation);
  const { next, tracked } = counted(state.tracked, o);
  const existing = state.entries.find((e) => e.fingerprint === o.fingerprint);
  if (existing) {
    const updated: DeadLetterEntry = {
      ...existing,
      attempts: existing.attempts + 1,
      lastAt: o.atIso,
      iterations: withIteration(existing.iterations, o.iteration),
      tail: o.tail,
    };
    return { state: { tracked, entries: state.entries.map((e) => (e === existing ? updated : e)) }, deadLettered: null };
  }
  if (next.count < thresholdOf(threshold)) return { state: { tracked, entries: state.entries }, deadLettered: null };
  const entry: DeadLetterEntry = {
    fingerprint: o.fingerprint,
    errorClass: o.errorClass,
    attempts: next.count,
    firstAt: next.firstAt,
    lastAt: o.atIso,
    iterations: next.iterations,
    tail: o.tail,
  };
  return { state: { tracked, entries: [...state.entries, entry].slice(-MAX_DEAD_LETTERS) }, deadLettered: entry };
}
