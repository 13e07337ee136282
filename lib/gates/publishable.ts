/**
 * Whether a repository is a package that npm or PyPI would publish, read the way they read it, and
 * why, in one sentence the documentation gate (doc-coverage.ts) puts in its reason: a publishable
 * package's exports are other people's interface, so undocumented ones block there.
 *
 * - npm: `npm publish` refuses a package.json whose `private` is truthy (libnpmpublish's
 *   `EPRIVATE`), and cannot publish one without a `name` and a semver `version`.
 * - PyPI: a distribution needs metadata: a `pyproject.toml` `[project]` table with a `name`
 *   (PEP 621), a `[tool.poetry]` table with a `name` (not `package-mode = false`), a `setup.cfg`
 *   `[metadata]` section with a `name`, or a `setup.py` that calls `setup(name=...)`. PyPI refuses
 *   any upload that lists the classifier `Private :: Do Not Upload`.
 *
 * Pure: it takes the manifests' texts (null: absent). TOML is parsed with smol-toml; setup.cfg
 * and setup.py are read line by line with anchored, bounded patterns (setup.py is not run).
 */
import { parse as parseToml } from 'smol-toml';

/** The manifests' texts, as read from the repository root (null: no such file). */
export interface Manifests {
  packageJson: string | null;
  pyproject: string | null;
  setupCfg: string | null;
  setupPy: string | null;
}

export interface Publishability {
  publishable: boolean;
  /** Which registry would take it (the first that would), or null. */
  registry: 'npm' | 'PyPI' | null;
  /** One sentence: which manifest decided, and why (`package.json has no "private": true, so npm would publish it`). */
  why: string;
}

/** The classifier PyPI refuses to upload (https://pypi.org/classifiers/). */
export const PRIVATE_CLASSIFIER = 'Private :: Do Not Upload';

/** A semver version as npm's `semver.valid(v, loose)` takes it (a leading `v` or `=` allowed). */
const SEMVER = /^\s{0,20}[v=]?\s{0,20}\d{1,20}\.\d{1,20}\.\d{1,20}(?:-[0-9A-Za-z.-]{1,200})?(?:\+[0-9A-Za-z.-]{1,200})?\s{0,20}$/;

interface Verdict {
  publishable: boolean;
  why: string;
}

function npmVerdict(text: string): Verdict {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { publishable: false, why: 'package.json does not parse as JSON, so npm cannot publish it' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { publishable: false, why: 'package.json is not a JSON object, so npm cannot publish it' };
  const pkg = raw as Record<string, unknown>;
  if (pkg['private'])
    return { publishable: false, why: `package.json has "private": ${JSON.stringify(pkg['private'])}, so npm refuses to publish it` };
  const name = pkg['name'];
  if (typeof name !== 'string' || name.trim() === '')
    return { publishable: false, why: 'package.json has no "name", so npm cannot publish it' };
  const version = pkg['version'];
  if (typeof version !== 'string' || version.trim() === '')
    return { publishable: false, why: 'package.json has no "version", so npm cannot publish it' };
  if (!SEMVER.test(version))
    return {
      publishable: false,
      why: `package.json's "version" ${JSON.stringify(version.slice(0, 40))} is not a semver version, so npm cannot publish it`,
    };
  return { publishable: true, why: 'package.json has a name and a version and no "private": true, so npm would publish it' };
}

const isTable = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const listsPrivate = (v: unknown): boolean => Array.isArray(v) && v.some((c) => typeof c === 'string' && c.trim() === PRIVATE_CLASSIFIER);

function pyprojectVerdict(text: string): Verdict | null {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch {
    return { publishable: false, why: 'pyproject.toml does not parse as TOML, so no distribution can be built from it' };
  }
  const project = doc['project'];
  const tool = isTable(doc['tool']) ? doc['tool'] : {};
  const poetry = isTable(tool['poetry']) ? tool['poetry'] : null;
  if (isTable(project)) {
    if (listsPrivate(project['classifiers']))
      return { publishable: false, why: `pyproject.toml lists the classifier "${PRIVATE_CLASSIFIER}", so PyPI refuses to upload it` };
    if (typeof project['name'] !== 'string' || project['name'].trim() === '')
      return { publishable: false, why: 'pyproject.toml has a [project] table without a name, so no distribution can be built from it' };
    return { publishable: true, why: 'pyproject.toml has a [project] table with a name, so it builds a distribution PyPI would take' };
  }
  if (poetry) {
    if (poetry['package-mode'] === false)
      return { publishable: false, why: 'pyproject.toml sets [tool.poetry] package-mode = false: not a package' };
    if (listsPrivate(poetry['classifiers']))
      return { publishable: false, why: `pyproject.toml lists the classifier "${PRIVATE_CLASSIFIER}", so PyPI refuses to upload it` };
    if (typeof poetry['name'] === 'string' && poetry['name'].trim() !== '')
      return {
        publishable: true,
        why: 'pyproject.toml has a [tool.poetry] table with a name, so `poetry publish` would upload it to PyPI',
      };
  }
  return null;
}

/** The `[metadata]` section of setup.cfg: its `name`, and whether its classifiers list the private one. */
function setupCfgVerdict(text: string): Verdict | null {
  let section = '';
  let key = '';
  let name = '';
  let privateClassifier = false;
  for (const raw of text.split('\n').slice(0, 20_000)) {
    const line = raw.replace(/\r$/, '').slice(0, 4000);
    const header = /^\[\s{0,20}([^\]]{1,200}?)\s{0,20}\]/.exec(line);
    if (header) {
      section = (header[1] ?? '').toLowerCase();
      key = '';
      continue;
    }
    if (section !== 'metadata' || /^\s{0,200}[#;]/.test(line)) continue;
    const entry = /^([A-Za-z0-9_.-]{1,200})\s{0,20}[=:]\s{0,20}(.{0,4000})$/.exec(line);
    if (entry) {
      key = (entry[1] ?? '').toLowerCase();
      if (key === 'name') name = (entry[2] ?? '').trim();
    }
    // The key's value and its indented continuation lines.
    if (key === 'classifiers' && line.includes(PRIVATE_CLASSIFIER)) privateClassifier = true;
  }
  if (privateClassifier)
    return { publishable: false, why: `setup.cfg lists the classifier "${PRIVATE_CLASSIFIER}", so PyPI refuses to upload it` };
  if (name) return { publishable: true, why: 'setup.cfg has [metadata] with a name, so it builds a distribution PyPI would take' };
  return null;
}

function setupPyVerdict(text: string): Verdict | null {
  const head = text.slice(0, 512 * 1024);
  if (head.includes(PRIVATE_CLASSIFIER))
    return { publishable: false, why: `setup.py lists the classifier "${PRIVATE_CLASSIFIER}", so PyPI refuses to upload it` };
  const callsSetup = head.split('\n').some((l) => /(?:^|[^\w.])(?:setuptools\.)?setup\s{0,20}\(/.test(l.slice(0, 4000)));
  const named = head.split('\n').some((l) => /(?:^|[\s(,])name\s{0,20}=\s{0,20}\S/.test(l.slice(0, 4000)));
  if (callsSetup && named)
    return { publishable: true, why: 'setup.py calls setup() with a name, so it builds a distribution PyPI would take' };
  return null;
}

/**
 * Whether the repository is a package npm or PyPI would publish (the first manifest that says yes
 * decides), with the reason. When none would, `why` names what each manifest present says.
 */
export function publishability(m: Manifests): Publishability {
  const npm = m.packageJson === null ? null : npmVerdict(m.packageJson);
  if (npm?.publishable) return { publishable: true, registry: 'npm', why: npm.why };
  const python = [
    m.pyproject === null ? null : pyprojectVerdict(m.pyproject),
    m.setupCfg === null ? null : setupCfgVerdict(m.setupCfg),
    m.setupPy === null ? null : setupPyVerdict(m.setupPy),
  ];
  // A private classifier anywhere stops the upload, whichever file builds the distribution.
  const refusal = python.find((v) => v !== null && !v.publishable && v.why.includes(PRIVATE_CLASSIFIER));
  const pypi = python.find((v) => v?.publishable);
  if (pypi && !refusal) return { publishable: true, registry: 'PyPI', why: pypi.why };
  const reasons = [npm, ...python].filter((v): v is Verdict => v !== null && !v.publishable).map((v) => v.why);
  if (reasons.length > 0) return { publishable: false, registry: null, why: reasons.join('; ') };
  return {
    publishable: false,
    registry: null,
    why: 'no package.json, and no pyproject.toml, setup.cfg or setup.py with package metadata: not a package',
  };
}
