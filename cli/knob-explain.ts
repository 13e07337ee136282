/**
 * `vigil config --explain` and `--json`: each knob, its value and where the value came from, by
 * section (schemas/knob-sections.ts). The text shows the first-class knobs and every knob not at
 * its plain default, and says how many advanced ones it left out; `--all` shows every knob.
 *
 * Client-only; never imported by workflow code.
 */
import { isFirstClass, KNOB_SECTIONS } from '../schemas/knob-sections.js';
import { KNOBS, KNOB_NAMES, type KnobName, type Knobs } from '../schemas/knobs.js';
import { showValue, truncate, type KnobOrigin, type KnobSource, type ResolvedKnobs } from './knob-origin.js';

/** One row of `vigil config --explain --json`. */
export interface KnobExplanation {
  name: KnobName;
  value: Knobs[KnobName];
  source: KnobSource;
  detail: string;
  env: string;
  allowed: string;
  doc: string;
  /** Its section's id (`gates`, `council`, ...). */
  section: string;
  /** First-class (shown by `--explain` without `--all`) or advanced. */
  firstClass: boolean;
}

export interface ExplainOptions {
  /** Columns to fit (default: the terminal's, from 80 to 140; 100 when output is no terminal). */
  width?: number;
  /** Every knob, the advanced ones at their defaults too. */
  all?: boolean;
}

const EXPLAIN_VALUE_MAX = 60;
const EXPLAIN_VALUE_COLUMN_MAX = 32;

const SECTION_OF = new Map<KnobName, string>(KNOB_SECTIONS.flatMap((s) => s.knobs.map((k) => [k, s.id] as const)));

/** Every knob in registry order (the JSON form is complete whatever the text shows). */
export function explainKnobsJson(resolved: ResolvedKnobs): KnobExplanation[] {
  return KNOB_NAMES.map((name) => {
    const spec = KNOBS[name];
    const value = resolved.knobs[name];
    const origin = resolved.sources[name];
    return {
      name,
      value: Array.isArray(value) ? [...value] : value,
      source: origin.source,
      detail: origin.detail,
      env: spec.env,
      allowed: spec.allowed,
      doc: spec.doc,
      section: SECTION_OF.get(name) ?? '',
      firstClass: isFirstClass(name),
    };
  });
}

function sourceText(origin: KnobOrigin): string {
  if (origin.source === 'default') return origin.detail === 'default' || origin.detail === '' ? 'default' : `default: ${origin.detail}`;
  return origin.detail === '' ? origin.source : `${origin.source} ${origin.detail}`;
}

/** Fits `text` into `max` columns; file paths keep their end, everything else its start. */
function fitSource(origin: KnobOrigin, max: number): string {
  const text = sourceText(origin);
  if (text.length <= max || max <= 1) return text;
  // A default explained with a path: keep the explanation and the path's end.
  const withPath = origin.source === 'default' ? /^(.*?)(\/\S*?)(\)?)$/.exec(text) : null;
  if (withPath) {
    const [, before = '', p = '', after = ''] = withPath;
    const room = max - before.length - after.length - 1;
    if (room >= 8) return `${before}…${p.slice(p.length - room)}${after}`;
  }
  if (origin.source === 'file') {
    const head = 'file …';
    const room = max - head.length;
    if (room > 0) return head + origin.detail.slice(origin.detail.length - room);
  }
  return truncate(text, max);
}

function wrap(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w.length > 0)) {
    if (line.length > 0 && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line.length > 0 ? `${line} ${word}` : word;
    }
  }
  if (line.length > 0) lines.push(indent + line);
  return lines;
}

/** Shown without `--all`: a first-class knob, or one whose value is not the registry's default. */
function shown(row: KnobExplanation): boolean {
  return row.firstClass || row.source !== 'default' || (row.detail !== 'default' && row.detail !== '');
}

/**
 * The `vigil config --explain` table, section by section (a `== title ==` line each): per knob a row
 * `name  value  source`, then its doc line indented below. Values longer than the value column take
 * their own row, with the source on the next line; values are cut at ~60 characters. Fits `width`
 * columns (default: the terminal's). Without `all`, the advanced knobs at their defaults are left out and a
 * last line says how many and how to see them.
 */
export function explainKnobs(resolved: ResolvedKnobs, options: ExplainOptions = {}): string {
  const width = options.width ?? Math.max(80, Math.min(process.stdout.columns ?? 100, 140));
  const byName = new Map(explainKnobsJson(resolved).map((r) => [r.name, r]));
  const rows = KNOB_SECTIONS.flatMap((s) => s.knobs.map((k) => byName.get(k) as KnobExplanation)).map((row) => ({
    row,
    value: truncate(showValue(row.value, Number.MAX_SAFE_INTEGER), EXPLAIN_VALUE_MAX),
  }));
  const visible = options.all ? rows : rows.filter((r) => shown(r.row));
  // Columns as wide as every knob needs, shown or not: the layout does not move with --all.
  const nameW = Math.max('KNOB'.length, ...rows.map((r) => r.row.name.length));
  const valueW = Math.max('VALUE'.length, Math.min(EXPLAIN_VALUE_COLUMN_MAX, Math.max(...rows.map((r) => r.value.length))));
  const sourceCol = nameW + 2 + valueW + 2;
  const sourceW = Math.max(16, width - sourceCol);

  const out: string[] = [`${'KNOB'.padEnd(nameW)}  ${'VALUE'.padEnd(valueW)}  SOURCE`];
  for (const section of KNOB_SECTIONS) {
    const inSection = visible.filter((r) => r.row.section === section.id);
    if (inSection.length === 0) continue;
    out.push('', truncate(`== ${section.title} (${section.id}) ==`, width));
    for (const { row, value } of inSection) {
      const source = fitSource(row, sourceW);
      if (value.length <= valueW) {
        out.push(`${row.name.padEnd(nameW)}  ${value.padEnd(valueW)}  ${source}`);
      } else {
        out.push(`${row.name.padEnd(nameW)}  ${value}`);
        out.push(`${' '.repeat(sourceCol)}${source}`);
      }
      out.push(...wrap(row.doc, width, '    '));
    }
  }
  const hidden = rows.length - visible.length;
  if (hidden > 0) {
    out.push('', `${hidden} advanced knobs at their defaults are not shown.`, 'Every knob: vigil config --explain --all');
  }
  return out.join('\n');
}
