/**
 * The run state a continue-as-new carries, packed: every string of 10 characters or more and every
 * array or object of 24 or more (as JSON) that occurs more than once is written once, in a table,
 * and referred to by index elsewhere. The carried state is mostly such repeats: the 50 checkpoints'
 * rewind snapshots name the same tree hashes over and over (a tree is in its checkpoint, in the
 * convergence and uncertainty rings of the five snapshots after it, in every gate's pass record),
 * and their gate tracks and test records are often identical. A run of default knobs carried
 * ~200 KB into every new execution, written twice into history (the continue-as-new command and
 * the next execution's start); packed it is ~110 KB. Field names stay, so the packed state is
 * still legible in the Temporal UI (`vigil status` and the status query show it whole).
 *
 * The packed form is plain JSON. A string that starts with `~` is a reference (`~` and the table
 * index in base 36) or, when it starts with `~~`, the literal string without its first `~`; every
 * other value is itself. A reference inside a table entry points at an earlier entry only, and
 * unpacking stops at 4 million values, so no input can make it loop or explode. Unpacking builds
 * fresh objects for every reference: the unpacked state shares nothing.
 *
 * Sandbox-safe: pure functions, no I/O.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface PackedValue {
  format: 1;
  table: Json[];
  value: Json;
}

const MARK = '~';
/** Shorter repeats (as JSON text) are not worth a reference (`"~1f"` is 5 bytes). */
const MIN_STRING_JSON = 12;
const MIN_NODE_JSON = 24;
/** The most values unpacking builds (a carried state is ~10^4). */
const MAX_VALUES = 4_000_000;

const literal = (s: string): string => (s.startsWith(MARK) ? MARK + s : s);

/** `value` packed (see the module comment). `undefined` members of objects are left out, as JSON does. */
export function packValue(value: Json): PackedValue {
  // First the JSON text of every string, array and object, and how often each occurs.
  const counts = new Map<string, number>();
  const texts = new Map<object, string>();
  const count = (t: string, min: number): void => {
    if (t.length >= min) counts.set(t, (counts.get(t) ?? 0) + 1);
  };
  const text = (v: Json): string => {
    if (v === null || typeof v !== 'object') {
      const t = JSON.stringify(v);
      if (typeof v === 'string') count(t, MIN_STRING_JSON);
      return t;
    }
    const seen = texts.get(v);
    if (seen !== undefined) {
      count(seen, MIN_NODE_JSON);
      return seen;
    }
    const t = Array.isArray(v)
      ? `[${v.map(text).join(',')}]`
      : `{${members(v)
          .map(([k, x]) => `${JSON.stringify(k)}:${text(x)}`)
          .join(',')}}`;
    texts.set(v, t);
    count(t, MIN_NODE_JSON);
    return t;
  };
  text(value);

  // Then the packed value: a repeat is written into the table the first time and referred to after.
  const table: Json[] = [];
  const index = new Map<string, number>();
  const ref = (t: string, entry: () => Json): string => {
    let i = index.get(t);
    if (i === undefined) {
      const e = entry();
      i = table.length;
      table.push(e);
      index.set(t, i);
    }
    return MARK + i.toString(36);
  };
  const repeated = (t: string): boolean => (counts.get(t) ?? 0) >= 2;
  const pack = (v: Json): Json => {
    if (typeof v === 'string') {
      const t = JSON.stringify(v);
      return repeated(t) ? ref(t, () => literal(v)) : literal(v);
    }
    if (v === null || typeof v !== 'object') return v;
    const t = texts.get(v) as string;
    const entry = (): Json => (Array.isArray(v) ? v.map(pack) : Object.fromEntries(members(v).map(([k, x]) => [k, pack(x)])));
    return repeated(t) ? ref(t, entry) : entry();
  };
  return { format: 1, table, value: pack(value) };
}

/**
 * The value `packValue` packed, from any input (a run's input is untrusted): throws on a reference
 * it cannot resolve or an input that would build too much. What it returns is still to be
 * validated (RunStateSchema).
 */
export function unpackValue(packed: { readonly table: readonly unknown[]; readonly value: unknown }): unknown {
  let built = 0;
  const unpack = (v: unknown, below: number): unknown => {
    if (++built > MAX_VALUES) throw new Error(`the packed value unpacks to more than ${MAX_VALUES} values`);
    if (typeof v === 'string') {
      if (!v.startsWith(MARK)) return v;
      if (v.startsWith(MARK + MARK)) return v.slice(1);
      const digits = v.slice(1);
      const i = /^[0-9a-z]{1,8}$/.test(digits) ? parseInt(digits, 36) : NaN;
      if (!(i < below)) throw new Error(`the packed value has a bad reference "${v.slice(0, 20)}"`);
      return unpack(packed.table[i], i);
    }
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map((x: unknown) => unpack(x, below));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unpack(x, below)]));
  };
  return unpack(packed.value, packed.table.length);
}

function members(v: { [key: string]: Json }): [string, Json][] {
  return Object.entries(v).filter(([, x]) => x !== undefined);
}
