/**
 * API descriptions named in the PRD, as checklist items (activities/api-specs.ts reads and parses
 * the files): a PRD that says "implement the API in openapi.yaml" asks for every operation of it,
 * and an extraction agent summarising the PRD may list a few or none. Each operation becomes an item
 * of its own, so the checklist verifier and the council judge each one:
 *
 * - OpenAPI 3 / Swagger 2: one item per path and method (`GET /users/{id}`), its summary and the
 *   responses it declares;
 * - a Postman collection (v2.x): one item per request, folders walked;
 * - a GraphQL schema (SDL): one item per field of Query, Mutation and Subscription (or the types
 *   the schema definition names for them).
 *
 * An item the extraction already has (same title) is not added twice, and the checklist's cap
 * holds: what does not fit is one item naming how many operations it stands for.
 *
 * Sandbox-safe: pure functions, no Node imports.
 */
import { type ChecklistItem, MAX_CHECKLIST_ITEMS } from '../../schemas/gates.js';
import { isRecord, MAX_TITLE_CHARS, MAX_VERIFY_CHARS, oneLine, uniqueId } from './common.js';

/** One operation an API description declares. */
export interface ApiOperation {
  /** `GET /users/{id}`, `Query.user`, or a Postman request's method and URL. */
  name: string;
  /** Its summary or description, if the file gives one. */
  summary: string | null;
  /** How to check it, from what the file declares (responses, arguments). */
  verify: string;
}

export type ApiSpecKind = 'openapi' | 'postman' | 'graphql';

/** The file names a PRD mentions that may be API descriptions (by extension; the parse decides). */
export function namedSpecFiles(prd: string): string[] {
  const out = new Set<string>();
  for (const m of prd.matchAll(
    /(?:^|[\s`'"(<[])((?:\.{0,2}\/)?[\w@.-]+(?:\/[\w@.-]+)*\.(?:ya?ml|json|graphqls?|gql))(?=$|[\s`'")>\],.;:!?])/gim,
  )) {
    const f = (m[1] as string).replace(/^\.\//, '');
    if (!f.startsWith('/') && !f.split('/').includes('..')) out.add(f);
  }
  return [...out].slice(0, 20);
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/** The kind of a parsed JSON/YAML document, or null when it is no API description. */
export function specKind(doc: unknown): Exclude<ApiSpecKind, 'graphql'> | null {
  if (!isRecord(doc)) return null;
  if ((typeof doc.openapi === 'string' || typeof doc.swagger === 'string') && isRecord(doc.paths)) return 'openapi';
  const info = doc.info;
  if (isRecord(info) && typeof info.schema === 'string' && /schema\.getpostman\.com/i.test(info.schema) && Array.isArray(doc.item))
    return 'postman';
  return null;
}

/** Every operation of an OpenAPI or Swagger document, in the file's order. */
export function openApiOperations(doc: Record<string, unknown>): ApiOperation[] {
  const ops: ApiOperation[] = [];
  const paths = isRecord(doc.paths) ? doc.paths : {};
  for (const [p, item] of Object.entries(paths)) {
    if (!isRecord(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!isRecord(op)) continue;
      const summary = typeof op.summary === 'string' ? op.summary : typeof op.description === 'string' ? op.description : null;
      const codes = isRecord(op.responses) ? Object.keys(op.responses) : [];
      ops.push({
        name: `${method.toUpperCase()} ${p}`,
        summary,
        verify: `call ${method.toUpperCase()} ${p} and check it answers as declared${codes.length ? ` (responses ${codes.join(', ')})` : ''}`,
      });
    }
  }
  return ops;
}

/** Every request of a Postman collection, folders walked in order. */
export function postmanOperations(doc: Record<string, unknown>): ApiOperation[] {
  const ops: ApiOperation[] = [];
  const walk = (items: unknown, depth: number): void => {
    if (!Array.isArray(items) || depth > 32) return;
    for (const it of items) {
      if (!isRecord(it)) continue;
      if (Array.isArray(it.item)) walk(it.item, depth + 1);
      const req = it.request;
      if (req === undefined) continue;
      const method = isRecord(req) && typeof req.method === 'string' ? req.method.toUpperCase() : 'GET';
      const url = isRecord(req) ? req.url : req;
      const raw = typeof url === 'string' ? url : isRecord(url) && typeof url.raw === 'string' ? url.raw : '';
      const name = typeof it.name === 'string' ? it.name : null;
      ops.push({
        name: `${method} ${raw || name || 'request'}`,
        summary: name,
        verify: `send the collection's "${name ?? raw}" request and check the answer`,
      });
    }
  };
  walk(doc.item, 0);
  return ops;
}

/** One root field of a GraphQL schema, as activities/api-specs.ts reads it from the parsed SDL. */
export interface GraphqlField {
  root: string;
  field: string;
  args: string[];
  description: string | null;
}

/** Every field of the schema's root types. */
export function graphqlOperations(fields: readonly GraphqlField[]): ApiOperation[] {
  return fields.map((f) => ({
    name: `${f.root}.${f.field}${f.args.length ? `(${f.args.join(', ')})` : ''}`,
    summary: f.description,
    verify: `run a ${f.root.toLowerCase()} of ${f.field} against the server and check it resolves as the schema declares`,
  }));
}

/**
 * The checklist with the operations of each API description added (after the extraction's own
 * items, ids `API-1`…, priority high): none twice, within the checklist's cap.
 */
export function withApiItems(
  items: readonly ChecklistItem[],
  specs: readonly { file: string; operations: ApiOperation[] }[],
): ChecklistItem[] {
  const out = [...items];
  const ids = new Set(out.map((i) => i.id));
  const titles = new Set(out.map((i) => i.title.toLowerCase()));
  let n = 0;
  for (const { file, operations } of specs) {
    const fresh = operations.filter((op) => !titles.has(titleOf(op, file).toLowerCase()));
    const room = MAX_CHECKLIST_ITEMS - out.length;
    if (room <= 0 || fresh.length === 0) continue;
    // What does not fit is one item for the rest of the file's operations.
    const shown = fresh.length <= room ? fresh : fresh.slice(0, room - 1);
    for (const op of shown) {
      const id = uniqueId(`API-${++n}`, ids);
      ids.add(id);
      const title = titleOf(op, file);
      titles.add(title.toLowerCase());
      out.push({ id, title, priority: 'high', verify: oneLine(op.verify, MAX_VERIFY_CHARS) });
    }
    const rest = fresh.length - shown.length;
    if (rest > 0) {
      const id = uniqueId(`API-${++n}`, ids);
      ids.add(id);
      out.push({
        id,
        title: oneLine(`the other ${rest} operation(s) of ${file} work as it declares`, MAX_TITLE_CHARS),
        priority: 'high',
        verify: oneLine(
          `check each of ${fresh
            .slice(shown.length)
            .map((op) => op.name)
            .join(', ')}`,
          MAX_VERIFY_CHARS,
        ),
      });
    }
  }
  return out;
}

const titleOf = (op: ApiOperation, file: string): string =>
  oneLine(`${op.name} works as ${file} declares${op.summary ? `: ${op.summary}` : ''}`, MAX_TITLE_CHARS);
