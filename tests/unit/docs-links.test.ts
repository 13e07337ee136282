/**
 * The documentation holds together: every relative link in README.md, CONTRIBUTING.md,
 * tests/README.md and docs/*.md leads to a file that exists and, with a `#anchor`, to a heading of
 * that file (GitHub's slugs); each docs/ file opens with its title and a sentence saying what it
 * covers; and the README stays short enough to read in ten minutes.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = path.join(ROOT, 'docs');
const FILES = [
  'README.md',
  'CONTRIBUTING.md',
  'tests/README.md',
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

const read = (rel: string): string => readFileSync(path.join(ROOT, rel), 'utf8');

/** The file's lines outside fenced code blocks (a `#` there is a shell comment, a `[x](y)` is code). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes; repeats get -1, -2, … */
function slugs(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(markdown)) {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const text = (m[1] as string)
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading: its text
      .replace(/<[^>]+>/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every inline link target of the file's prose, with inline code spans left out. */
function links(markdown: string): string[] {
  const targets: string[] = [];
  for (const line of prose(markdown)) {
    const text = line.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1] as string);
  }
  return targets;
}

const relative = (target: string): boolean => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('//');

describe('slugs', () => {
  it('follows GitHub: lower case, punctuation dropped, spaces to dashes, repeats numbered', () => {
    expect([
      ...slugs(
        "# Team deployment (docker compose)\n## The UI's activity buttons\n## Which store, by default\n### From the `temporal` " +
          'CLI, the UI, or a script\n## A\n## A\n```\n# not a heading\n```\n',
      ),
    ]).toEqual([
      'team-deployment-docker-compose',
      'the-uis-activity-buttons',
      'which-store-by-default',
      'from-the-temporal-cli-the-ui-or-a-script',
      'a',
      'a-1',
    ]);
  });

  it('reads links outside code, not inside it', () => {
    expect(links('see [a](docs/a.md#x) and `[b](b.md)`\n```\n[c](c.md)\n```\n[d](https://example.com) [e](#top)\n')).toEqual([
      'docs/a.md#x',
      'https://example.com',
      '#top',
    ]);
  });
});

describe('documentation links', () => {
  it.each(FILES)('every relative link in %s resolves', (file) => {
    const broken: string[] = [];
    for (const target of links(read(file)).filter(relative)) {
      const [rawPath = '', anchor] = target.split('#', 2);
      const resolved =
        rawPath === '' ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), decodeURIComponent(rawPath));
      if (!existsSync(resolved)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
        broken.push(`${target}: an anchor into a file that is not Markdown`);
        continue;
      }
      if (!slugs(readFileSync(resolved, 'utf8')).has(anchor.toLowerCase()))
        broken.push(`${target}: no heading #${anchor} in ${path.relative(ROOT, resolved)}`);
    }
    expect(broken).toEqual([]);
  });

  it.each(FILES.filter((f) => f.startsWith('docs/')))('%s opens with its title and a sentence saying what it covers', (file) => {
    const [title, blank, summary] = read(file).split('\n');
    expect(title).toMatch(/^# \S/);
    expect(blank).toBe('');
    // Prose, not a heading, list, table, quote or code.
    expect(summary).toMatch(/^[^#\s|>`*-]/);
  });

  it('keeps docs/ file names kebab-case', () => {
    for (const f of readdirSync(DOCS)) expect(f).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*\.md$/);
  });

  it('keeps the README under 400 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThan(400);
  });
});
