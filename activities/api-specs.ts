/**
 * The API descriptions a PRD names (OpenAPI or Swagger in YAML or JSON, a Postman collection, a
 * GraphQL schema), read from the repository and parsed into their operations for the PRD checklist
 * (rules/checklist/api-spec.ts says what becomes an item). The checklist extraction's
 * activity (activities/agent.ts) adds them to the agent's items.
 *
 * The files are the repository's (the agent may have written them), so they are read as untrusted:
 * only inside the repository (no link out), regular files of at most 1 MiB, YAML without custom
 * tags (a document with an unknown one is skipped) and with its alias expansion bounded (the `yaml`
 * library's `maxAliasCount`). A file that is
 * missing, unreadable or not an API description is skipped: the PRD may name any file.
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

/** The operations of each API description the PRD names, in the order it names them. */
export function apiSpecsOfPrd(repoPath: string, prdPath: string): { file: string; operations: ApiOperation[] }[] {
  // The PRD is the person's file, wherever it is; the files it names are read from the repository only.
  const abs = path.resolve(repoPath, prdPath);
  const prd = readRegularFile(abs, MAX_SPEC_BYTES);
  if (!prd?.ok) return [];
  const out: { file: string; operations: ApiOperation[] }[] = [];
  const prdDir = path.dirname(path.relative(repoPath, abs));
  for (const named of namedSpecFiles(prd.text)) {
    // As written from the repository's root, else from the PRD's folder when the PRD is in the repository.
    for (const rel of new Set([named, path.normalize(path.join(prdDir, named))])) {
      if (rel.startsWith('..') || path.isAbsolute(rel)) continue;
      const operations = operationsOf(repoPath, rel);
      if (operations === null) continue;
      if (operations.length > 0) out.push({ file: rel, operations });
      break;
    }
  }
  return out;
}

/** The operations of one file, or null when it is not there, not readable or no API description. */
export function operationsOf(repoPath: string, rel: string): ApiOperation[] | null {
  const r = readRepoText(repoPath, rel, MAX_SPEC_BYTES);
  if (r.kind !== 'text') return null;
  try {
    if (/\.(graphqls?|gql)$/i.test(rel)) return graphqlOperations(rootFields(parseGraphql(r.text, { noLocation: true })));
    const doc: unknown = /\.json$/i.test(rel) ? JSON.parse(r.text) : yamlOf(r.text);
    const kind = specKind(doc);
    if (kind === 'openapi') return openApiOperations(doc as Record<string, unknown>);
    if (kind === 'postman') return postmanOperations(doc as Record<string, unknown>);
    return null;
  } catch {
    return null;
  }
}

/** A YAML document's value; null when it has an error or a warning (an unknown tag is one). Throws on an alias bomb. */
function yamlOf(text: string): unknown {
  const doc = parseDocument(text, { customTags: [], logLevel: 'silent' });
  if (doc.errors.length > 0 || doc.warnings.length > 0) return null;
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
