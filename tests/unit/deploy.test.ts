/**
 * Owns the checks of the team deployment: docker-compose.yml and its TLS variant
 * docker-compose.tls.yml, the Dockerfile, .dockerignore, the scripts under deploy/ and
 * scripts/compose-smoke.sh. No Docker engine runs on these machines, so nothing is pulled, built
 * or started: the files are parsed and held against the package they deploy — the services and
 * their wiring, images pinned by digest, required secrets (and the refusal of default passwords,
 * run for real), resource limits, log rotation, a health check per service, the search attributes
 * of schemas/search-attributes.ts, the vigil_events database, the build steps of package.json, the
 * files the image copies, the Node version of `engines`, the agent CLI versions of
 * scripts/real-clis.pins.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
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
  secrets?: (string | { source: string; target?: string })[];
  deploy?: { resources?: { limits?: { cpus?: string | number; memory?: string; pids?: string | number } } };
  logging?: { driver?: string; options?: Record<string, string> };
  volumes?: (string | { type?: string; source?: string; target?: string })[];
  ports?: (string | number)[];
  restart?: string;
  container_name?: string;
  expose?: (string | number)[];
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
  secrets?: Record<string, { file?: string; environment?: string }>;
}

const compose = loadYaml(read('docker-compose.yml')) as Compose;
const services = compose.services;
const tlsCompose = loadYaml(read('docker-compose.tls.yml')) as Compose;

/** The secrets a service is given, by name. */
const secretsOf = (s: Service): string[] => (s.secrets ?? []).map((x) => (typeof x === 'string' ? x : x.source));

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

/** `name:X.Y[.Z][-variant]@sha256:<64 hex>`: a version tag, and the digest that pins its bytes. */
const IMAGE_PINNED = /^[a-z0-9][a-z0-9./_-]*:(\d+\.\d+(?:\.\d+)?)(?:-[a-z0-9.]+)?@sha256:[0-9a-f]{64}$/;

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
    expect(Object.keys(services).sort()).toEqual([
      'postgres',
      'temporal',
      'temporal-schema',
      'temporal-setup',
      'temporal-ui',
      'vigil-worker',
    ]);
  });

  it('pins every image by a version tag and its digest, the same digest wherever a tag appears', () => {
    const digestOf = new Map<string, string>();
    for (const [name, s] of Object.entries(services)) {
      if (s.build !== undefined && s.image === undefined) continue;
      expect(s.image, `${name}: image`).toBeDefined();
      expect(s.image, `${name}: ${s.image} is not pinned as tag@sha256:digest`).toMatch(IMAGE_PINNED);
      expect(s.image).not.toMatch(/latest|\$\{/);
      const [tag, digest] = (s.image as string).split('@') as [string, string];
      expect(digestOf.get(tag) ?? digest, `${tag} pinned to two digests`).toBe(digest);
      digestOf.set(tag, digest);
    }
    expect(
      Object.values(services)
        .filter((s) => s.build !== undefined)
        .map((s) => s.image),
    ).toEqual([undefined]);
    // The documented update path names every pinned tag.
    const doc = read('docs/team-deployment.md');
    for (const [tag, digest] of digestOf) expect(doc, `docs/team-deployment.md lists ${tag}`).toContain(`${tag}@${digest}`);
  });

  it('runs temporalio/server with a temporalio/admin-tools schema job of the same version (auto-setup is deprecated)', () => {
    const tag = (image: string | undefined): string => (image ?? '').split('@')[0]?.split(':')[1] ?? '';
    expect(service('temporal').image).toMatch(/^temporalio\/server:/);
    expect(service('temporal-schema').image).toMatch(/^temporalio\/admin-tools:/);
    expect(service('temporal-setup').image).toMatch(/^temporalio\/admin-tools:/);
    expect(service('temporal-ui').image).toMatch(/^temporalio\/ui:/);
    expect(service('postgres').image).toMatch(/^postgres:/);
    expect(tag(service('temporal-schema').image)).toBe(tag(service('temporal').image));
    expect(tag(service('temporal-setup').image)).toBe(tag(service('temporal').image));
    expect(Object.values(services).map((s) => s.image ?? '')).not.toContainEqual(expect.stringContaining('auto-setup'));
  });

  it("checks the health of every long-running service by what it serves: Postgres, the frontend, the UI, the worker's /readyz", () => {
    for (const [name, s] of Object.entries(services)) {
      if ((s.restart ?? 'no') === 'no') continue; // the one-shot jobs: their exit status is their health
      expect(s.healthcheck?.test, `${name} has no health check`).toBeDefined();
    }
    expect(asList(service('postgres').healthcheck?.test).join(' ')).toContain('pg_isready');
    // A request the frontend answers from the database (its HTTP API), not only an open port.
    expect(asList(service('temporal').healthcheck?.test).join(' ')).toContain('http://127.0.0.1:7243/api/v1/namespaces');
    expect(asList(service('temporal-ui').healthcheck?.test).join(' ')).toContain('http://127.0.0.1:8080/healthz');
    // The worker: ready while it polls (GET /readyz on its metrics endpoint).
    expect(asList(service('vigil-worker').healthcheck?.test)).toEqual(['CMD', 'node', 'deploy/worker-healthcheck.mjs']);
    const probe = read('deploy/worker-healthcheck.mjs');
    expect(probe).toContain('/readyz');
    expect(probe).toContain('VIGIL_METRICS_BIND');
    expect(env(service('vigil-worker')).VIGIL_METRICS_BIND).toMatch(/:9464\}?$/);
  });

  it('gives every password as a compose secret file, never by value or with a default', () => {
    const declared = compose.secrets ?? {};
    expect(Object.keys(declared).sort()).toEqual(['postgres_password', 'vigil_db_password']);
    for (const [name, def] of Object.entries(declared)) expect(def.file, name).toBe(`\${VIGIL_SECRETS_DIR:-./secrets}/${name}`);
    for (const [name, s] of Object.entries(services)) {
      const e = env(s);
      for (const [k, v] of Object.entries(e)) {
        // No password (or key) by value: only *_FILE paths under /run/secrets/, of secrets the service is given.
        if (/PASSWORD|PWD|SECRET|_KEY\b/.test(k)) {
          expect(k, `${name}: ${k} is given by value`).toMatch(/_FILE$/);
          const m = /^\/run\/secrets\/([a-z_]+)$/.exec(v);
          expect(m, `${name}: ${k}=${v}`).not.toBeNull();
          expect(secretsOf(s), `${name} reads ${k} but is not given the secret`).toContain(m?.[1]);
        }
        if (/PASSWORD|PWD|DATABASE_URL/.test(k))
          expect(v, `${name}: ${k} falls back to a default password`).not.toMatch(/:-(temporal|vigil|postgres|password)\}/);
      }
    }
    // The event store's URL carries no password; the worker's entrypoint gives it from the secret.
    const worker = env(service('vigil-worker'));
    expect(worker.DATABASE_URL).toBe('postgres://vigil@postgres:5432/vigil_events');
    expect(worker.VIGIL_DB_PASSWORD_FILE).toBe('/run/secrets/vigil_db_password');
    // Each service that reads a password checks it before anything starts.
    const checks: [string, string][] = [
      ['postgres', 'deploy/postgres/entrypoint.sh'],
      ['temporal', 'deploy/temporal/server-entrypoint.sh'],
      ['temporal-schema', 'deploy/temporal/schema.sh'],
      ['vigil-worker', 'deploy/docker-entrypoint.sh'],
    ];
    for (const [name, script] of checks) {
      expect(read(script), script).toMatch(/require_secret "\$\{?[A-Z_]+_FILE/);
      expect(secretsOf(service(name)).length, name).toBeGreaterThan(0);
    }
    expect(asList(service('postgres').entrypoint).join(' ')).toContain('/vigil-deploy/postgres/entrypoint.sh');
    expect(asList(service('temporal').entrypoint).join(' ')).toContain('/vigil-deploy/temporal/server-entrypoint.sh');
    expect(read('deploy/temporal/server-entrypoint.sh')).toContain('exec /etc/temporal/entrypoint.sh');
    expect(read('deploy/postgres/entrypoint.sh')).toContain('exec docker-entrypoint.sh');
    expect(read('deploy/postgres/init-vigil-events.sh')).toContain('require_secret "$VIGIL_DB_PASSWORD_FILE"');
  });

  it("bounds every service: CPU and memory limits, the worker's processes too, and rotated logs", () => {
    const bytes = (m: string): number => {
      const r = /^(\d+(?:\.\d+)?)([kmg])?$/i.exec(m.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1'));
      if (!r) throw new Error(`unreadable memory ${m}`);
      return Number(r[1]) * { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(r[2] ?? '').toLowerCase() as 'k' | 'm' | 'g'] || Number(r[1]);
    };
    for (const [name, s] of Object.entries(services)) {
      const limits = s.deploy?.resources?.limits;
      expect(limits?.cpus, `${name}: cpus limit`).toBeDefined();
      expect(limits?.memory, `${name}: memory limit`).toBeDefined();
      expect(bytes(String(limits?.memory)), name).toBeGreaterThanOrEqual(128 * 1024 ** 2);
      expect(s.logging?.driver, `${name}: log driver`).toBe('json-file');
      expect(s.logging?.options?.['max-size'], `${name}: log rotation`).toMatch(/^\d+[km]$/);
      expect(Number(s.logging?.options?.['max-file']), name).toBeGreaterThanOrEqual(2);
    }
    expect(String(service('vigil-worker').deploy?.resources?.limits?.pids)).toMatch(/^\$\{VIGIL_WORKER_PIDS:-\d+\}$|^\d+$/);
  });

  it('refuses missing, empty, short and default passwords (deploy/lib/secrets.sh, run here)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-secrets-'));
    const cases: [string, string | null, RegExp | null][] = [
      ['missing', null, /is not readable/],
      ['empty', '', /is empty/],
      ['default', 'temporal\n', /well-known default "temporal"/],
      ['default-upper', 'Vigil', /well-known default "vigil"/],
      ['short', 'x7Kq2', /shorter than 16 characters/],
      ['good', '3f9c0d2b7a1e4f6a8b5c9d0e1f2a3b4c\n', null],
    ];
    for (const [name, content, refused] of cases) {
      const file = path.join(dir, name);
      if (content !== null) writeFileSync(file, content);
      const r = spawnSync(
        'sh',
        [
          '-c',
          `. "$1"; v=$(require_secret "$2" "the test password") || exit 1; printf '%s' "$v"`,
          'sh',
          path.join(ROOT, 'deploy/lib/secrets.sh'),
          file,
        ],
        { encoding: 'utf8' },
      );
      if (refused) {
        expect(r.status, name).toBe(1);
        expect(r.stderr, name).toMatch(/^refusing to start: /);
        expect(r.stderr, name).toMatch(refused);
        expect(r.stdout, name).toBe('');
      } else {
        expect(r.status, `${name}: ${r.stderr}`).toBe(0);
        expect(r.stdout).toBe('3f9c0d2b7a1e4f6a8b5c9d0e1f2a3b4c');
      }
    }
  });

  it('deploy/make-secrets.sh writes passwords the services accept, and keeps what exists', () => {
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-make-secrets-')), 'secrets');
    const first = spawnSync('sh', [path.join(ROOT, 'deploy/make-secrets.sh'), dir], { encoding: 'utf8' });
    expect(first.status, first.stderr).toBe(0);
    const before = readFileSync(path.join(dir, 'postgres_password'), 'utf8');
    for (const name of ['postgres_password', 'vigil_db_password']) {
      const r = spawnSync(
        'sh',
        ['-c', '. "$1"; require_secret "$2" test >/dev/null', 'sh', path.join(ROOT, 'deploy/lib/secrets.sh'), path.join(dir, name)],
        { encoding: 'utf8' },
      );
      expect(r.status, `${name}: ${r.stderr}`).toBe(0);
    }
    expect(statSync(dir).mode & 0o077).toBe(0);
    expect(spawnSync('sh', [path.join(ROOT, 'deploy/make-secrets.sh'), dir], { encoding: 'utf8' }).status).toBe(0);
    expect(readFileSync(path.join(dir, 'postgres_password'), 'utf8')).toBe(before);
    expect(readFileSync(path.join(dir, 'vigil_codec_key'), 'utf8').trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    // Secrets stay out of git and out of the image build.
    expect(read('.gitignore')).toMatch(/^\/secrets\/$/m);
    expect(ignored('secrets')).toBe(true);
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
    const named = Object.values(services).flatMap((s) =>
      mounts(s)
        .map((m) => m.source)
        .filter(isNamedVolume),
    );
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
    expect((service('temporal').ports ?? []).map(String)).toContainEqual(expect.stringMatching(/:\$\{VIGIL_TEMPORAL_PORT:-7233\}:7233$/));
    expect((service('temporal-ui').ports ?? []).map(String)).toContainEqual(expect.stringMatching(/:\$\{VIGIL_UI_PORT:-8233\}:8080$/));
    expect(env(service('temporal-ui')).TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('wires the worker to the temporal service, the namespace the setup creates, and vigil_events on the postgres service', () => {
    const worker = env(service('vigil-worker'));
    expect(worker.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(worker.TEMPORAL_NAMESPACE).toBeTruthy();
    expect(worker.TEMPORAL_NAMESPACE).toBe(env(service('temporal-setup')).VIGIL_NAMESPACE);
    expect(worker.TEMPORAL_NAMESPACE).toBe(env(service('temporal-ui')).TEMPORAL_DEFAULT_NAMESPACE);

    const url = /^postgres(?:ql)?:\/\/([^:@/]+)@([^:/]+):(\d+)\/([^/?]+)$/.exec(worker.DATABASE_URL ?? '');
    expect(url, `DATABASE_URL ${worker.DATABASE_URL}`).not.toBeNull();
    const [, user, host, port, database] = url as RegExpExecArray;
    expect(host).toBe('postgres');
    expect(Object.keys(services)).toContain(host);
    expect(port).toBe('5432');
    expect(database).toBe('vigil_events');
    expect(user).toBe('vigil');
    // The password the init script gives the vigil role: the same secret.
    expect(worker.VIGIL_DB_PASSWORD_FILE).toBe(env(service('postgres')).VIGIL_DB_PASSWORD_FILE);
    expect(secretsOf(service('vigil-worker'))).toContain('vigil_db_password');
    expect(secretsOf(service('postgres'))).toContain('vigil_db_password');
  });

  it("gives the workers' operations settings by environment, with defaults the worker accepts", () => {
    const worker = env(service('vigil-worker'));
    // `${NAME:-default}` as compose resolves it when NAME is unset.
    const defaults = Object.fromEntries(Object.entries(worker).map(([k, v]) => [k, v.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));
    for (const k of [
      'VIGIL_METRICS_BIND',
      'VIGIL_ACTIVITY_SLOTS',
      'VIGIL_WORKFLOW_SLOTS',
      'VIGIL_GIT_NICENESS',
      'VIGIL_LOG_FORMAT',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
    ]) {
      expect(worker[k], k).toMatch(new RegExp(`^\\$\\{${k}:-`));
    }
    const ops = resolveOperations({}, defaults);
    // JSON logs in the deployment: one object per line for the log collector.
    expect(ops).toEqual({
      logFormat: 'json',
      metricsBind: '0.0.0.0:9464',
      otel: null,
      tuning: { activitySlots: 200, workflowSlots: 16, localActivitySlots: 100, maxCachedWorkflows: null, gitNiceness: 10 },
    });
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
    expect(build.args).toHaveProperty('AGENT_CLIS');
    expect(build.args).not.toHaveProperty('AGENT_PACKAGES');
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
      const m = /^node:(\d+\.\d+\.\d+)-bookworm-slim@sha256:[0-9a-f]{64}(?:\s|$)/.exec(from);
      expect(m, `${from}: node:X.Y.Z-bookworm-slim@sha256:<digest>`).not.toBeNull();
      expect(from.split(' ')[0], 'both stages on the same pinned image').toBe(froms[0]?.split(' ')[0]);
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

  it('runs bin/vigil.js through its entrypoint script, which loads the CLI the build compiles into dist/', () => {
    expect(existsSync(path.join(ROOT, 'bin/vigil.js'))).toBe(true);
    const entry = read('deploy/docker-entrypoint.sh');
    expect(entry).toMatch(/\nexec node \/app\/bin\/vigil\.js "\$@"\n/);
    expect(statSync(path.join(ROOT, 'deploy/docker-entrypoint.sh')).mode & 0o111).not.toBe(0);
    expect(runtime.some((i) => i.cmd === 'COPY' && i.args === 'deploy/docker-entrypoint.sh ./deploy/docker-entrypoint.sh')).toBe(true);
    expect(runtime.some((i) => i.cmd === 'COPY' && i.args === 'deploy/lib/secrets.sh ./deploy/lib/secrets.sh')).toBe(true);
    expect(read('bin/vigil.js')).toContain("'../dist/cli/main.js'");
    const build = tsconfigOptions('tsconfig.build.json');
    expect(build.rootDir).toBe('.');
    expect(build.include).toContain('cli');
    expect(existsSync(path.join(ROOT, 'cli/main.ts'))).toBe(true);
    const workdir = runtime
      .filter((i) => i.cmd === 'WORKDIR')
      .map((i) => i.args)
      .pop();
    expect(workdir).toBe('/app');
    expect(runtime.find((i) => i.cmd === 'ENTRYPOINT')?.args).toBe('["/app/deploy/docker-entrypoint.sh"]');
    expect(runtime.find((i) => i.cmd === 'CMD')?.args).toBe('["worker"]');
  });

  it('has git, runs as a non-root user, and health-checks with a file it copies', () => {
    expect(runtime.some((i) => i.cmd === 'RUN' && /apt-get install\b[^&]*\sgit(\s|$)/.test(i.args))).toBe(true);
    const user = runtime
      .filter((i) => i.cmd === 'USER')
      .map((i) => i.args)
      .pop();
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    const health = runtime.find((i) => i.cmd === 'HEALTHCHECK')?.args ?? '';
    const script = /CMD \["node", "([^"]+)"\]/.exec(health)?.[1];
    expect(script, health).toBeDefined();
    expect(runtime.some((i) => i.cmd === 'COPY' && i.args.endsWith(`./${script}`))).toBe(true);
  });

  it('installs only the agent CLIs AGENT_CLIS names, each at the version of scripts/real-clis.pins', () => {
    expect(runtime.some((i) => i.cmd === 'ARG' && i.args === 'AGENT_CLIS=""')).toBe(true);
    const args = Object.fromEntries(runtime.filter((i) => i.cmd === 'ARG').map((i) => i.args.split('=') as [string, string]));
    const installer = read('deploy/install-agent-clis.sh');
    const pins = read('scripts/real-clis.pins')
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith('#'))
      .map((l) => l.trim().split(/\s+/) as [string, string, string, string, string]);
    expect(pins.length).toBe(5);
    for (const [provider, registry, pkgName, pinned] of pins) {
      // The case of the installer for this CLI names its package and the build argument it takes the version from.
      const install =
        registry === 'npm' ? `"${pkgName.replace(/[/.]/g, '\\$&')}@\\$\\{([A-Z_]+):\\?\\}"` : `"${pkgName}==\\$\\{([A-Z_]+):\\?\\}"`;
      const clause = new RegExp(`\\n\\s*${provider}\\)[^;]*${install}`);
      const m = clause.exec(installer);
      expect(m, `deploy/install-agent-clis.sh installs ${pkgName} for ${provider}`).not.toBeNull();
      const arg = (m as RegExpExecArray)[1] as string;
      expect(args[arg], `the Dockerfile's ${arg} is the pinned ${pinned}`).toBe(pinned);
      expect(
        runtime.some((i) => i.cmd === 'RUN' && i.args.includes(`${arg}="$${arg}"`)),
        `${arg} reaches the installer`,
      ).toBe(true);
    }
    expect(installer).not.toMatch(/@latest|npm install -g[^\n]*\$AGENT_CLIS/);
    // Nothing named: nothing installed (the script runs, here, with nothing to do).
    const r = spawnSync('/bin/sh', [path.join(ROOT, 'deploy/install-agent-clis.sh')], { encoding: 'utf8', env: { PATH: '/nonexistent' } });
    expect(r.status, r.stderr).toBe(0);
    const bad = spawnSync('sh', [path.join(ROOT, 'deploy/install-agent-clis.sh')], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', AGENT_CLIS: 'clippy' },
    });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('unknown agent CLI "clippy"');
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
    for (const s of [
      'docker compose up -d --build',
      '--scale vigil-worker=3',
      'http://localhost:8233',
      'TEMPORAL_ADDRESS=localhost:7233',
      'AGENT_CLIS',
      'vigil.env',
      'vigil_events',
      '/repos',
      'deploy/make-secrets.sh',
      'docker-compose.tls.yml',
      'scripts/compose-smoke.sh',
      '/readyz',
    ]) {
      expect(section, s).toContain(s);
    }
  });
});

describe('docker-compose.tls.yml', () => {
  it('overrides only services of docker-compose.yml, and every secret it gives is declared with a file', () => {
    for (const name of Object.keys(tlsCompose.services)) expect(Object.keys(services), name).toContain(name);
    const declared = { ...compose.secrets, ...tlsCompose.secrets };
    for (const [name, s] of Object.entries(tlsCompose.services)) {
      for (const secret of secretsOf(s))
        expect(declared[secret]?.file, `${name}: secret ${secret}`).toMatch(
          /^\$\{VIGIL_(SECRETS|TLS)_DIR:-\.\/secrets(\/tls)?\}\/[a-z_.-]+$/,
        );
      // Compose replaces a service's secrets list: the base's must still be there.
      for (const secret of secretsOf(service(name))) expect(secretsOf(s), `${name} keeps ${secret}`).toContain(secret);
    }
  });

  it('makes the server require client certificates, and every client present one and the codec key', () => {
    const e = (name: string): Record<string, string> => env(tlsCompose.services[name] as Service);
    const server = e('temporal');
    expect(server.TEMPORAL_TLS_REQUIRE_CLIENT_AUTH).toBe('true');
    for (const k of [
      'TEMPORAL_TLS_SERVER_CA_CERT',
      'TEMPORAL_TLS_SERVER_CERT',
      'TEMPORAL_TLS_SERVER_KEY',
      'TEMPORAL_TLS_FRONTEND_CERT',
      'TEMPORAL_TLS_FRONTEND_KEY',
      'TEMPORAL_TLS_CLIENT1_CA_CERT',
    ]) {
      expect(server[k], k).toMatch(/^\/run\/secrets\//);
    }
    const worker = e('vigil-worker');
    expect(worker.TEMPORAL_TLS).toBe('true');
    for (const k of ['TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH'])
      expect(worker[k], k).toMatch(/^\/run\/secrets\/temporal_/);
    expect(worker.TEMPORAL_TLS_SERVER_NAME).toBe('temporal');
    expect(worker.VIGIL_CODEC_KEY_FILE).toBe('/run/secrets/vigil_codec_key');
    expect(e('temporal-setup').TEMPORAL_TLS_CLIENT_CERT_PATH).toBe('/run/secrets/temporal_client_cert');
    expect(e('temporal-ui').TEMPORAL_TLS_CERT).toBe('/run/secrets/temporal_client_cert');
    // Every path given is a secret the service is given.
    for (const [name, s] of Object.entries(tlsCompose.services)) {
      for (const v of Object.values(env(s))) {
        const m = /^\/run\/secrets\/([a-z_]+)$/.exec(v);
        if (m) expect(secretsOf(s), `${name}: ${v}`).toContain(m[1]);
      }
    }
  });

  it('makes dev certificates the server and clients accept (deploy/tls/make-dev-certs.sh, run here)', () => {
    if (spawnSync('openssl', ['version']).status !== 0) throw new Error('openssl is needed for this test');
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-tls-')), 'tls');
    const r = spawnSync('sh', [path.join(ROOT, 'deploy/tls/make-dev-certs.sh'), dir], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const x509 = (file: string): string =>
      spawnSync('openssl', ['x509', '-in', path.join(dir, file), '-noout', '-ext', 'subjectAltName,extendedKeyUsage'], { encoding: 'utf8' })
        .stdout;
    expect(x509('server.pem')).toContain('DNS:temporal');
    expect(x509('server.pem')).toMatch(/TLS Web Server Authentication, TLS Web Client Authentication/);
    expect(x509('client.pem')).toContain('TLS Web Client Authentication');
    const verify = spawnSync(
      'openssl',
      ['verify', '-CAfile', path.join(dir, 'ca.pem'), path.join(dir, 'server.pem'), path.join(dir, 'client.pem')],
      { encoding: 'utf8' },
    );
    expect(verify.status, verify.stderr).toBe(0);
    // The CA's key is not among the files the containers are given.
    expect(existsSync(path.join(dir, 'ca-key.pem'))).toBe(false);
  });
});

describe('scripts/compose-smoke.sh', () => {
  it('parses, tears the stack down whatever happens, and says so and exits 77 where no Docker engine answers', () => {
    const script = path.join(ROOT, 'scripts/compose-smoke.sh');
    expect(spawnSync('bash', ['-n', script]).status).toBe(0);
    const text = read('scripts/compose-smoke.sh');
    expect(text).toContain('trap cleanup EXIT');
    expect(text).toMatch(/down -v --remove-orphans/);
    expect(text).toMatch(/up -d --build --wait/);
    expect(text).toContain('examples/demo/scenario.json');
    // No docker at all (a PATH without it), and a docker whose engine does not answer.
    const bash = spawnSync('sh', ['-c', 'command -v bash'], { encoding: 'utf8' }).stdout.trim();
    const noDocker = spawnSync(bash, [script], { encoding: 'utf8', env: { PATH: '/nonexistent-bin', HOME: os.tmpdir() } });
    expect(noDocker.status, noDocker.stderr).toBe(77);
    expect(noDocker.stderr).toContain('compose-smoke: skipped: no docker command on this machine');
    const docker = spawnSync('sh', ['-c', 'command -v docker'], { encoding: 'utf8' }).stdout.trim();
    if (docker) {
      const noEngine = spawnSync('bash', [script], {
        encoding: 'utf8',
        env: { ...process.env, DOCKER_HOST: 'unix:///nonexistent/docker.sock' },
      });
      expect(noEngine.status, noEngine.stderr).toBe(77);
      expect(noEngine.stderr).toContain('compose-smoke: skipped: no Docker engine answers here');
    }
  });
});
