/**
 * The documentation tells the truth: every knob (name, environment variable, default) has its row
 * in docs/knobs.md, every CLI verb is in the README's command table, and every message has its row
 * in docs/messages.md.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { KNOB_NAMES, KNOBS } from '../../schemas/knobs.js';
import { MESSAGE_NAMES, MESSAGE_VERBS } from '../../schemas/message-verbs.js';
import { MESSAGE_SCHEMAS } from '../../schemas/messages.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (rel: string): string => readFileSync(path.join(ROOT, rel), 'utf8');
const README = read('README.md');
const KNOBS_DOC = read('docs/knobs.md');
const MESSAGES_DOC = read('docs/messages.md');
/** cli/main.ts and the modules that add commands to it (cli/commands/, and the families of their own). */
const CLI = [
  'cli/main.ts',
  'cli/report-commands.ts',
  ...readdirSync(path.join(ROOT, 'cli/commands'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `cli/commands/${f}`),
]
  .map(read)
  .join('\n');
const DOCS = [
  'README.md',
  'CONTRIBUTING.md',
  'tests/README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('documentation', () => {
  it.each(KNOB_NAMES)('docs/knobs.md documents the knob %s with its env var and default', (name) => {
    const row = KNOBS_DOC.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));
    expect(row, `no knobs-table row for ${name}`).toBeDefined();
    expect(row).toContain(`\`${KNOBS[name].env}\``);
    const d = KNOBS[name].default as unknown;
    if (typeof d === 'number' || typeof d === 'boolean') expect(row).toContain(`\`${String(d)}\``);
    else if (typeof d === 'string' && d !== '') expect(row).toContain(d);
  });

  it.each(DOCS)('%s has each section once', (file) => {
    let fenced = false;
    const headings = read(file)
      .split('\n')
      .filter((l) => {
        if (l.startsWith('```')) fenced = !fenced;
        return !fenced && /^#{2,3} /.test(l);
      });
    const twice = headings.filter((h, i) => headings.indexOf(h) !== i);
    expect(twice).toEqual([]);
  });

  it('documents every CLI verb in the README', () => {
    // The message verbs are registered from their table (schemas/message-verbs.ts).
    const verbs = [
      ...[...CLI.matchAll(/\.command\('([a-z-]+)'\)/g)].map((m) => m[1] as string),
      ...MESSAGE_NAMES.map((n) => MESSAGE_VERBS[n].cli),
    ];
    expect(verbs.length).toBeGreaterThan(10);
    // A subcommand (`notifications ack`) is documented under its parent's name.
    for (const v of verbs) expect(README, `vigil ${v}`).toMatch(new RegExp(`\`vigil (?:[a-z-]+ )?${v}\\b`));
  });

  it('documents every message in docs/messages.md', () => {
    for (const name of Object.keys(MESSAGE_SCHEMAS)) expect(MESSAGES_DOC).toContain(`| \`${name}\` |`);
  });
});
