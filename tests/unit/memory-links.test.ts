/**
 * The links consolidation draws beyond derivation (rules/memory-links.ts): the other side of a
 * supersession, an installation item's examples, elaborations and relations between items of one
 * topic and subject (bounded per item), and the fixes that support a skill. Pure.
 */
import { describe, expect, it } from 'vitest';
import { moreLinks, SIBLING_LINKS_PER_ITEM, type FixedBySkill } from '../../rules/memory-links.js';
import type { Pattern, PatternLink } from '../../schemas/lasting-memory.js';

const pattern = (repo: string | null, kind: Pattern['kind'], signature: string): Pattern => ({
  repo,
  kind,
  signature,
  topic: signature.split(':')[0] === 'gate' ? (signature.split(':')[1] ?? 'gate') : (signature.split(':')[0] ?? 'other'),
  title: signature,
  body: signature,
  keywords: [],
  evidence: 3,
  runs: 1,
  firstSeen: null,
  lastSeen: null,
  importance: 0.6,
  from: [],
});
const end = (p: Pattern): PatternLink['from'] => ({ repo: p.repo, kind: p.kind, signature: p.signature });
const none: FixedBySkill = new Map();

describe('moreLinks', () => {
  it('superseded_by: the other side of every supersedes, nothing for a contradiction', () => {
    const anti = pattern('/r', 'anti_pattern', 'tests:adds:boom');
    const fix = pattern('/r', 'pattern', 'tests:adds:boom');
    const links: PatternLink[] = [
      { relation: 'supersedes', from: end(fix), to: end(anti) },
      { relation: 'contradicts', from: end(fix), to: end(anti) },
    ];
    expect(moreLinks([anti, fix], links, none).filter((l) => l.relation === 'superseded_by')).toEqual([
      { relation: 'superseded_by', from: end(anti), to: end(fix) },
    ]);
  });

  it("example_of: a repository's item is an example of the installation's item of its kind and signature, not of another kind's", () => {
    const local = pattern('/r', 'anti_pattern', 'gate:lint:no-unused');
    const general = pattern(null, 'anti_pattern', 'gate:lint:no-unused');
    const otherKind = pattern('/s', 'pattern', 'gate:lint:no-unused');
    const made = moreLinks([local, general, otherKind], [], none).filter((l) => l.relation === 'example_of');
    expect(made).toEqual([{ relation: 'example_of', from: end(local), to: end(general) }]);
  });

  it('elaborates: a signature that says more about the same failure; related_to: one of the same topic and subject that does not', () => {
    const general = pattern('/r', 'anti_pattern', 'tests:adds');
    const specific = pattern('/r', 'anti_pattern', 'tests:adds:Expected 3');
    const sibling = pattern('/r', 'anti_pattern', 'tests:adds:TypeError');
    const otherTest = pattern('/r', 'anti_pattern', 'tests:subtracts:Expected 3');
    const otherRepo = pattern('/s', 'anti_pattern', 'tests:adds:Expected 9');
    const made = moreLinks([general, specific, sibling, otherTest, otherRepo], [], none);
    expect(made).toContainEqual({ relation: 'elaborates', from: end(specific), to: end(general) });
    expect(made).toContainEqual({ relation: 'elaborates', from: end(sibling), to: end(general) });
    expect(made).toContainEqual({ relation: 'related_to', from: end(specific), to: end(sibling) });
    // Another test, another repository: no link.
    for (const far of [otherTest, otherRepo])
      expect(made.filter((l) => l.from.signature === far.signature || l.to.signature === far.signature)).toEqual([]);
  });

  it('a subject with many signatures is not a mesh: at most SIBLING_LINKS_PER_ITEM links from one item', () => {
    const many = Array.from({ length: 30 }, (_, i) => pattern('/r', 'anti_pattern', `tests:adds:reason ${String(i).padStart(2, '0')}`));
    const made = moreLinks(many, [], none);
    const from = (sig: string): number => made.filter((l) => l.from.signature === sig).length;
    expect(Math.max(...many.map((p) => from(p.signature)))).toBe(SIBLING_LINKS_PER_ITEM);
    expect(made.length).toBeLessThanOrEqual(many.length * SIBLING_LINKS_PER_ITEM);
  });

  it("supports: a repository's fix supports the skill whose runs fixed its signature; a failure without a fix supports nothing", () => {
    const fix = pattern('/r', 'pattern', 'tests:adds:boom');
    const antiOnly = pattern('/r', 'anti_pattern', 'gate:lint:x');
    const fixed: FixedBySkill = new Map([
      ['/r\u0000add numbers', { repo: '/r', taskKind: 'add numbers', fixed: new Set(['tests:adds:boom', 'gate:lint:x']) }],
      ['/s\u0000add numbers', { repo: '/s', taskKind: 'add numbers', fixed: new Set(['tests:adds:boom']) }],
    ]);
    expect(moreLinks([fix, antiOnly], [], fixed).filter((l) => l.relation === 'supports')).toEqual([
      { relation: 'supports', from: end(fix), to: { repo: '/r', kind: 'skill', signature: 'add numbers' } },
    ]);
  });
});
