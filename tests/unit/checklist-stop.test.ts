/**
 * The rule a council round that carries the checklist verifier asks its members by
 * (`checklistStop`, `verificationBlocks`): for any checklist (held-out, critical and other items,
 * waivers, any statuses), any items asked and any answer, it says "blocked" exactly when the
 * checklist gate would block on the state the answer leaves (`checklistBlock`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChecklistState } from '../../schemas/gates.js';
import { checklistBlock, checklistStop, verificationBlocks } from '../../rules/checklist/state.js';

const status = fc.constantFrom('passing', 'failing', 'unverified', undefined);
const answer = fc.constantFrom('passing', 'failing', undefined);

const item = fc.record({
  priority: fc.constantFrom('critical', 'high', 'medium', 'low'),
  held: fc.boolean(),
  waived: fc.boolean(),
  status,
  asked: fc.boolean(),
  answer,
});

function stateOf(items: { priority: string; held: boolean; waived: boolean; status: string | undefined }[]): ChecklistState {
  const ids = items.map((_, i) => `REQ-${i + 1}`);
  return {
    items: items.map((it, i) => ({ id: ids[i] as string, title: `item ${i + 1}`, priority: it.priority as 'critical', verify: '' })),
    heldOut: ids.filter((_, i) => items[i]?.held).slice(0, 5),
    source: 'file',
    status: Object.fromEntries(
      items.flatMap((it, i) => (it.status === undefined ? [] : [[ids[i], { status: it.status, evidence: '', iteration: 1 }]])),
    ),
    waivers: ids
      .filter((_, i) => items[i]?.waived)
      .map((id) => ({ item: id, by: 'a person', reason: 'not needed', at: '2026-01-01T00:00:00Z' })),
  } as ChecklistState;
}

describe('checklistStop', () => {
  it('agrees with the gate on the state every answer leaves', () => {
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 8 }), (items) => {
        const state = stateOf(items);
        const asked = state.items.filter((_, i) => items[i]?.asked).map((i) => i.id);
        const answers = Object.fromEntries(
          state.items.flatMap((it, i) => {
            const a = items[i]?.answer;
            return asked.includes(it.id) && a !== undefined ? [[it.id, { status: a as 'passing' | 'failing' }]] : [];
          }),
        );
        const after: ChecklistState = {
          ...state,
          status: {
            ...state.status,
            ...Object.fromEntries(Object.entries(answers).map(([id, a]) => [id, { status: a.status, evidence: '', iteration: 2 }])),
          },
        };
        expect(verificationBlocks(checklistStop(state, asked), answers)).toBe(checklistBlock(after).blocked);
      }),
      { numRuns: 2000 },
    );
  });

  it('names what must pass, what must not fail, and when nothing the verifier says can help', () => {
    const state = stateOf([
      { priority: 'critical', held: false, waived: false, status: 'failing' },
      { priority: 'critical', held: false, waived: false, status: 'passing' },
      { priority: 'low', held: true, waived: false, status: undefined },
      { priority: 'low', held: false, waived: false, status: 'failing' },
      { priority: 'critical', held: false, waived: true, status: 'failing' },
    ]);
    expect(checklistStop(state, ['REQ-1', 'REQ-2', 'REQ-3', 'REQ-4', 'REQ-5'])).toEqual({
      blockedAnyway: false,
      mustPass: ['REQ-1', 'REQ-3'],
      mustNotFail: ['REQ-2'],
    });
    // The failing critical item is not asked: it blocks whatever the answer.
    expect(checklistStop(state, ['REQ-2', 'REQ-3'])).toEqual({ blockedAnyway: true, mustPass: ['REQ-3'], mustNotFail: ['REQ-2'] });
    expect(
      verificationBlocks(checklistStop(state, ['REQ-2', 'REQ-3']), { 'REQ-2': { status: 'passing' }, 'REQ-3': { status: 'passing' } }),
    ).toBe(true);
  });
});
