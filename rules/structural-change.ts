/**
 * The tier ladder's structural triggers (seed 002, MEDIUM -> HIGH): an iteration that changes the
 * repository's core (`core/` anywhere in a path), an API contract (an OpenAPI or Swagger document,
 * a protobuf, GraphQL or Avro schema), or more than three services (`services/<name>/`,
 * `apps/<name>/`, `packages/<name>/`, `cmd/<name>/`, `microservices/<name>/`) needs the planning
 * tier. The seed's other two, a cyclomatic complexity above 15 and a 2x performance regression,
 * are not measured here.
 *
 * Pure: no clocks, randomness, environment or I/O.
 */

/** What an iteration's changed paths say about its structure (each list capped). */
export interface StructuralFacts {
  corePaths: string[];
  contracts: string[];
  services: string[];
}

/** More services than this touched in one iteration is cross-service work. */
export const SERVICES_LIMIT = 3;

const CORE = /(^|\/)core\//;
const CONTRACT = [/(^|\/)(openapi|swagger)[^/]*\.(ya?ml|json)$/i, /\.proto$/i, /\.(graphql|gql)$/i, /\.avsc$/i];
const SERVICE_ROOTS = new Set(['services', 'apps', 'packages', 'cmd', 'microservices']);

export function structuralFacts(paths: readonly string[]): StructuralFacts {
  const norm = paths.map((p) => p.replace(/\\/g, '/'));
  const services = new Set<string>();
  for (const p of norm) {
    const [root, name, ...rest] = p.split('/');
    if (root && name && rest.length > 0 && SERVICE_ROOTS.has(root)) services.add(`${root}/${name}`);
  }
  return {
    corePaths: norm.filter((p) => CORE.test(p)).slice(0, 10),
    contracts: norm.filter((p) => CONTRACT.some((re) => re.test(p))).slice(0, 10),
    services: [...services].sort().slice(0, 20),
  };
}

/** Why the facts call for the planning tier; empty: they do not (or were not observed). */
export function structuralReasons(f: StructuralFacts | undefined): string[] {
  if (!f) return [];
  const reasons: string[] = [];
  if (f.corePaths.length) reasons.push(`core changed (${f.corePaths.slice(0, 3).join(', ')})`);
  if (f.contracts.length) reasons.push(`an API contract changed (${f.contracts.slice(0, 3).join(', ')})`);
  if (f.services.length > SERVICES_LIMIT) reasons.push(`${f.services.length} services changed (> ${SERVICES_LIMIT})`);
  return reasons;
}
