/**
 * API descriptions named in the PRD become checklist items, one per operation
 * (rules/checklist/api-spec.ts, activities/api-specs.ts), against real files in a
 * real repository: OpenAPI in YAML, Swagger in JSON, a Postman collection, a GraphQL schema. Files
 * that are not API descriptions, files outside the repository and hostile YAML add nothing.
 */
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiSpecsOfPrd, looksLikeApiSpec, operationsOf, readApiSpecs } from '../../activities/api-specs.js';
import { type ChecklistItem, ChecklistSchema, MAX_CHECKLIST_ITEMS } from '../../schemas/gates.js';
import { namedSpecFiles, withApiItems } from '../../rules/checklist/api-spec.js';
import { makeRepo } from '../support/harness.js';

const OPENAPI = `openapi: 3.0.3
info: { title: Pets, version: '1' }
paths:
  /pets:
    get:
      summary: List the pets
      responses: { '200': { description: ok } }
    post:
      summary: Add a pet
      responses: { '201': { description: created }, '400': { description: bad } }
  /pets/{id}:
    get:
      responses: { '200': { description: ok }, '404': { description: none } }
`;

const SWAGGER = JSON.stringify({
  swagger: '2.0',
  info: { title: 'x', version: '1' },
  paths: { '/health': { get: { description: 'Liveness' } } },
});

const POSTMAN = JSON.stringify({
  info: { name: 'Shop', schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json' },
  item: [
    { name: 'Orders', item: [{ name: 'Create order', request: { method: 'POST', url: { raw: '{{base}}/orders' } } }] },
    { name: 'Ping', request: '{{base}}/ping' },
  ],
});

const GRAPHQL = `schema { query: Root mutation: Change }
type Root {
  "A user by id"
  user(id: ID!): User
  users: [User!]!
}
type Change { rename(id: ID!, name: String!): User }
type User { id: ID! name: String }
`;

const PRD = [
  '# The pet shop API',
  '',
  'Implement the API in `api/openapi.yaml`, the health check of swagger.json, the requests of',
  'postman/shop.json and the schema in schema.graphql. Dependencies are in package.json.',
  '',
].join('\n');

const item = (id: string, title: string): ChecklistItem => ({ id, title, priority: 'medium', verify: '' });

describe('API descriptions named in the PRD', () => {
  it('finds the file names a PRD mentions, never an absolute path or one leading out', () => {
    expect(namedSpecFiles(PRD)).toEqual(['api/openapi.yaml', 'swagger.json', 'postman/shop.json', 'schema.graphql', 'package.json']);
    expect(namedSpecFiles('See /etc/passwd.json and ../secrets.yaml, or ./spec.yml.')).toEqual(['spec.yml']);
  });

  it('reads each kind into its operations, from the repository, and skips what is no API description', () => {
    const repo = makeRepo({
      files: {
        'README.md': '# r\n',
        'PRD.md': PRD,
        'api/openapi.yaml': OPENAPI,
        'swagger.json': SWAGGER,
        'postman/shop.json': POSTMAN,
        'schema.graphql': GRAPHQL,
        'package.json': '{ "name": "shop" }\n',
      },
    });
    const specs = apiSpecsOfPrd(repo, path.join(repo, 'PRD.md'));
    expect(specs.map((s) => [s.file, s.operations.map((o) => o.name)])).toEqual([
      ['api/openapi.yaml', ['GET /pets', 'POST /pets', 'GET /pets/{id}']],
      ['swagger.json', ['GET /health']],
      ['postman/shop.json', ['POST {{base}}/orders', 'GET {{base}}/ping']],
      ['schema.graphql', ['Query.user(id)', 'Query.users', 'Mutation.rename(id, name)']],
    ]);
    expect(specs[0]?.operations[1]?.verify).toBe('call POST /pets and check it answers as declared (responses 201, 400)');

    // A PRD outside the repository (the person's file) names files in it, from the repository's root.
    const elsewhere = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-prd-')), 'PRD.md');
    writeFileSync(elsewhere, PRD);
    expect(apiSpecsOfPrd(repo, elsewhere).map((s) => s.file)).toEqual(specs.map((s) => s.file));

    const items = withApiItems([item('REQ-1', 'Pets can be listed')], specs);
    expect(ChecklistSchema.parse(items)).toHaveLength(1 + 3 + 1 + 2 + 3);
    expect(items[1]).toEqual({
      id: 'API-1',
      title: 'GET /pets works as api/openapi.yaml declares: List the pets',
      priority: 'high',
      verify: 'call GET /pets and check it answers as declared (responses 200)',
    });
    expect(items.at(-3)?.title).toBe('Query.user(id) works as schema.graphql declares: A user by id');
  });

  it('adds no item twice, and keeps the cap: the rest of a large file is one item', () => {
    const ops = Array.from({ length: 80 }, (_, i) => ({ name: `GET /r${i}`, summary: null, verify: `call GET /r${i}` }));
    const have = [item('REQ-1', 'GET /r0 works as big.yaml declares')];
    const items = withApiItems(have, [{ file: 'big.yaml', operations: ops }]);
    expect(ChecklistSchema.parse(items)).toHaveLength(MAX_CHECKLIST_ITEMS);
    expect(items.filter((i) => i.title.startsWith('GET /r0 '))).toHaveLength(1);
    expect(items.at(-1)?.title).toBe('the other 21 operation(s) of big.yaml work as it declares');
    expect(withApiItems(items, [{ file: 'more.yaml', operations: ops }])).toEqual(items);
  });

  it('reads nothing outside the repository, and no hostile YAML', () => {
    const outside = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-outside-')), 'openapi.yaml');
    writeFileSync(outside, OPENAPI);
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      ...Array.from({ length: 9 }, (_, i) => `${'bcdefghij'[i]}: &${'bcdefghij'[i]} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(', ')}]`),
    ].join('\n');
    const repo = makeRepo({
      files: {
        'README.md': '# r\n',
        'bomb.yaml': `openapi: 3.0.0\npaths: {}\n${bomb}\n`,
        'tagged.yaml': 'openapi: !!js/function "x"\npaths: {}\n',
      },
    });
    symlinkSync(path.dirname(outside), path.join(repo, 'linked'));
    symlinkSync(outside, path.join(repo, 'direct.yaml'));
    expect(operationsOf(repo, 'linked/openapi.yaml')).toBeNull();
    expect(operationsOf(repo, 'direct.yaml')).toBeNull();
    expect(operationsOf(repo, 'bomb.yaml')).toBeNull();
    expect(operationsOf(repo, 'tagged.yaml')).toBeNull();
    expect(operationsOf(repo, 'missing.yaml')).toBeNull();
  });

  it('says which named API description could not be read, and why; other files the PRD names stay silent', () => {
    const repo = makeRepo({
      files: {
        'README.md': '# r\n',
        'package.json': '{ "name": "x", "version": "1.0.0" }\n',
        'config.yaml': 'port: [8080\n',
        'api/openapi.yaml': OPENAPI,
        'api/broken.yaml': 'openapi: 3.0.3\npaths:\n  /a: [\n',
        'api/nopaths.json': JSON.stringify({ openapi: '3.1.0', info: { title: 'x', version: '1' } }),
        'api/tagged.yaml': 'openapi: !!js/function "x"\npaths: {}\n',
        'api/schema.graphql': 'type Query {\n  a: Int\n',
        'PRD.md': [
          '# Build',
          'See `api/openapi.yaml`, `api/broken.yaml`, `api/nopaths.json`, `api/tagged.yaml` and `api/schema.graphql`.',
          'Keep `package.json` and `config.yaml`; write `api/later.yaml`.',
        ].join('\n'),
      },
    });
    const read = readApiSpecs(repo, 'PRD.md');
    expect(read.specs.map((s) => [s.file, s.operations.length])).toEqual([['api/openapi.yaml', 3]]);
    expect(read.problems).toHaveLength(4);
    const said = (file: string): string => read.problems.find((p) => p.startsWith(`${file},`)) ?? '';
    expect(said('api/broken.yaml')).toMatch(
      /^api\/broken\.yaml, named by the PRD, is not a readable API description \(YAML: .+\): its operations/,
    );
    expect(said('api/nopaths.json')).toMatch(/names OpenAPI, Swagger or Postman but has no `paths`/);
    expect(said('api/tagged.yaml')).toMatch(/\(YAML: .*tag/i);
    expect(said('api/schema.graphql')).toMatch(/\(GraphQL: Syntax Error/);
    // Neither a file that is something else (even broken YAML) nor one still to be written is a problem.
    expect(read.problems.join('\n')).not.toMatch(/package\.json|config\.yaml|later\.yaml/);
    expect(apiSpecsOfPrd(repo, 'PRD.md')).toEqual(read.specs);
  });

  it('tells an API description from other JSON and YAML by its top-level keys', () => {
    expect(looksLikeApiSpec('openapi: 3.0.0\n')).toBe(true);
    expect(looksLikeApiSpec('{\n  "swagger": "2.0"\n}')).toBe(true);
    expect(looksLikeApiSpec('{"info":{},"openapi":"3.1.0"}')).toBe(true);
    expect(looksLikeApiSpec('{"info":{"schema":"https://schema.getpostman.com/json/collection/v2.1.0/"}}')).toBe(true);
    expect(looksLikeApiSpec('{ "name": "x", "description": "an openapi tool" }')).toBe(false);
    expect(looksLikeApiSpec('port: 8080\n')).toBe(false);
  });
});
