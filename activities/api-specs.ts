/**
 * The API descriptions a PRD names (OpenAPI or Swagger in YAML or JSON, a Postman collection, a
 * GraphQL schema), read from the repository and parsed into their operations for the PRD checklist
 * (rules/checklist/api-spec.ts says what becomes an item). The checklist extraction's
 * activity (activities/agent.ts) adds them to the agent's items.
 *
 * The files are the repository's (the agent may have written them), so they are read as untrusted:
 * only inside the repository (no link out), regular files of at most 1 MiB, YAML without custom
 * tags (a document with an unknown one is skipped) and with its alias expansion bounded (the `yaml`
 * library's `maxAliasCount`). A file that is missing or plainly something else (a `package.json`)
 * is skipped: the PRD may name any file. One that is meant as an API description and cannot be read
 * as one (a GraphQL file that does not parse, a document that says `openapi` but breaks as YAML or
 * has no `paths`, one too large or behind a link) is a problem, said with the checklist: its
 * operations are missing from it, and the person should know why.
 */
import path from 'node:path';
import { Kind, parse as parseGraphql, type DocumentNode } from 'graphql';
import { parseDocument } from 'yaml';
import {
  graphqlOperations,
  namedSpecFiles,
  openApiOperations,
  postmanOperations,
  specKind,
  type ApiOperation,
  type GraphqlField,
} from '../rules/checklist/api-spec.js';
import { readRepoText } from './gates/test-integrity.js';
import { readRegularFile } from '../lib/safe-files.js';

const MAX_SPEC_BYTES = 1024 * 1024;

/** What the API descriptions a PRD names gave: their operations, and the files that could not be read as one. */
export type ApiSpecsRead = { specs: { file: string; operations: ApiOperation[] }[]; problems: string[] };

/** The operations of each API description the PRD names, in the order it names them. */
export function apiSpecsOfPrd(repoPath: string, prdPath: string): { file: string; operations: ApiOperation[] }[] {
  return readApiSpecs(repoPath, prdPath).specs;
}

/** The operations of each API description the PRD names, and why any named one could not be read (a line each). */
export function readApiSpecs(repoPath: string, prdPath: string): ApiSpecsRead {
  // The PRD is the person's file, wherever it is; the files it names are read from the repository only.
  const abs = path.resolve(repoPath, prdPath);
  const prd = readRegularFile(abs, MAX_SPEC_BYTES);
  const out: ApiSpecsRead = { specs: [], problems: [] };
  if (!prd?.ok) return out;
  const prdDir = path.dirname(path.relative(repoPath, abs));
  for (const named of namedSpecFiles(prd.text)) {
    // As written from the repository's root, else from the PRD's folder when the PRD is in the repository.
    for (const rel of new Set([named, path.normalize(path.join(prdDir, named))])) {
      if (rel.startsWith('..') || path.isAbsolute(rel)) continue;
      const read = readOperations(repoPath, rel);
      if (read.kind === 'skip') continue;
      if (read.kind === 'problem')
        out.problems.push(
          `${rel}, named by the PRD, is not a readable API description (${read.problem}): its operations are not in the checklist`,
        );
      else if (read.operations.length > 0) out.specs.push({ file: rel, operations: read.operations });
      break;
    }
  }
  return out;
}

/** The operations of one file, or null when it is not there, not readable or no API description. */
export function operationsOf(repoPath: string, rel: string): ApiOperation[] | null {
  const read = readOperations(repoPath, rel);
  return read.kind === 'operations' ? read.operations : null;
}

type OperationsRead = { kind: 'operations'; operations: ApiOperation[] } | { kind: 'skip' } | { kind: 'problem'; problem: string };

const GRAPHQL_FILE = /\.(graphqls?|gql)$/i;

/**
 * Whether a JSON or YAML text is meant as an API description: its top level says `openapi` or
 * `swagger`, or it names Postman's collection schema. Such a file that does not parse is a problem;
 * any other is some other file the PRD mentions.
 */
export function looksLikeApiSpec(text: string): boolean {
  return /(?:^|[{,])\s*["']?(?:openapi|swagger)["']?\s*:/m.test(text) || /schema\.getpostman\.com/i.test(text);
}

function readOperations(repoPath: string, rel: string): OperationsRead {
  const r = readRepoText(repoPath, rel, MAX_SPEC_BYTES);
  if (r.kind === 'absent') return { kind: 'skip' };
  // Too large, or behind a link: said only for a file whose name says what it is meant to be.
  if (r.kind === 'problem')
    return GRAPHQL_FILE.test(rel) || /openapi|swagger|postman/i.test(rel) ? { kind: 'problem', problem: r.problem } : { kind: 'skip' };
  if (GRAPHQL_FILE.test(rel)) {
    try {
      return { kind: 'operations', operations: graphqlOperations(rootFields(parseGraphql(r.text, { noLocation: true }))) };
    } catch (err) {
      return { kind: 'problem', problem: `GraphQL: ${firstLine(err)}` };
    }
  }
  const meant = looksLikeApiSpec(r.text);
  let doc: unknown;
  try {
    doc = /\.json$/i.test(rel) ? JSON.parse(r.text) : yamlOf(r.text);
  } catch (err) {
    return meant ? { kind: 'problem', problem: firstLine(err) } : { kind: 'skip' };
  }
  const kind = specKind(doc);
  if (kind === 'openapi') return { kind: 'operations', operations: openApiOperations(doc as Record<string, unknown>) };
  if (kind === 'postman') return { kind: 'operations', operations: postmanOperations(doc as Record<string, unknown>) };
  if (!meant) return { kind: 'skip' };
  return { kind: 'problem', problem: 'it names OpenAPI, Swagger or Postman but has no `paths` (or `item` list)' };
}

const firstLine = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 160);

/** A YAML document's value. Throws on its first error or warning (an unknown tag is one), and on an alias bomb. */
function yamlOf(text: string): unknown {
  const doc = parseDocument(text, { customTags: [], logLevel: 'silent' });
  const trouble = doc.errors[0] ?? doc.warnings[0];
  if (trouble) throw new Error(`YAML: ${trouble.message}`);
  return doc.toJS({ maxAliasCount: 100 });
}

/** The fields of the schema's root types: those its `schema { … }` names, else Query, Mutation and Subscription. */
function rootFields(doc: DocumentNode): GraphqlField[] {
  const roots = new Map<string, string>([
    ['Query', 'Query'],
    ['Mutation', 'Mutation'],
    ['Subscription', 'Subscription'],
  ]);
  for (const d of doc.definitions)
    if (d.kind === Kind.SCHEMA_DEFINITION || d.kind === Kind.SCHEMA_EXTENSION)
      for (const op of d.operationTypes ?? []) {
        const root = op.operation === 'query' ? 'Query' : op.operation === 'mutation' ? 'Mutation' : 'Subscription';
        for (const [k, v] of roots) if (v === root) roots.delete(k);
        roots.set(op.type.name.value, root);
      }
  const fields: GraphqlField[] = [];
  for (const d of doc.definitions) {
    if (d.kind !== Kind.OBJECT_TYPE_DEFINITION && d.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
    const root = roots.get(d.name.value);
    if (!root) continue;
    for (const f of d.fields ?? [])
      fields.push({
        root,
        field: f.name.value,
        args: (f.arguments ?? []).map((a) => a.name.value),
        description: 'description' in f && f.description ? f.description.value : null,
      });
  }
  return fields;
}
