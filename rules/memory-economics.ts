/**
 * Token economics of the lasting memory, per agent call (docs/memory.md, Token economics): the
 * tokens the call's prompt read from memory (its layers) against the tokens the call added to it
 * (discovery: its trace and the patterns its agent stored), and the original's four thresholds,
 * each with the action it names. Vigil acts on two at the run's next retrieval (`retrievalActs`):
 * a discovery/read ratio over 0.15 compresses the entries layer (layer 3), savings under 50 %
 * raise the relevance floor (the topics' relevance reviewed). The other two name work the
 * original did on its stored index files; Vigil's index and topics are computed from the store
 * for every prompt, so they are recorded, already true by construction. Pure.
 */
import { CHARS_PER_TOKEN } from './memory-retrieval.js';

export type EconomyAction = 'compress_layer3' | 'review_topic_relevance' | 'create_specialized_index' | 'reorganize_topic_index';

/** The original's thresholds (its token_economics), in priority order. */
export const ECONOMY_THRESHOLDS: readonly {
  metric: 'ratio' | 'savingsPercent' | 'layer3Loads' | 'discoveryTokens';
  op: '>' | '<';
  value: number;
  action: EconomyAction;
}[] = [
  { metric: 'ratio', op: '>', value: 0.15, action: 'compress_layer3' },
  { metric: 'savingsPercent', op: '<', value: 50, action: 'review_topic_relevance' },
  { metric: 'layer3Loads', op: '>', value: 3, action: 'create_specialized_index' },
  { metric: 'discoveryTokens', op: '>', value: 200, action: 'reorganize_topic_index' },
];

export interface CallEconomics {
  /** Tokens the prompt read from memory, all layers. */
  readTokens: number;
  /** Tokens the call added to memory (its trace, its stored patterns). */
  discoveryTokens: number;
  /** discovery / read (read counted at least 1). */
  ratio: number;
  /** How much of what the memory holds the prompt did not load (100: nothing loaded). */
  savingsPercent: number;
  /** Entries loaded whole (layer 3). */
  layer3Loads: number;
  actions: EconomyAction[];
}

/** What the retrieval side knows of a call (recorded with its retrieval). */
export interface ReadSide {
  chars: { index: number; timeline: number; entries: number };
  entriesLoaded: number;
  /** Characters the memory's candidates would take loaded whole (every item and the timeline). */
  availableChars: number;
}

const tokens = (chars: number): number => Math.ceil(Math.max(0, chars) / CHARS_PER_TOKEN);
const round = (n: number, d: number): number => Math.round(n * 10 ** d) / 10 ** d;

/** A call's economics: its read side (null when it retrieved nothing) and the characters it added, with the thresholds it crossed. */
export function callEconomics(read: ReadSide | null, discoveryChars: number): CallEconomics {
  const readChars = read ? read.chars.index + read.chars.timeline + read.chars.entries : 0;
  const readTokens = tokens(readChars);
  const discoveryTokens = tokens(discoveryChars);
  const m = {
    readTokens,
    discoveryTokens,
    ratio: round(discoveryTokens / Math.max(1, readTokens), 3),
    savingsPercent:
      read && read.availableChars > 0 ? round(100 * (1 - Math.min(readChars, read.availableChars) / read.availableChars), 1) : 100,
    layer3Loads: read?.entriesLoaded ?? 0,
  };
  // Nothing read: no ratio or savings to judge (a prompt without memory is not compressed further).
  const judged = (metric: (typeof ECONOMY_THRESHOLDS)[number]['metric']): boolean =>
    readTokens > 0 || metric === 'discoveryTokens' || metric === 'layer3Loads';
  const actions = ECONOMY_THRESHOLDS.filter((t) => judged(t.metric) && (t.op === '>' ? m[t.metric] > t.value : m[t.metric] < t.value)).map(
    (t) => t.action,
  );
  return { ...m, actions };
}

/** The entry body's length when layer 3 is compressed. */
export const COMPRESSED_ENTRY_CHARS = 160;
/** The share of the best match an entry needs when the topics' relevance is under review. */
export const REVIEWED_FLOOR = 0.5;

/** What the run's next retrieval does about the last call's actions. */
export function retrievalActs(actions: readonly string[]): { compress: boolean; strictFloor: boolean } {
  return { compress: actions.includes('compress_layer3'), strictFloor: actions.includes('review_topic_relevance') };
}

/** One agent call's economics as `vigil memory economics` shows it. */
export interface CallEconomicsLine extends Omit<CallEconomics, 'actions'> {
  runId: string;
  iteration: number;
  /** The thresholds the call crossed (what its run's next retrieval was asked to do). */
  actions: string[];
  /** What this call's retrieval did about the call before it. */
  acted: string[];
}

export interface EconomicsTotals {
  calls: number;
  readTokens: number;
  discoveryTokens: number;
  /** All discovery over all reading (read counted at least 1). */
  ratio: number;
  /** The mean of the calls' savings. */
  savingsPercent: number;
  layer3Loads: number;
  /** Each threshold, and how many calls crossed it. */
  crossed: Partial<Record<EconomyAction, number>>;
}

/** The totals of some calls' economics. */
export function economicsTotals(calls: readonly CallEconomicsLine[]): EconomicsTotals {
  const sum = (f: (c: CallEconomicsLine) => number): number => calls.reduce((n, c) => n + f(c), 0);
  const crossed: Partial<Record<EconomyAction, number>> = {};
  for (const t of ECONOMY_THRESHOLDS) {
    const n = calls.filter((c) => c.actions.includes(t.action)).length;
    if (n > 0) crossed[t.action] = n;
  }
  const readTokens = sum((c) => c.readTokens);
  const discoveryTokens = sum((c) => c.discoveryTokens);
  return {
    calls: calls.length,
    readTokens,
    discoveryTokens,
    ratio: round(discoveryTokens / Math.max(1, readTokens), 3),
    savingsPercent: calls.length ? round(sum((c) => c.savingsPercent) / calls.length, 1) : 100,
    layer3Loads: sum((c) => c.layer3Loads),
    crossed,
  };
}
