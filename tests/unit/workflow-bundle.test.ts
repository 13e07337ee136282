/**
 * The prebuilt workflow bundle is used only with the exact code it was built from: a changed,
 * missing or extra-version input, or a bundle file that is not the one recorded, turns it down.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUNDLE_FILE,
  checkPrebuiltBundle,
  installedVersion,
  MANIFEST_FILE,
  packageOf,
  writePrebuiltBundle,
} from '../../workers/workflow-bundle.js';
import { assertBuilt, ROOT } from '../support/harness.js';

describe('packageOf', () => {
  it('names the package a node_modules path belongs to', () => {
    expect(packageOf(path.join('/a', 'node_modules', 'zod', 'v4', 'index.js'))).toBe('zod');
    expect(packageOf(path.join('/a', 'node_modules', '@temporalio', 'workflow', 'lib', 'x.js'))).toBe('@temporalio/workflow');
    expect(packageOf(path.join('/a', 'node_modules', 'x', 'node_modules', 'ms', 'index.js'))).toBe('ms');
    expect(packageOf(path.join('/a', 'dist', 'workflows', 'index.js'))).toBeNull();
  });
});

const made: string[] = [];
const tempDir = (prefix: string): string => {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
};
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A fake dist/ with one input, a bundle and its manifest, under a root with one package installed. */
function fakeDist(): { root: string; dist: string } {
  const root = tempDir('vigil-bundle-');
  const dist = path.join(root, 'dist');
  mkdirSync(path.join(dist, 'workflows'), { recursive: true });
  mkdirSync(path.join(root, 'node_modules', 'dep'), { recursive: true });
  writeFileSync(path.join(root, 'node_modules', 'dep', 'package.json'), JSON.stringify({ name: 'dep', version: '1.2.3' }));
  writeFileSync(path.join(dist, 'workflows', 'index.js'), 'export const a = 1;\n');
  writeFileSync(path.join(dist, BUNDLE_FILE), 'bundle\n');
  const sha = (f: string): string => createHash('sha256').update(readFileSync(f)).digest('hex');
  writeFileSync(
    path.join(dist, MANIFEST_FILE),
    JSON.stringify({
      format: 1,
      bundleSha256: sha(path.join(dist, BUNDLE_FILE)),
      inputs: { 'workflows/index.js': sha(path.join(dist, 'workflows', 'index.js')) },
      packages: { dep: '1.2.3' },
    }),
  );
  return { root, dist };
}

describe('checkPrebuiltBundle', () => {
  it('accepts a bundle whose inputs and packages are unchanged', () => {
    const { dist } = fakeDist();
    expect(checkPrebuiltBundle(dist)).toEqual({ ok: true, codePath: path.join(dist, BUNDLE_FILE) });
    expect(installedVersion('dep', path.join(dist, 'workflows'))).toBe('1.2.3');
  });

  it('says nothing when there is no prebuilt bundle at all', () => {
    expect(checkPrebuiltBundle(tempDir('vigil-bundle-none-'))).toEqual({ ok: false, reason: '' });
  });

  it('turns down a bundle built from other code', () => {
    const { dist } = fakeDist();
    appendFileSync(path.join(dist, 'workflows', 'index.js'), 'export const b = 2;\n');
    expect(checkPrebuiltBundle(dist)).toEqual({ ok: false, reason: 'workflows/index.js changed since the bundle was built' });
  });

  it('turns down a bundle when an input is gone, the bundle differs, the manifest is missing or a package moved on', () => {
    const gone = fakeDist();
    rmSync(path.join(gone.dist, 'workflows', 'index.js'));
    expect(checkPrebuiltBundle(gone.dist)).toEqual({ ok: false, reason: 'workflows/index.js is gone' });

    const edited = fakeDist();
    appendFileSync(path.join(edited.dist, BUNDLE_FILE), '// more\n');
    expect(checkPrebuiltBundle(edited.dist)).toEqual({ ok: false, reason: `${BUNDLE_FILE} is not the file the manifest describes` });

    const noManifest = fakeDist();
    writeFileSync(path.join(noManifest.dist, MANIFEST_FILE), '{');
    expect(checkPrebuiltBundle(noManifest.dist)).toEqual({ ok: false, reason: `${MANIFEST_FILE} is missing or unreadable` });

    const upgraded = fakeDist();
    writeFileSync(path.join(upgraded.root, 'node_modules', 'dep', 'package.json'), JSON.stringify({ name: 'dep', version: '2.0.0' }));
    expect(checkPrebuiltBundle(upgraded.dist)).toEqual({ ok: false, reason: 'dep is 2.0.0, the bundle embeds 1.2.3' });
  });
});

describe('writePrebuiltBundle', () => {
  beforeAll(() => assertBuilt());

  it('records the compiled workflows and the embedded dependencies, and a recompile invalidates it', async () => {
    // A copy of the compiled workflows, round drivers, rules and schemas, resolving packages from this checkout.
    const root = tempDir('vigil-bundle-real-');
    const dist = path.join(root, 'dist');
    for (const d of ['workflows', 'rounds', 'rules', 'schemas'])
      cpSync(path.join(ROOT, 'dist', d), path.join(dist, d), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
    const manifest = await writePrebuiltBundle({
      distDir: dist,
      workflowsPath: path.join(dist, 'workflows', 'index.js'),
      payloadConverterPath: path.join(dist, 'workflows', 'payload-converter.js'),
      preloadModules: [path.join(dist, 'schemas', 'shared.js')],
      dependencies: ['@temporalio/workflow', '@temporalio/common', 'zod', 'execa'],
      logger: { trace: () => {}, debug: () => {}, info: () => {}, log: () => {}, warn: () => {}, error: (m: string) => console.error(m) },
    });
    expect(Object.keys(manifest.inputs)).toEqual(
      expect.arrayContaining(['workflows/index.js', 'workflows/payload-converter.js', 'workflows/run-workflow.js', 'schemas/knobs.js']),
    );
    expect(Object.keys(manifest.packages).sort()).toEqual(['@temporalio/common', '@temporalio/workflow', 'zod']);
    expect(checkPrebuiltBundle(dist)).toEqual({ ok: true, codePath: path.join(dist, BUNDLE_FILE) });
    expect(readFileSync(path.join(dist, BUNDLE_FILE), 'utf8')).toContain('vigilRun');

    appendFileSync(path.join(dist, 'rules', 'backoff.js'), '\n// recompiled\n');
    expect(checkPrebuiltBundle(dist)).toEqual({ ok: false, reason: 'rules/backoff.js changed since the bundle was built' });
  });
});
