/**
 * The layering of the code, enforced: no import circles anywhere in the project
 * (madge over every .ts file, type imports and dynamic imports included), activities and the CLI
 * import no workflow code by value but the pure rules (workflows/decisions/) and, for the CLI, the
 * message definitions a client sends, and workflow code imports no activity by value. The round
 * drivers (rounds/) are typed from the contracts; the last check keeps their call signatures the
 * registered activities' own. The run loop stays in named steps: `vigilRun` fits in about 200
 * lines and its file in 300, no file of workflows/ outside decisions/ is over 450 lines (but the
 * frozen era module), every `patched()` of the loop is asked in workflows/run/eras.ts, and the
 * patch ids there are the ones the replay fixture table (tests/replay/eras.ts) pins.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ActivityInterfaceFor } from '@temporalio/workflow';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import type * as activities from '../../activities/index.js';
import type { RoundCalls } from '../../rounds/calls.js';
import { PATCH_IDS } from '../../workflows/run/eras.js';
import { ERAS } from '../replay/eras.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface MadgeConfig {
  baseDir: string;
  fileExtensions: string[];
  tsConfig: string;
  excludeRegExp: RegExp[];
}
type Madge = (dir: string, config: MadgeConfig) => Promise<{ circular(): string[][] }>;
const madge = createRequire(import.meta.url)('madge') as Madge;

/** Every import circle among the project's .ts files under `dir` (relative to ROOT), each as the files of the circle. */
async function circles(dir: string): Promise<string[][]> {
  const result = await madge(path.join(ROOT, dir), {
    baseDir: ROOT,
    fileExtensions: ['ts'],
    tsConfig: path.join(ROOT, 'tsconfig.json'),
    excludeRegExp: [/(^|\/)node_modules\//, /^dist/, /^\.tools\//],
  });
  return result.circular();
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...tsFiles(rel));
    else if (e.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

/** The relative modules a file imports by value (static, re-exports and dynamic `import()`), as paths relative to ROOT without extension. */
function valueImports(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const add = (spec: ts.Expression | undefined): void => {
    if (!spec || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) return;
    found.push(
      path
        .relative(ROOT, path.resolve(ROOT, path.dirname(file), spec.text))
        .split(path.sep)
        .join('/')
        .replace(/\.(js|ts)$/, ''),
    );
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      // Type-only: `import type …`, or named imports that are all `type …` (erased when compiled).
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings : null;
      const typeOnly =
        clause?.isTypeOnly === true ||
        (clause !== undefined &&
          !clause.name &&
          named !== null &&
          named.elements.length > 0 &&
          named.elements.every((el) => el.isTypeOnly));
      if (!typeOnly) add(node.moduleSpecifier);
    } else if (ts.isExportDeclaration(node)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause : null;
      const typeOnly = node.isTypeOnly || (named !== null && named.elements.length > 0 && named.elements.every((el) => el.isTypeOnly));
      if (!typeOnly) add(node.moduleSpecifier);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `file -> target` for every value import of a file under `dirs` that `forbidden` refuses. */
function violations(dirs: string[], forbidden: (target: string, file: string) => boolean): string[] {
  return dirs.flatMap((dir) =>
    tsFiles(dir).flatMap((file) =>
      valueImports(file)
        .filter((t) => forbidden(t, file))
        .map((t) => `${file} -> ${t}`),
    ),
  );
}

/**
 * What the CLI may import from workflows/ by value besides the pure rules: the message definitions
 * a client sends (the run's and the breaker entity's, whose contracts are schemas/), the UI text
 * builders (pure; `vigil status` and `vigil runs` print the lines the Temporal UI shows), and the
 * log-read workflow `vigil logs` starts by its function (it could start it by name with a type
 * import instead; cli/logs.ts is not part of this layering change).
 */
const CLI_WORKFLOW_MODULES = new Set(['workflows/messages', 'workflows/provider-breaker-messages', 'workflows/ui', 'workflows/read-log']);

const fromWorkflows = (t: string): boolean => t.startsWith('workflows/') && !t.startsWith('workflows/decisions/');

/** Lines of a file (a final newline ends the last line, it does not start another). */
const lineCount = (file: string): number => readFileSync(path.join(ROOT, file), 'utf8').replace(/\n$/, '').split('\n').length;

/** Lines of the top-level function `name` of `file`, from `export async function` to its closing brace. */
function functionLines(file: string, name: string): number {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const fn = source.statements.find((s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === name);
  if (!fn) throw new Error(`${file} has no function ${name}`);
  return source.getLineAndCharacterOfPosition(fn.getEnd()).line - source.getLineAndCharacterOfPosition(fn.getStart()).line + 1;
}

/** Code only runs from before an era take, kept as it ran: exempt from the size limit. */
const FROZEN_ERA_MODULES = new Set(['workflows/run/before-council.ts']);

describe('the run loop as named steps', () => {
  it('vigilRun fits in about 200 lines and its file in 300', () => {
    expect(functionLines('workflows/run-workflow.ts', 'vigilRun')).toBeLessThanOrEqual(200);
    expect(lineCount('workflows/run-workflow.ts')).toBeLessThanOrEqual(300);
  });

  it('no file of workflows/ outside decisions/ is over 450 lines, but a frozen era module', () => {
    const long = tsFiles('workflows')
      .filter((f) => !f.startsWith('workflows/decisions/') && !FROZEN_ERA_MODULES.has(f))
      .map((f) => ({ f, lines: lineCount(f) }))
      .filter(({ lines }) => lines > 450);
    expect(long).toEqual([]);
  });

  it('every patched() of the run loop is asked in workflows/run/eras.ts (the hosts patch in workflows/hosts.ts)', () => {
    const callsPatched = (file: string): boolean => {
      const source = ts.createSourceFile(
        file,
        readFileSync(path.join(ROOT, file), 'utf8'),
        ts.ScriptTarget.ES2022,
        false,
        ts.ScriptKind.TS,
      );
      const visit = (node: ts.Node): boolean =>
        (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'patched') ||
        (ts.forEachChild(node, visit) ?? false);
      return visit(source);
    };
    const callers = tsFiles('workflows').filter(callsPatched);
    expect(callers.sort()).toEqual(['workflows/hosts.ts', 'workflows/run/eras.ts']);
  });

  it('the patch ids of workflows/run/eras.ts are the ones the replay fixture table pins', () => {
    expect(new Set(PATCH_IDS).size).toBe(PATCH_IDS.length);
    expect([...new Set(ERAS.map((e) => e.patch))].sort()).toEqual([...PATCH_IDS].sort());
  });
});

describe('architecture', () => {
  it('has no import circle', async () => {
    expect(await circles('.')).toEqual([]);
  }, 120_000);

  it('activities import workflow code by value only from workflows/decisions/', () => {
    expect(violations(['activities'], fromWorkflows)).toEqual([]);
  });

  it('the CLI imports workflow code by value only from workflows/decisions/ and the message definitions', () => {
    expect(violations(['cli'], (t) => fromWorkflows(t) && !CLI_WORKFLOW_MODULES.has(t))).toEqual([]);
  });

  it('rounds/ imports neither activities nor workflow code but the pure rules', () => {
    expect(violations(['rounds'], (t) => t.startsWith('activities/') || fromWorkflows(t))).toEqual([]);
  });

  it('workflow code imports no activity by value', () => {
    expect(violations(['workflows'], (t) => t.startsWith('activities/'))).toEqual([]);
  });

  it('the scan sees value imports and skips type-only ones', () => {
    // A check of the checker on this file: it imports `activities/index` for types only.
    const mine = valueImports('tests/unit/architecture.test.ts');
    expect(mine).not.toContain('activities/index');
    expect(mine).not.toContain('rounds/calls');
    expect(valueImports('activities/rounds.ts')).toContain('rounds/council-round');
  });
});

// The rounds' call signatures (rounds/calls.ts) are the registered activities' own, both ways: a
// change to an activity's input or result that the rounds do not follow fails the type check.
type Registered = Pick<ActivityInterfaceFor<typeof activities>, keyof RoundCalls>;
const _roundsCallActivities: RoundCalls = null as unknown as Registered;
const _activitiesServeRounds: Registered = null as unknown as RoundCalls;
void _roundsCallActivities;
void _activitiesServeRounds;
