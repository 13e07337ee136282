/**
 * The links consolidation draws between the items it made, beyond each item's derivation
 * (docs/memory.md, Links). The original's eight relations, each with the rule that draws it here:
 *
 * | relation | from → to | when |
 * |---|---|---|
 * | `derived_from` | item → episode; installation item → repository item | the item was made from it |
 * | `supersedes` | pattern → anti-pattern (one signature, one repository) | the fix came after the last failure |
 * | `superseded_by` | anti-pattern → pattern | the other side of `supersedes` |
 * | `contradicts` | pattern → anti-pattern | the signature failed again after its fix |
 * | `example_of` | repository item → installation item | the repository's case of the lesson its installation learnt |
 * | `elaborates` | item → item of the same kind, topic and subject | its signature is the other's with more detail |
 * | `related_to` | item → item of the same kind, topic and subject | neither elaborates the other (the lower signature first) |
 * | `supports` | pattern → skill (one repository) | a run the skill was made from fixed the pattern's signature |
 *
 * Pure; the links name items by scope, kind and signature (a skill by its task kind).
 */
import type { Pattern, PatternLink } from '../schemas/lasting-memory.js';
import { signatureParts } from './memory-signatures.js';

/** Per skill (keyed by repository and task kind), the signatures the runs it was made from fixed. */
export type FixedBySkill = Map<string, { repo: string; taskKind: string; fixed: Set<string> }>;

/** At most this many `related_to`/`elaborates` links from one item (a topic with hundreds of signatures is not a mesh). */
export const SIBLING_LINKS_PER_ITEM = 8;

type End = PatternLink['from'];

const endOf = (p: Pick<Pattern, 'repo' | 'kind' | 'signature'>): End => ({ repo: p.repo, kind: p.kind, signature: p.signature });

/** `superseded_by` for every `supersedes` among `links` (the original keeps both sides). */
function inverses(links: readonly PatternLink[]): PatternLink[] {
  const out: PatternLink[] = [];
  for (const l of links)
    if (l.relation === 'supersedes' && l.to.kind !== 'skill')
      out.push({ relation: 'superseded_by', from: { ...l.to, kind: l.to.kind }, to: l.from });
  return out;
}

/** `example_of`: each repository item an installation item was made from is an example of it. */
function examples(patterns: readonly Pattern[]): PatternLink[] {
  const general = new Set(patterns.filter((p) => p.repo === null).map((p) => `${p.kind}\u0000${p.signature}`));
  return patterns
    .filter((p) => p.repo !== null && general.has(`${p.kind}\u0000${p.signature}`))
    .map((p) => ({ relation: 'example_of', from: endOf(p), to: { repo: null, kind: p.kind, signature: p.signature } }));
}

/** `elaborates` and `related_to` between items of one scope, kind, topic and subject. */
function siblings(patterns: readonly Pattern[]): PatternLink[] {
  const groups = new Map<string, Pattern[]>();
  for (const p of patterns) {
    const parts = signatureParts(p.signature);
    const k = `${p.repo ?? ''}\u0000${p.kind}\u0000${parts.topic}\u0000${parts.subject}`;
    groups.set(k, [...(groups.get(k) ?? []), p]);
  }
  const out: PatternLink[] = [];
  for (const [, group] of [...groups.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    const list = [...group].sort((a, b) => a.signature.localeCompare(b.signature));
    for (const [i, a] of list.entries()) {
      let made = 0;
      for (const b of list.slice(i + 1)) {
        if (made >= SIBLING_LINKS_PER_ITEM) break;
        made++;
        // The signature that starts with the other's, then a colon, says more about the same failure.
        if (b.signature.startsWith(`${a.signature}:`)) out.push({ relation: 'elaborates', from: endOf(b), to: endOf(a) });
        else out.push({ relation: 'related_to', from: endOf(a), to: endOf(b) });
      }
    }
  }
  return out;
}

/** `supports`: a repository's fix pattern supports each of its skills whose runs fixed that signature. */
function supports(patterns: readonly Pattern[], fixedBySkill: FixedBySkill): PatternLink[] {
  const fixes = new Set(patterns.filter((p) => p.kind === 'pattern' && p.repo !== null).map((p) => `${p.repo}\u0000${p.signature}`));
  const out: PatternLink[] = [];
  for (const [, s] of [...fixedBySkill.entries()].sort((a, b) => a[0].localeCompare(b[0])))
    for (const sig of [...s.fixed].sort())
      if (fixes.has(`${s.repo}\u0000${sig}`))
        out.push({
          relation: 'supports',
          from: { repo: s.repo, kind: 'pattern', signature: sig },
          to: { repo: s.repo, kind: 'skill', signature: s.taskKind },
        });
  return out;
}

/**
 * The links beyond derivation, supersession and contradiction (which `consolidate` draws): the
 * other side of each supersession, examples, elaborations, relations and support.
 * `fixedBySkill`: per skill (keyed by repository and task kind), the signatures its runs fixed.
 */
export function moreLinks(patterns: readonly Pattern[], links: readonly PatternLink[], fixedBySkill: FixedBySkill): PatternLink[] {
  return [...inverses(links), ...examples(patterns), ...siblings(patterns), ...supports(patterns, fixedBySkill)];
}
