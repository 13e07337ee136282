/**
 * The held-out share of the PRD checklist (spec §2.12): how many items the builder never sees, and
 * which, chosen once by SHA-256 of their ids so that a replay chooses the same.
 *
 * Sandbox-safe: pure functions, no Node imports.
 */
import { type ChecklistItem } from '../../schemas/gates.js';
import { sha256Hex } from '../sha256.js';
import { MAX_HELD_OUT } from './common.js';

/**
 * How many of `n` checklist items are held out from the builder: `clamp(round(0.25 * n), 1, 5)`
 * (half rounds up: 6 → 2, 10 → 3) for n >= 4, and none below 4. With 1 to 3 items, holding one
 * back would hide a third or more of the requirements from the builder, which then builds nearly
 * blind and fails at completion for reasons it could not see; the original loop reserved one item
 * for 2 and 3 as well (spec §2.12), its own design notes said 4 or more, and so does this.
 */
export function heldOutCount(n: number): number {
  if (!Number.isFinite(n) || n < 4) return 0;
  return Math.min(MAX_HELD_OUT, Math.max(1, Math.round(0.25 * Math.floor(n))));
}

/**
 * The ids to hold out: rank ids by SHA-256 of the id (hex, ascending; ties by id), take the first
 * `heldOutCount(items.length)`, and return them in checklist order. Deterministic and independent
 * of the input order, so a replay or a continue-as-new chooses the same items; choose once at run
 * start and keep the result in the state.
 */
export function selectHeldOut(items: readonly ChecklistItem[]): string[] {
  const ids: string[] = [];
  const seen = new Set<string>();
  for (const it of items) {
    if (seen.has(it.id)) continue;
    seen.add(it.id);
    ids.push(it.id);
  }
  const k = heldOutCount(ids.length);
  if (k === 0) return [];
  const ranked = ids
    .map((id) => ({ id, h: sha256Hex(id) }))
    .sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const chosen = new Set(ranked.slice(0, k).map((r) => r.id));
  return ids.filter((id) => chosen.has(id));
}
