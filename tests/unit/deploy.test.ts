/**
 * Owns the checks of the team deployment: docker-compose.yml, the Dockerfile, .dockerignore and
 * the scripts under deploy/. No Docker engine runs on these machines, so nothing is pulled, built
 * or started: the files are parsed and held against the package they deploy — the services and
 * their wiring, pinned images, the search attributes of schemas/search-attributes.ts, the
 * vigil_events database, the build steps of package.json, the files the image copies, the Node
 * version of `engines`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SEARCH_ATTRIBUTE_FLAGS } from '../../schemas/search-attributes.js';
import { resolveOperations } from '../../cli/operations.js';
import { parseHostName } from '../../schemas/hosts.js';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../workers/dev-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

// js-yaml is installed with eslint (@eslint/eslintrc) and has no type declarations: the one
// function used is typed here.
const loadYaml = (createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown }).load;

// ---------------------------------------------------------------------------------------------
// docker-compose.yml

type EnvValue = string | number | boolean | null;
interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string; args?: Record<string, EnvValue> };
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, EnvValue> | string[];
  env_file?: unknown;
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[] };
  volumes?: (string | { type?: string; source?: string; target?: string })[];
  ports?: (string | number)[];
  restart?: string;
  container_name?: string;
  expose?: (string | number)[];
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const compose = loadYaml(read('docker-compose.yml')) as Compose;
const services = compose.services;

function service(name: string): Service {
  const s = services[name];
  if (!s) throw new Error(`docker-compose.yml has no service ${name}`);
  return s;
}

function env(s: Service): Record<string, string> {
  const e = s.environment ?? {};
  if (Array.isArray(e)) return Object.fromEntries(e.map((kv) => [kv.split('=')[0] as string, kv.slice(kv.indexOf('=') + 1)]));
  return Object.fromEntries(Object.entries(e).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

interface Mount {
  source: string;
  target: string;
}

/** Short (`src:target[:mode]`, src may be `${VAR:-default}`) and long volume syntax. */
function mounts(s: Service): Mount[] {
  return (s.volumes ?? []).map((v) => {
    if (typeof v !== 'string') return { source: v.source ?? '', target: v.target ?? '' };
    const m = /^(\$\{[^}]*\}|[^:]+):([^:]+)(?::(?:ro|rw|z|Z))?$/.exec(v);
    if (!m) throw new Error(`unreadable volume entry ${v}`);
    return { source: m[1] as string, target: m[2] as string };
  });
}

const isNamedVolume = (source: string): boolean => !/^[./~$]/.test(source);

/** The file in the repository that a container path of this service is mounted from. */
function hostFileOf(s: Service, containerPath: string): string {
  for (const { source, target } of mounts(s)) {
    if (!source.startsWith('./')) continue;
    if (containerPath === target) return path.join(ROOT, source);
    if (containerPath.startsWith(`${target}/`)) return path.join(ROOT, source, containerPath.slice(target.length + 1));
  }
  throw new Error(`${containerPath} is not mounted from the repository`);
}

const asList = (x: string | string[] | undefined): string[] => (x === undefined ? [] : Array.isArray(x) ? x : x.split(/\s+/));

function dependsOn(s: Service): Record<string, string | undefined> {
  const d = s.depends_on ?? {};
  if (Array.isArray(d)) return Object.fromEntries(d.map((name) => [name, undefined]));
  return Object.fromEntries(Object.entries(d).map(([name, v]) => [name, v.condition]));
}

const IMAGE_TAG = /^[a-z0-9][a-z0-9./_-]*:(\d+\.\d+(?:\.\d+)?)(?:-[a-z0-9.]+)?$/;

// ---------------------------------------------------------------------------------------------
// Dockerfile and .dockerignore

interface Instruction {
  cmd: string;
  args: string;
  stage: number;
}

/** Instructions with continuation lines joined and comments dropped; `stage` counts FROMs from 0. */
function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let stage = -1;
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && pending === '')) continue;
    pending += `${line.replace(/\\$/, '').trim()} `;
    if (line.endsWith('\\')) continue;
    const [cmd = '', ...rest] = pending.trim().split(/\s+/);
    if (cmd.toUpperCase() === 'FROM') stage++;
    out.push({ cmd: cmd.toUpperCase(), args: rest.join(' '), stage });
    pending = '';
  }
  return out;
}

const dockerfile = parseDockerfile(read('Dockerfile'));
const stages = Math.max(...dockerfile.map((i) => i.stage)) + 1;
const runtime = dockerfile.filter((i) => i.stage === stages - 1);
const buildStage = dockerfile.filter((i) => i.stage === 0);
const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string>; engines: { node: string } };

const dockerignore = read('.dockerignore')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));

/** Whether .dockerignore keeps a repository path out of the build context (root-relative patterns, `*`). */
function ignored(file: string): boolean {
  return dockerignore.some((pattern) => {
    const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/.*)?$`);
    return re.test(file);
  });
}

/** tsconfig `compilerOptions` with `extends` followed. */
function tsconfigOptions(file: string): { outDir?: string; rootDir?: string; include?: string[] } {
  const json = JSON.parse(read(file)) as { extends?: string; compilerOptions?: { outDir?: string; rootDir?: string }; include?: string[] };
  const base = json.extends ? tsconfigOptions(path.join(path.dirname(file), json.extends)) : {};
  return { ...base, ...json.compilerOptions, include: json.include ?? base.include };
}

const version = (v: string): number[] => v.split('.').map(Number);
function atLeast(v: string, min: string): boolean {
  const [a, b] = [version(v), version(min)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

describe('docker-compose.yml', () => {
  it('runs Postgres, the Temporal server with its schema and setup jobs, the UI and Vigil workers', () => {
    expect(Object.keys(services).sort()).toEqual(['postgres', 'temporal', 'temporal-schema', 'temporal-setup', 'temporal-ui', 'vigil-worker']);
  });

  it('pins every image by a version tag', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.build !== undefined && s.image === undefined) continue;
      expect(s.image, `${name}: image`).toBeDefined();
      expect(s.image, `${name}: ${s.image} is not pinned by version`).toMatch(IMAGE_TAG);
      expect(s.image).not.toMatch(/latest|\$\{/);
    }
    expect(Object.values(services).filter((s) => s.build !== undefined).map((s) => s.image)).toEqual([undefined]);
  });

  it('runs temporalio/server with a temporalio/admin-tools schema job of the same version (auto-setup is deprecated)', () => {
    const tag = (image: string | undefined): string => (image ?? '').split(':')[1] ?? '';
    expect(service('temporal').image).toMatch(/^temporalio\/server:/);
    expect(service('temporal-schema').image).toMatch(/^temporalio\/admin-tools:/);
    expect(service('temporal-setup').image).toMatch(/^temporalio\/admin-tools:/);
    expect(service('temporal-ui').image).toMatch(/^temporalio\/ui:/);
    expect(service('postgres').image).toMatch(/^postgres:/);
    expect(tag(service('temporal-schema').image)).toBe(tag(service('temporal').image));
    expect(tag(service('temporal-setup').image)).toBe(tag(service('temporal').image));
    expect(Object.values(services).map((s) => s.image ?? '')).not.toContainEqual(expect.stringContaining('auto-setup'));
  });

  it('checks the health of Postgres (pg_isready) and of the Temporal frontend', () => {
    expect(asList(service('postgres').healthcheck?.test).join(' ')).toContain('pg_isready');
    expect(asList(service('temporal').healthcheck?.test).join(' ')).toContain('7233');
  });

  it('starts every service once what it needs is healthy or has completed', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const [dep, condition] of Object.entries(dependsOn(s))) {
        const target = service(dep);
        expect(['service_healthy', 'service_completed_successfully'], `${name} → ${dep}`).toContain(condition);
        if (condition === 'service_healthy') expect(target.healthcheck, `${dep} has no health check for ${name} to wait on`).toBeDefined();
        // A job others wait to complete must not be restarted forever.
        if (condition === 'service_completed_successfully') expect(target.restart ?? 'no', `${dep} is a one-shot job`).toBe('no');
      }
    }
    expect(dependsOn(service('temporal-schema'))).toEqual({ postgres: 'service_healthy' });
    expect(dependsOn(service('temporal'))).toEqual({ postgres: 'service_healthy', 'temporal-schema': 'service_completed_successfully' });
    expect(dependsOn(service('temporal-setup'))).toEqual({ temporal: 'service_healthy' });
    expect(dependsOn(service('temporal-ui'))).toEqual({ temporal: 'service_healthy' });
    expect(dependsOn(service('vigil-worker'))).toEqual({
      postgres: 'service_healthy',
      temporal: 'service_healthy',
      'temporal-setup': 'service_completed_successfully',
    });
  });

  it('keeps data on declared named volumes', () => {
    const named = Object.values(services).flatMap((s) => mounts(s).map((m) => m.source).filter(isNamedVolume));
    expect(named.length).toBeGreaterThan(0);
    for (const v of named) expect(Object.keys(compose.volumes ?? {}), `volume ${v} is not declared`).toContain(v);
    const data = mounts(service('postgres')).find((m) => m.target === '/var/lib/postgresql/data');
    expect(data && isNamedVolume(data.source), 'Postgres data on a named volume').toBe(true);
  });

  it('mounts only files that exist in the repository', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const { source } of mounts(s).filter((m) => m.source.startsWith('./'))) {
        expect(existsSync(path.join(ROOT, source)), `${name}: ${source}`).toBe(true);
      }
    }
  });

  it('publishes the frontend on 7233 and the UI on 8233, where the vigil CLI links to', () => {
    expect((service('temporal').ports ?? []).map(String)).toContainEqual(expect.stringMatching(/:7233:7233$/));
    expect((service('temporal-ui').ports ?? []).map(String)).toContainEqual(expect.stringMatching(/:8233:8080$/));
    expect(env(service('temporal-ui')).TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('wires the worker to the temporal service, the namespace the setup creates, and vigil_events on the postgres service', () => {
    const worker = env(service('vigil-worker'));
    expect(worker.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(worker.TEMPORAL_NAMESPACE).toBeTruthy();
    expect(worker.TEMPORAL_NAMESPACE).toBe(env(service('temporal-setup')).VIGIL_NAMESPACE);
    expect(worker.TEMPORAL_NAMESPACE).toBe(env(service('temporal-ui')).TEMPORAL_DEFAULT_NAMESPACE);

    const url = /^postgres(?:ql)?:\/\/([^:@/]+):([^@]*)@([^:/]+):(\d+)\/([^/?]+)$/.exec(worker.DATABASE_URL ?? '');
    expect(url, `DATABASE_URL ${worker.DATABASE_URL}`).not.toBeNull();
    const [, user, password, host, port, database] = url as RegExpExecArray;
    expect(host).toBe('postgres');
    expect(Object.keys(services)).toContain(host);
    expect(port).toBe('5432');
    expect(database).toBe('vigil_events');
    expect(user).toBe('vigil');
    // The same password the init script gives the vigil role.
    expect(password).toBe(env(service('postgres')).VIGIL_DB_PASSWORD);
  });

  it("gives the workers' operations settings by environment, with defaults the worker accepts", () => {
    const worker = env(service('vigil-worker'));
    // `${NAME:-default}` as compose resolves it when NAME is unset.
    const defaults = Object.fromEntries(Object.entries(worker).map(([k, v]) => [k, v.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));
    for (const k of ['VIGIL_METRICS_BIND', 'VIGIL_ACTIVITY_SLOTS', 'VIGIL_WORKFLOW_SLOTS', 'VIGIL_GIT_NICENESS', 'VIGIL_LOG_FORMAT', 'OTEL_EXPORTER_OTLP_ENDPOINT']) {
      expect(worker[k], k).toMatch(new RegExp(`^\\$\\{${k}:-`));
    }
    const ops = resolveOperations({}, defaults);
    expect(ops).toEqual({ logFormat: 'text', metricsBind: '0.0.0.0:9464', otel: null, tuning: { activitySlots: 200, workflowSlots: 16, localActivitySlots: 100, maxCachedWorkflows: null, gitNiceness: 10 } });
    // The metrics port is the one the service declares, on the compose network only.
    expect((service('vigil-worker').expose ?? []).map(String)).toEqual(['9464']);
    expect(resolveOperations({}, { ...defaults, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).otel).toEqual({ endpoint: null });
  });

  it('builds the worker from the Dockerfile and lets it scale', () => {
    const worker = service('vigil-worker');
    const build = typeof worker.build === 'string' ? { context: worker.build } : (worker.build ?? {});
    expect(build.context).toBe('.');
    expect(existsSync(path.join(ROOT, build.dockerfile ?? 'Dockerfile'))).toBe(true);
    const declared = dockerfile.filter((i) => i.cmd === 'ARG').map((i) => i.args.split('=')[0]);
    for (const arg of Object.keys(build.args ?? {})) expect(declared, `build arg ${arg}`).toContain(arg);
    expect(build.args).toHaveProperty('AGENT_PACKAGES');
    // `--scale vigil-worker=N` needs no fixed container name and no host port.
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports).toBeUndefined();
    expect(asList(worker.command)).toEqual(['worker']);
    expect(worker.env_file, 'credentials come from an env file').toBeDefined();
  });

  it('makes every worker one host, as they share the repositories, with a valid default name', () => {
    const host = /^\$\{VIGIL_HOST:-([^}]+)\}$/.exec(env(service('vigil-worker')).VIGIL_HOST ?? '');
    expect(host, 'VIGIL_HOST: ${VIGIL_HOST:-<name>}').not.toBeNull();
    expect(parseHostName(host?.[1] ?? '')).toEqual({ ok: true, host: host?.[1] });
  });

  it('mounts the repositories at /repos and one VIGIL_HOME volume for all workers', () => {
    const worker = service('vigil-worker');
    const repos = mounts(worker).find((m) => m.target === '/repos');
    expect(repos?.source).toMatch(/^\$\{VIGIL_REPOS:-\.\/repos\}$/);
    const home = mounts(worker).find((m) => m.target === env(worker).VIGIL_HOME);
    expect(home && isNamedVolume(home.source), 'VIGIL_HOME on a named volume').toBe(true);
  });

  it('registers exactly the search attributes of schemas/search-attributes.ts in the namespace', () => {
    const setup = service('temporal-setup');
    const pairs = (env(setup).VIGIL_SEARCH_ATTRIBUTES ?? '').split(/\s+/).filter(Boolean);
    expect([...pairs].sort()).toEqual([...SEARCH_ATTRIBUTE_FLAGS].sort());
    const entrypoint = asList(setup.entrypoint);
    const script = readFileSync(hostFileOf(setup, entrypoint[entrypoint.length - 1] as string), 'utf8');
    expect(script).toContain('operator namespace create');
    expect(script).toMatch(/operator search-attribute create[^\n]*--name "\$1" --type "\$2"/);
    expect(script).toContain('for pair in $VIGIL_SEARCH_ATTRIBUTES');
    expect(script).toContain('--namespace "$ns"');
    expect(script).toContain('ns=$VIGIL_NAMESPACE');
  });

  it("gives the Temporal server the embedded server's tuned dynamic config (same keys, same values)", () => {
    const temporal = service('temporal');
    const file = hostFileOf(temporal, `/etc/temporal/${env(temporal).DYNAMIC_CONFIG_FILE_PATH}`);
    const config = loadYaml(readFileSync(file, 'utf8')) as Record<string, { value: unknown; constraints?: Record<string, unknown> }[]>;
    expect(Object.keys(DEV_SERVER_DYNAMIC_CONFIG).length).toBeGreaterThanOrEqual(4);
    expect(DEV_SERVER_DYNAMIC_CONFIG['history.transferProcessorMaxPollRPS']).toBeGreaterThan(20);
    for (const [key, value] of Object.entries(DEV_SERVER_DYNAMIC_CONFIG)) {
      expect(config[key], `${key} in ${path.relative(ROOT, file)}`).toEqual([{ value, constraints: {} }]);
    }
  });

  it("sets up Temporal's two databases with temporal-sql-tool before the server starts", () => {
    const job = service('temporal-schema');
    const entrypoint = asList(job.entrypoint);
    const script = readFileSync(hostFileOf(job, entrypoint[entrypoint.length - 1] as string), 'utf8');
    for (const step of ['create', 'setup-schema -v 0.0', 'update-schema -d']) expect(script).toContain(step);
    expect(script).toMatch(/setup temporal temporal\b/);
    expect(script).toMatch(/setup temporal_visibility visibility\b/);
    expect(script).toContain('temporal-sql-tool --plugin postgres12');
    expect(env(service('temporal')).DB).toBe('postgres12');
  });

  it('creates vigil_events, owned by the vigil role, from an init script on the Postgres container', () => {
    const pg = service('postgres');
    const init = mounts(pg).filter((m) => m.target.startsWith('/docker-entrypoint-initdb.d/'));
    expect(init).toHaveLength(1);
    const file = hostFileOf(pg, (init[0] as Mount).target);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain("CREATE DATABASE vigil_events OWNER vigil'");
    expect(text).toContain("format('CREATE ROLE vigil LOGIN PASSWORD %L', :'vigil_password')");
    expect(text).toContain('vigil_password="$VIGIL_DB_PASSWORD"');
    // Executable, so the image runs it rather than sourcing it into its own shell.
    expect(statSync(file).mode & 0o111).not.toBe(0);
    expect((init[0] as Mount).target).toMatch(/\.sh$/);
  });

  it('ships shell scripts that parse', () => {
    const scripts: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.sh')) scripts.push(p);
      }
    };
    walk(path.join(ROOT, 'deploy'));
    expect(scripts.length).toBeGreaterThanOrEqual(3);
    for (const s of scripts) {
      const r = spawnSync('sh', ['-n', s], { encoding: 'utf8' });
      expect(r.status, `${s}: ${r.stderr}`).toBe(0);
    }
  });
});

describe('Dockerfile', () => {
  it('builds in a named build stage and runs from a second stage, both on the Node line of package.json engines', () => {
    expect(stages).toBe(2);
    const froms = dockerfile.filter((i) => i.cmd === 'FROM').map((i) => i.args);
    expect(froms[0]).toMatch(/ AS build$/i);
    const engines = /^>=\s*(\d+\.\d+\.\d+)$/.exec(pkg.engines.node);
    expect(engines, `engines.node ${pkg.engines.node} is not of the form >=X.Y.Z`).not.toBeNull();
    const min = (engines as RegExpExecArray)[1] as string;
    for (const from of froms) {
      const m = /^node:(\d+\.\d+\.\d+)-bookworm-slim(?:\s|$)/.exec(from);
      expect(m, `${from}: node:X.Y.Z-bookworm-slim`).not.toBeNull();
      const v = (m as RegExpExecArray)[1] as string;
      expect(atLeast(v, min), `${v} satisfies ${pkg.engines.node}`).toBe(true);
      expect(version(v)[0]).toBe(version(min)[0]);
    }
  });

  it('installs the locked dependencies, builds with the package script, then drops dev dependencies', () => {
    const steps = buildStage.filter((i) => i.cmd === 'RUN' || i.cmd === 'COPY').map((i) => `${i.cmd} ${i.args}`);
    const at = (re: RegExp): number => steps.findIndex((s) => re.test(s));
    expect(at(/^COPY package\.json package-lock\.json/)).toBeGreaterThanOrEqual(0);
    expect(at(/^COPY package\.json package-lock\.json/)).toBeLessThan(at(/^RUN npm ci\b/));
    expect(at(/^RUN npm ci\b/)).toBeLessThan(at(/^COPY \. \./));
    expect(at(/^COPY \. \./)).toBeLessThan(at(/npm run build\b/));
    expect(at(/npm run build\b/)).toBeLessThanOrEqual(at(/npm prune --omit=dev\b/));
    expect(pkg.scripts.build).toBeDefined();
    expect(existsSync(path.join(ROOT, 'package-lock.json'))).toBe(true);
  });

  it('copies into the runtime stage only what the repository has or the build makes', () => {
    const outDir = tsconfigOptions('tsconfig.build.json').outDir;
    expect(outDir).toBe('dist');
    const fromBuild = runtime.filter((i) => i.cmd === 'COPY' && i.args.startsWith('--from=build'));
    const copied = fromBuild.flatMap((i) => i.args.split(/\s+/).slice(1, -1)).map((src) => path.posix.relative('/app', src));
    expect(copied.sort()).toEqual(['bin', 'dist', 'examples', 'node_modules', 'package-lock.json', 'package.json']);
    for (const src of copied) {
      if (src === outDir || src === 'node_modules') {
        // Made by `npm run build` / `npm ci`, never taken from a working tree.
        expect(ignored(src), `${src} is kept out of the build context`).toBe(true);
      } else {
        expect(existsSync(path.join(ROOT, src)), src).toBe(true);
        expect(ignored(src), `${src} is in the build context`).toBe(false);
      }
    }
    for (const i of runtime.filter((x) => x.cmd === 'COPY' && !x.args.startsWith('--from'))) {
      for (const src of i.args.split(/\s+/).slice(0, -1)) {
        expect(existsSync(path.join(ROOT, src)), src).toBe(true);
        expect(ignored(src), `${src} is in the build context`).toBe(false);
      }
    }
  });

  it('runs bin/vigil.js, which loads the CLI the build compiles into dist/', () => {
    expect(existsSync(path.join(ROOT, 'bin/vigil.js'))).toBe(true);
    expect(read('bin/vigil.js')).toContain("'../dist/cli/main.js'");
    const build = tsconfigOptions('tsconfig.build.json');
    expect(build.rootDir).toBe('.');
    expect(build.include).toContain('cli');
    expect(existsSync(path.join(ROOT, 'cli/main.ts'))).toBe(true);
    const workdir = runtime.filter((i) => i.cmd === 'WORKDIR').map((i) => i.args).pop();
    expect(workdir).toBe('/app');
    expect(runtime.find((i) => i.cmd === 'ENTRYPOINT')?.args).toBe('["node", "bin/vigil.js"]');
    expect(runtime.find((i) => i.cmd === 'CMD')?.args).toBe('["worker"]');
  });

  it('has git, runs as a non-root user, and health-checks with a file it copies', () => {
    expect(runtime.some((i) => i.cmd === 'RUN' && /apt-get install\b[^&]*\sgit(\s|$)/.test(i.args))).toBe(true);
    const user = runtime.filter((i) => i.cmd === 'USER').map((i) => i.args).pop();
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    const health = runtime.find((i) => i.cmd === 'HEALTHCHECK')?.args ?? '';
    const script = /CMD \["node", "([^"]+)"\]/.exec(health)?.[1];
    expect(script, health).toBeDefined();
    expect(runtime.some((i) => i.cmd === 'COPY' && i.args.endsWith(`./${script}`))).toBe(true);
  });

  it('installs agent CLIs only when named by the AGENT_PACKAGES build arg', () => {
    expect(runtime.some((i) => i.cmd === 'ARG' && /^AGENT_PACKAGES(=|$)/.test(i.args))).toBe(true);
    expect(runtime.some((i) => i.cmd === 'RUN' && /if \[ -n "\$AGENT_PACKAGES" \].*npm install -g[^;]*\$AGENT_PACKAGES/.test(i.args))).toBe(true);
  });

  it('.dockerignore keeps dependencies, builds, local tools, recorded histories and git out of the context', () => {
    for (const entry of ['node_modules', 'dist', '.tools', 'tests/replay/histories', '.git']) expect(ignored(entry), entry).toBe(true);
    for (const kept of ['package.json', 'cli', 'tsconfig.build.json', 'tests/unit']) expect(ignored(kept), kept).toBe(false);
  });
});

describe('docs/team-deployment.md', () => {
  it('documents the compose deployment, and the README links to it', () => {
    expect(read('README.md')).toContain('](docs/team-deployment.md)');
    const doc = read('docs/team-deployment.md');
    const at = doc.indexOf('\n## Docker compose\n');
    expect(at).toBeGreaterThan(0);
    const section = doc.slice(at, doc.indexOf('\n## ', at + 1));
    for (const s of ['docker compose up -d --build', '--scale vigil-worker=3', 'http://localhost:8233', 'TEMPORAL_ADDRESS=localhost:7233', 'AGENT_PACKAGES', 'vigil.env', 'vigil_events', '/repos']) {
      expect(section, s).toContain(s);
    }
  });
});
