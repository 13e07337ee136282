/**
 * Where tools go: an installed package (no .git beside its package.json) keeps the temporal CLI
 * under VIGIL_HOME/tools, never in its own folder; a source checkout keeps its `.tools/`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSourceCheckout, PACKAGE_NAME, packageRoot, toolsDir, toolsDirs } from '../../lib/paths.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function fakePackage(git: boolean): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'vigil-pkg-'));
  made.push(root);
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: PACKAGE_NAME }));
  if (git) mkdirSync(path.join(root, '.git'));
  return root;
}

describe('toolsDir', () => {
  it('is VIGIL_HOME/tools for an installed package', () => {
    const root = fakePackage(false);
    expect(isSourceCheckout(root)).toBe(false);
    expect(toolsDir({ VIGIL_HOME: '/srv/vigil' }, root)).toBe(path.resolve('/srv/vigil/tools'));
    expect(toolsDir({}, root)).toBe(path.join(os.homedir(), '.vigil', 'tools'));
    expect(toolsDirs({ VIGIL_HOME: '/srv/vigil' }, root)).toEqual([path.resolve('/srv/vigil/tools')]);
  });

  it('is the checkout’s .tools/ in a source checkout, which also finds a CLI under VIGIL_HOME', () => {
    const root = fakePackage(true);
    expect(isSourceCheckout(root)).toBe(true);
    expect(toolsDir({ VIGIL_HOME: '/srv/vigil' }, root)).toBe(path.join(root, '.tools'));
    expect(toolsDirs({ VIGIL_HOME: '/srv/vigil' }, root)).toEqual([path.join(root, '.tools'), path.resolve('/srv/vigil/tools')]);
  });

  it('finds this package by its published name', () => {
    expect(PACKAGE_NAME).toBe('vigil-temporal');
    expect(isSourceCheckout(packageRoot())).toBe(true);
  });
});
