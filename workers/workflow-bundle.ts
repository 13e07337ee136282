/**
 * The prebuilt workflow bundle: `npm run build` bundles the compiled workflows once, after tsc,
 * into `dist/workflow-bundle.js`, so a worker started from dist/ (an installed package, `vigil up`)
 * starts without running webpack. Beside it, `dist/workflow-bundle.json` records what it was built
 * from: the SHA-256 of every compiled file under dist/ that went into it, the versions of the
 * packages it embeds that are Vigil's own dependencies, and the bundle's own SHA-256. A worker uses
 * the bundle only when all of that still matches the dist/ it runs from, so a bundle left over from
 * older code (dist/ recompiled by tsc alone, a dependency upgraded) is never used: the worker then
 * bundles as it always did.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

export const BUNDLE_FILE = 'workflow-bundle.js';
export const MANIFEST_FILE = 'workflow-bundle.json';
const FORMAT = 1;

export interface BundleManifest {
  format: number;
  /** SHA-256 of workflow-bundle.js. */
  bundleSha256: string;
  /** Compiled inputs, by path relative to dist/, with their SHA-256. */
  inputs: Record<string, string>;
  /** Embedded packages that are direct dependencies, with the version bundled. */
  packages: Record<string, string>;
}

export type PrebuiltCheck = { ok: true; codePath: string } | { ok: false; reason: string };

const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

/** The package a node_modules path belongs to (`@scope/name` or `name`), or null. */
export function packageOf(file: string): string | null {
  const parts = file.split(path.sep);
  const i = parts.lastIndexOf('node_modules');
  if (i < 0) return null;
  const first = parts[i + 1];
  if (!first) return null;
  if (first.startsWith('@')) return parts[i + 2] ? `${first}/${parts[i + 2]}` : null;
  return first;
}

/** The version of `name` that Node resolves from `fromDir` (node_modules lookup upwards), or null. */
export function installedVersion(name: string, fromDir: string): string | null {
  let dir = fromDir;
  for (;;) {
    const pkg = path.join(dir, 'node_modules', name, 'package.json');
    if (existsSync(pkg)) {
      try {
        return (JSON.parse(readFileSync(pkg, 'utf8')) as { version?: string }).version ?? null;
      } catch {
        return null;
      }
    }
    const up = path.dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/**
 * Checks the prebuilt bundle in `distDir` against the files beside it. `ok: false` with an empty
 * reason means there is no prebuilt bundle at all (not an error: a source checkout before its build).
 */
export function checkPrebuiltBundle(distDir: string): PrebuiltCheck {
  const codePath = path.join(distDir, BUNDLE_FILE);
  const manifestPath = path.join(distDir, MANIFEST_FILE);
  if (!existsSync(codePath) && !existsSync(manifestPath)) return { ok: false, reason: '' };
  let m: BundleManifest;
  try {
    m = JSON.parse(readFileSync(manifestPath, 'utf8')) as BundleManifest;
  } catch {
    return { ok: false, reason: `${MANIFEST_FILE} is missing or unreadable` };
  }
  if (m.format !== FORMAT || typeof m.inputs !== 'object' || typeof m.packages !== 'object')
    return { ok: false, reason: `${MANIFEST_FILE} has an unknown format` };
  if (Object.keys(m.inputs).length === 0) return { ok: false, reason: `${MANIFEST_FILE} lists no inputs` };
  if (!existsSync(codePath) || sha256(codePath) !== m.bundleSha256)
    return { ok: false, reason: `${BUNDLE_FILE} is not the file the manifest describes` };
  for (const [rel, hash] of Object.entries(m.inputs)) {
    const file = path.resolve(distDir, rel);
    if (!existsSync(file)) return { ok: false, reason: `${rel} is gone` };
    if (sha256(file) !== hash) return { ok: false, reason: `${rel} changed since the bundle was built` };
  }
  const from = path.join(distDir, 'workflows');
  for (const [name, version] of Object.entries(m.packages)) {
    const now = installedVersion(name, from);
    if (now !== version) return { ok: false, reason: `${name} is ${now ?? 'not installed'}, the bundle embeds ${version}` };
  }
  return { ok: true, codePath };
}

export interface WriteBundleOptions {
  distDir: string;
  workflowsPath: string;
  payloadConverterPath: string;
  /** Modules evaluated once and shared by every workflow (schemas/shared.ts). */
  preloadModules: string[];
  /** Names of the package's direct dependencies (their versions are recorded when bundled). */
  dependencies: string[];
  logger?: Parameters<typeof bundleWorkflowCode>[0]['logger'];
}

/** Bundles the compiled workflows into `distDir` and writes the manifest beside the bundle. */
export async function writePrebuiltBundle(opts: WriteBundleOptions): Promise<BundleManifest> {
  const codePath = path.join(opts.distDir, BUNDLE_FILE);
  const manifestPath = path.join(opts.distDir, MANIFEST_FILE);
  // A failed build must not leave the previous bundle looking current.
  rmSync(manifestPath, { force: true });
  rmSync(codePath, { force: true });

  const resources = new Set<string>();
  const { code } = await bundleWorkflowCode({
    workflowsPath: opts.workflowsPath,
    payloadConverterPath: opts.payloadConverterPath,
    preloadModules: opts.preloadModules,
    ...(opts.logger ? { logger: opts.logger } : {}),
    // Records every module webpack reads, to know what the bundle was built from.
    webpackConfigHook: (config) => ({
      ...config,
      plugins: [
        ...(config.plugins ?? []),
        {
          apply(compiler) {
            compiler.hooks.compilation.tap('vigil-bundle-inputs', (compilation) => {
              compilation.hooks.finishModules.tap('vigil-bundle-inputs', (modules) => {
                for (const mod of modules) {
                  const resource = (mod as { resource?: unknown }).resource;
                  if (typeof resource === 'string') resources.add(resource.replace(/[?#].*$/, ''));
                }
              });
            });
          },
        },
      ],
    }),
  });

  const inputs: Record<string, string> = {};
  const packages: Record<string, string> = {};
  const deps = new Set(opts.dependencies);
  const from = path.join(opts.distDir, 'workflows');
  for (const file of [...resources].sort()) {
    const pkg = packageOf(file);
    if (pkg) {
      if (!deps.has(pkg) || packages[pkg]) continue;
      const version = installedVersion(pkg, from);
      if (!version) throw new Error(`cannot tell the installed version of ${pkg}, which the workflow bundle embeds`);
      packages[pkg] = version;
    } else if (existsSync(file)) {
      // (The bundler's generated entry point exists only in its in-memory file system.)
      inputs[path.relative(opts.distDir, file).split(path.sep).join('/')] = sha256(file);
    }
  }
  if (Object.keys(inputs).length === 0) throw new Error('the workflow bundle recorded no inputs under dist/');

  mkdirSync(opts.distDir, { recursive: true });
  writeFileSync(`${codePath}.tmp`, code);
  renameSync(`${codePath}.tmp`, codePath);
  const manifest: BundleManifest = { format: FORMAT, bundleSha256: sha256(codePath), inputs, packages };
  writeFileSync(`${manifestPath}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`);
  renameSync(`${manifestPath}.tmp`, manifestPath);
  return manifest;
}
