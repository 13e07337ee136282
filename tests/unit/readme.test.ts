/**
 * The README tells the truth: every knob (name, environment variable, default), every CLI verb
 * and every message is documented there.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { KNOB_NAMES, KNOBS } from '../../schemas/knobs.js';
import { MESSAGE_SCHEMAS } from '../../schemas/messages.js';

const README = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md'), 'utf8');
const CLI = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../cli/main.ts'), 'utf8');

describe('README', () => {
  it.each(KNOB_NAMES)('documents the knob %s with its env var and default', (name) => {
    const row = README.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));
    expect(row, `no knobs-table row for ${name}`).toBeDefined();
    expect(row).toContain(`\`${KNOBS[name].env}\``);
    const d = KNOBS[name].default as unknown;
    if (typeof d === 'number' || typeof d === 'boolean') expect(row).toContain(`\`${String(d)}\``);
    else if (typeof d === 'string' && d !== '') expect(row).toContain(d);
  });

  it('has each section once', () => {
    const headings = README.split('\n').filter((l) => /^#{2,3} /.test(l));
    const twice = headings.filter((h, i) => headings.indexOf(h) !== i);
    expect(twice).toEqual([]);
  });

  it('documents every CLI verb', () => {
    const verbs = [...CLI.matchAll(/\.command\('([a-z-]+)'\)/g)].map((m) => m[1] as string);
    expect(verbs.length).toBeGreaterThan(10);
    for (const v of verbs) expect(README, `vigil ${v}`).toContain(`\`vigil ${v}`);
  });

  it('documents every message', () => {
    for (const name of Object.keys(MESSAGE_SCHEMAS)) expect(README).toContain(`| \`${name}\` |`);
  });
});
