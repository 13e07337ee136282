/**
 * A pattern an agent (or a person) stores in the memory that outlives a run (docs/memory.md,
 * Patterns an agent stores), as rules: secrets redacted before anything is written, its
 * signature (the same lesson stored again is one item, its evidence counted), its keywords, the
 * lower trust it starts with, and the check of a signal line's word about its run against what
 * Vigil knows. Pure.
 */
import type { AgentPattern, MemorySignalLine } from '../schemas/memory-agent.js';
import { keywordsOf } from './lasting-memory.js';
import { redactSecrets } from './scans.js';

/**
 * The importance an agent's pattern starts with: below every pattern consolidation makes from
 * evidence (0.5 and up), so that with the same match the evidence ranks first; each time it is
 * stored again (another call, another run found it worth keeping) it gains a little.
 */
export const AGENT_PATTERN_IMPORTANCE = 0.3;
export const AGENT_PATTERN_REPEAT_GAIN = 0.05;

/** Signatures of stored patterns begin with this: consolidation's never do (tests:, gate:, exit:, council:). */
export const AGENT_SIGNATURE_PREFIX = 'agent:';

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** The pattern with every secret replaced by a marker (the house's redactor, shared with the secret-scan gate), and how many. */
export function redactPattern(p: AgentPattern): { pattern: AgentPattern; redactions: number } {
  let redactions = 0;
  const red = (s: string): string => {
    const r = redactSecrets(s);
    redactions += r.redactions;
    return r.text;
  };
  const pattern: AgentPattern = {
    kind: p.kind,
    topic: oneLine(red(p.topic)).toLowerCase(),
    title: oneLine(red(p.title)),
    body: oneLine(red(p.body)),
    keywords: p.keywords.map((k) => oneLine(red(k)).toLowerCase()).filter((k) => k !== ''),
  };
  return { pattern, redactions };
}

/** The item's identity: its kind and title, case and spacing aside (the same lesson stored twice is one item). */
export function agentSignature(p: Pick<AgentPattern, 'title'>): string {
  return `${AGENT_SIGNATURE_PREFIX}${oneLine(p.title).toLowerCase()}`.slice(0, 240);
}

/** The words retrieval and search match it on: the agent's own, then those of its title, topic and body. */
export function agentKeywords(p: AgentPattern): string[] {
  return [...new Set([...p.keywords, ...keywordsOf(`${p.title} ${p.topic} ${p.body}`)])].slice(0, 40);
}

/**
 * How retrieval and search show an agent's pattern (a prompt's entry is its body): its title and
 * body, marked as its storer's word, not Vigil's evidence.
 */
export function agentBody(
  p: { title: string; body: string },
  by: { via: 'agent'; runId: string; iteration: number } | { via: 'operator'; by: string },
): string {
  const who = by.via === 'agent' ? `an agent of run ${by.runId} (iteration ${by.iteration})` : `${by.by}, through vigil mcp`;
  // The mark first: a compressed entry (rules/memory-economics.ts) keeps it.
  return `[stored by ${who}; not checked by Vigil] ${p.title}: ${p.body}`;
}

/**
 * Whether a signal line may be stored as the call's: the call that left it is the one Vigil ran
 * (the run and iteration it knows), whatever the line says. A line that names another run or
 * iteration is refused, with why.
 */
export function refusalOf(line: MemorySignalLine, call: { runId: string; iteration: number }): string | null {
  if (line.runId !== call.runId)
    return (
      `it names run "${line.runId}", but the call that left it is of run "${call.runId}": ` +
      "a pattern is stored as the run whose call stored it, never another's"
    );
  if (line.iteration !== call.iteration)
    return `it names iteration ${line.iteration}, but the call that left it is iteration ${call.iteration} (a line left over from another call)`;
  return null;
}
