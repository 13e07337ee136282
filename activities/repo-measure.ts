/**
 * What the start of a run measures of the task (spec §1.1 step 7, `detect_complexity`): the
 * repository's source files and languages, the services it declares, and the PRD's size, features,
 * integrations and kinds of requirement. Facts only: the tier is decided by the workflow
 * (rules/complexity.ts). Counts and names, never text.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { RepoMeasure } from '../schemas/effort.js';
import { measurePrd } from '../rules/complexity.js';
import { git } from './git.js';

/** Folders whose files are not the project's source (seed 003 §14.1), and Vigil's own. */
const NOT_SOURCE = /(^|\/)(node_modules|\.git|vendor|dist|build|__pycache__|\.vigil|\.venv|venv|target)\//;

const LANGUAGES: Record<string, string> = {
  '.ts': 'TypeScript',
  '.tsx': 'TypeScript',
  '.mts': 'TypeScript',
  '.cts': 'TypeScript',
  '.js': 'JavaScript',
  '.jsx': 'JavaScript',
  '.mjs': 'JavaScript',
  '.cjs': 'JavaScript',
  '.py': 'Python',
  '.go': 'Go',
  '.rs': 'Rust',
  '.java': 'Java',
  '.kt': 'Kotlin',
  '.rb': 'Ruby',
  '.php': 'PHP',
  '.cs': 'C#',
  '.c': 'C',
  '.h': 'C',
  '.cpp': 'C++',
  '.cc': 'C++',
  '.hpp': 'C++',
  '.swift': 'Swift',
  '.scala': 'Scala',
  '.ex': 'Elixir',
  '.exs': 'Elixir',
  '.sh': 'Shell',
  '.sql': 'SQL',
  '.vue': 'Vue',
  '.svelte': 'Svelte',
};

const COMPOSE_FILES = ['docker-compose.yml', 'docker-compose.yaml', 'compose.yml', 'compose.yaml'];

/** The services a compose file declares (0 for one that does not parse). */
function composeServices(file: string): number {
  try {
    const doc = parseYaml(readFileSync(file, 'utf8')) as unknown;
    const services = typeof doc === 'object' && doc !== null ? (doc as { services?: unknown }).services : undefined;
    return typeof services === 'object' && services !== null ? Object.keys(services).length : 0;
  } catch {
    return 0;
  }
}

/** The PRD's size and what it names; an absent or unreadable PRD measures as empty. */
function readPrd(prdPath: string | undefined): RepoMeasure['prd'] {
  if (!prdPath || !existsSync(prdPath) || !statSync(prdPath).isFile()) return { words: 0, features: 0, integrations: [], kinds: [] };
  // A PRD is prose: a megabyte is plenty to measure it by.
  const text = readFileSync(prdPath, 'utf8').slice(0, 1024 * 1024);
  return measurePrd(text, prdPath.toLowerCase().endsWith('.json'));
}

export async function measureRepository(repoPath: string, prdPath: string | undefined): Promise<RepoMeasure> {
  const listed = (await git(repoPath, ['ls-files', '--cached', '--others', '--exclude-standard', '-z'])).split('\0').filter(Boolean);
  const files = [...new Set(listed)].filter((f) => !NOT_SOURCE.test(f));
  const byLanguage = new Map<string, number>();
  let sourceFiles = 0;
  for (const f of files) {
    const lang = LANGUAGES[path.extname(f).toLowerCase()];
    if (lang === undefined) continue;
    sourceFiles++;
    byLanguage.set(lang, (byLanguage.get(lang) ?? 0) + 1);
  }
  const languages = [...byLanguage.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([l]) => l)
    .slice(0, 20);
  const compose = COMPOSE_FILES.map((f) => path.join(repoPath, f)).find((f) => existsSync(f));
  const composed = compose ? composeServices(compose) : 0;
  const k8s = files.filter((f) => /^(k8s|kubernetes)\/.*\.ya?ml$/.test(f)).length;
  const hasK8sDir = existsSync(path.join(repoPath, 'k8s')) || existsSync(path.join(repoPath, 'kubernetes'));
  return {
    sourceFiles,
    languages,
    services: composed + k8s,
    microservices: hasK8sDir || composed > 1,
    prd: readPrd(prdPath),
  };
}
