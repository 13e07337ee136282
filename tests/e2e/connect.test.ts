/**
 * Connecting to a team's Temporal, end to end with real `vigil` processes: a namespace without
 * Vigil's search attributes (`vigil start` needs no admin rights, says once what is missing, the
 * run proceeds; `vigil setup --search-attributes` adds them) or without only the release stamp's
 * (an installation set up before it: the run keeps the others), `--profile` against TEMPORAL_PROFILE,
 * `vigil up --port` that starts its own server rather than join the one at TEMPORAL_ADDRESS, and
 * mutual TLS (server CA, client cert and key, server name) from the environment and from a
 * profile, for the CLI and the worker alike.
 *
 * The dev server has no TLS flags (`temporal server start-dev --help`), so the TLS test puts a
 * TLS-terminating proxy with a self-signed CA (made with openssl) in front of the suite's server.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Client, Connection } from '@temporalio/client';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SEARCH_ATTRIBUTES, SA_RELEASE, SA_STATUS, UPSERTED_SEARCH_ATTRIBUTES } from '../../schemas/search-attributes.js';
import { freePort } from '../../workers/dev-server.js';
import { hasOpenssl, makeCertificates } from '../support/certificates.js';
import {
  assertBuilt,
  CLI,
  makeRepo,
  ROOT,
  SCRIPTED_AGENT,
  temporalAddress,
  uniqueId,
  writePrd,
  writeScenario,
} from '../support/harness.js';
import { cleanEnv, runVigil, show, startWorkerProcess, waitUntil, type WorkerProcess } from './cli-helpers.js';

const FAST = [
  '--set',
  'baseWaitSeconds=1',
  '--set',
  'backoffJitterSeconds=0',
  '--set',
  'heartbeatTimeoutSeconds=5',
  '--set',
  'councilEnabled=false',
  '--set',
  'qualityGates=false',
  '--set',
  'codeReview=false',
  '--set',
  'prdChecklist=false',
];
const HINT = "lacks Vigil's search attributes";
const RELEASE = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** `vigil start ... --wait` of a two-iteration run that completes. */
function startArgs(id: string): string[] {
  const repo = makeRepo();
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [{ writes: { 'a.txt': 'a\n' } }, { writes: { 'b.txt': 'b\n' }, claim: 'promise' }],
  });
  return [
    'start',
    writePrd(),
    '--repo',
    repo,
    '--agent-command',
    `"${SCRIPTED_AGENT}" --scenario "${scenario}"`,
    ...FAST,
    '--id',
    id,
    '--wait',
  ];
}

const count = (text: string, what: string): number => text.split(what).length - 1;

let connection: Connection;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  connection = await Connection.connect({ address: temporalAddress() });
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await connection?.close();
});

describe("a namespace without Vigil's search attributes", () => {
  let namespace: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    namespace = uniqueId('vigil-nosa');
    execFileSync(inject('temporalCli'), ['operator', 'namespace', 'create', '--namespace', namespace, '--address', temporalAddress()], {
      stdio: 'pipe',
    });
    await waitUntil(
      `namespace ${namespace}`,
      () => connection.workflowService.describeNamespace({ namespace }).then(() => true),
      30_000,
      250,
    );
    const sas = await connection.operatorService.listSearchAttributes({ namespace });
    for (const k of SEARCH_ATTRIBUTES) expect(Object.keys(sas.customAttributes ?? {})).not.toContain(k.name);
    env = { TEMPORAL_ADDRESS: temporalAddress(), TEMPORAL_NAMESPACE: namespace, VIGIL_TASK_QUEUE: uniqueId('nosa') };
    workers.push(await startWorkerProcess(env));
  });

  it('vigil start starts the run without them, says once what is missing and how to add it, and the run completes', async () => {
    const id = uniqueId('nosa-run');
    const r = await runVigil(startArgs(id), env, { timeoutMs: 120_000 });
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain(`started run ${id}`);
    expect(r.stdout).toContain('completion_promise_fulfilled');
    expect(count(r.stderr, HINT), show(r)).toBe(1);
    expect(r.stderr).toContain(`namespace "${namespace}" ${HINT} VigilStatus, VigilIteration, VigilRepo, VigilProvider, VigilRelease`);
    expect(r.stderr).toContain('vigil setup --search-attributes');
    expect(r.stderr).toContain(`temporal operator search-attribute create --namespace ${namespace} --name VigilStatus --type Keyword`);
    expect(r.stderr).toContain(`temporal operator search-attribute create --namespace ${namespace} --name VigilIteration --type Int`);
    expect(r.stderr).toContain(`tcld namespace search-attributes add --namespace ${namespace} --search-attribute VigilStatus=Keyword`);
    expect(r.stdout).not.toContain(HINT);

    const st = await runVigil(['status', id, '--json'], env);
    expect(st.code, show(st)).toBe(0);
    expect(JSON.parse(st.stdout)).toMatchObject({
      workflowId: id,
      status: 'finished',
      iteration: 2,
      outcome: { status: 'completion_promise_fulfilled' },
    });
    const ls = await runVigil(['list', '--json'], env);
    expect(ls.code, show(ls)).toBe(0);
    expect(JSON.parse(ls.stdout)).toEqual([expect.objectContaining({ workflowId: id, status: null, temporalStatus: 'COMPLETED' })]);
    expect(ls.stderr).not.toContain(HINT);
  });

  it('vigil setup --search-attributes adds them (once); runs started afterwards carry them', async () => {
    const s = await runVigil(['setup', '--search-attributes'], env);
    expect(s.code, show(s)).toBe(0);
    expect(s.stdout).toContain(
      `registered VigilStatus, VigilIteration, VigilRepo, VigilProvider, VigilRelease in namespace "${namespace}"`,
    );
    const again = await runVigil(['setup', '--search-attributes'], env);
    expect(again.code, show(again)).toBe(0);
    expect(again.stdout).toContain(`namespace "${namespace}" has Vigil's search attributes already`);

    const id = uniqueId('sa-run');
    const r = await runVigil(startArgs(id), env, { timeoutMs: 120_000 });
    expect(r.code, show(r)).toBe(0);
    expect(r.stderr).not.toContain(HINT);
    const desc = await new Client({ connection, namespace }).workflow.getHandle(id).describe();
    expect(desc.typedSearchAttributes.get(SA_STATUS)).toBe('completion_promise_fulfilled');
    expect(desc.typedSearchAttributes.get(SA_RELEASE)).toBe(RELEASE);
  });
});

describe('a namespace with the search attributes of a release before the stamp (no VigilRelease)', () => {
  it('vigil start keeps the others, says once that the release stamp is missing, and the run completes with its status', async () => {
    const namespace = uniqueId('vigil-nostamp');
    execFileSync(inject('temporalCli'), ['operator', 'namespace', 'create', '--namespace', namespace, '--address', temporalAddress()], {
      stdio: 'pipe',
    });
    await waitUntil(
      `namespace ${namespace}`,
      () => connection.workflowService.describeNamespace({ namespace }).then(() => true),
      30_000,
      250,
    );
    // What an installation set up before the stamp has: the four the workflow upserts.
    for (const k of UPSERTED_SEARCH_ATTRIBUTES)
      execFileSync(
        inject('temporalCli'),
        [
          'operator',
          'search-attribute',
          'create',
          '--namespace',
          namespace,
          '--name',
          k.name,
          '--type',
          k.type === 'INT' ? 'Int' : 'Keyword',
          '--address',
          temporalAddress(),
        ],
        { stdio: 'pipe' },
      );
    const env = { TEMPORAL_ADDRESS: temporalAddress(), TEMPORAL_NAMESPACE: namespace, VIGIL_TASK_QUEUE: uniqueId('nostamp') };
    workers.push(await startWorkerProcess(env));
    const id = uniqueId('nostamp-run');
    const r = await runVigil(startArgs(id), env, { timeoutMs: 120_000 });
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain('completion_promise_fulfilled');
    expect(count(r.stderr, "lacks Vigil's search attribute VigilRelease"), show(r)).toBe(1);
    expect(r.stderr).toContain('the run started without its release stamp');
    expect(r.stderr).toContain(`temporal operator search-attribute create --namespace ${namespace} --name VigilRelease --type Keyword`);
    const desc = await new Client({ connection, namespace }).workflow.getHandle(id).describe();
    expect(desc.typedSearchAttributes.get(SA_STATUS)).toBe('completion_promise_fulfilled');
    expect(desc.typedSearchAttributes.get(SA_RELEASE)).toBeUndefined();
  });
});

describe('--profile', () => {
  it('beats TEMPORAL_PROFILE, and an unknown profile is exit 2 naming the config file', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-profile-'));
    const config = path.join(dir, 'temporal.toml');
    writeFileSync(
      config,
      `[profile.suite]\naddress = "${temporalAddress()}"\nnamespace = "default"\n\n[profile.elsewhere]\naddress = "127.0.0.1:1"\n`,
    );
    const env = { TEMPORAL_CONFIG_FILE: config, TEMPORAL_PROFILE: 'elsewhere' };

    const viaEnv = await runVigil(['list', '--limit', '1'], env);
    expect(viaEnv.code, show(viaEnv)).toBe(4);
    expect(viaEnv.stderr).toContain('cannot reach Temporal at 127.0.0.1:1');

    const flagFirst = await runVigil(['--profile', 'suite', 'list', '--limit', '1'], env);
    expect(flagFirst.code, show(flagFirst)).toBe(0);
    const flagAfter = await runVigil(['list', '--limit', '1', '--profile', 'suite'], env);
    expect(flagAfter.code, show(flagAfter)).toBe(0);

    const unknown = await runVigil(['list', '--profile', 'nope'], env);
    expect(unknown.code, show(unknown)).toBe(2);
    expect(unknown.stderr).toContain("Profile 'nope' not found");
    expect(unknown.stderr).toContain(config);
  });
});

describe('vigil up --port', () => {
  it('starts its own dev server on that port instead of joining the server at TEMPORAL_ADDRESS', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-home-'));
    const port = await freePort();
    const up = execa(process.execPath, [CLI, 'up', '--port', String(port), '--headless'], {
      env: cleanEnv({
        VIGIL_HOME: home,
        TEMPORAL_ADDRESS: temporalAddress(),
        TEMPORAL_CLI: inject('temporalCli'),
        VIGIL_TASK_QUEUE: uniqueId('up'),
      }),
      extendEnv: false,
      all: true,
      reject: false,
      buffer: false,
    });
    let out = '';
    up.all?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    try {
      await waitUntil('vigil up to poll', () => out.includes('polling') || up.exitCode !== null, 90_000, 200);
      expect(out).toContain(`gRPC address : 127.0.0.1:${port}`);
      // What another terminal needs, said before anything else.
      expect(out).toContain(`other terminals: export TEMPORAL_ADDRESS=127.0.0.1:${port}`);
      expect(out).toMatch(new RegExp(`polling task queue "up-[^"]+" \\(namespace "default", 127\\.0\\.0\\.1:${port}\\)`));
      expect(out).not.toContain('already answering');
    } finally {
      up.kill('SIGINT');
      await up;
    }
  });
});

describe.skipIf(!hasOpenssl)('mutual TLS', () => {
  let proxy: tls.Server;
  let address: string;
  let certs: ReturnType<typeof makeCertificates>;
  const authorized: string[] = [];
  const sockets = new Set<net.Socket>();
  let tlsWorker: WorkerProcess | undefined;

  beforeAll(async () => {
    certs = makeCertificates();
    const [host, port] = temporalAddress().split(':') as [string, string];
    // Terminates TLS (a client certificate signed by the CA required) and passes the HTTP/2 bytes on.
    proxy = tls.createServer(
      {
        key: readFileSync(certs.serverKey),
        cert: readFileSync(certs.serverCert),
        ca: readFileSync(certs.ca),
        requestCert: true,
        rejectUnauthorized: true,
        ALPNProtocols: ['h2'],
      },
      (socket) => {
        authorized.push(socket.getPeerCertificate().subject?.CN ?? '?');
        const upstream = net.connect({ host, port: Number(port) });
        sockets.add(socket).add(upstream);
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      },
    );
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  });

  afterAll(async () => {
    await tlsWorker?.stop();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  });

  it('TEMPORAL_TLS_* (server CA, client cert and key, server name): the worker and the CLI connect and a run completes', async () => {
    const env = {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.ca,
      TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey,
      TEMPORAL_TLS_SERVER_NAME: 'vigil-test.local',
      VIGIL_TASK_QUEUE: uniqueId('tls'),
    };
    tlsWorker = await startWorkerProcess(env);
    expect(tlsWorker.output()).toContain(`${address} (TLS)`);
    const id = uniqueId('tls-run');
    const r = await runVigil(startArgs(id), env, { timeoutMs: 120_000 });
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain('completion_promise_fulfilled');
    expect(authorized).toContain('vigil-worker');

    // The same settings from a temporal.toml profile.
    const config = path.join(certs.dir, 'temporal.toml');
    writeFileSync(
      config,
      `[profile.tls]\naddress = "${address}"\nnamespace = "default"\n[profile.tls.tls]\nserver_ca_cert_path = "${certs.ca}"\n` +
        `client_cert_path = "${certs.clientCert}"\nclient_key_path = "${certs.clientKey}"\nserver_name = "vigil-test.local"\n`,
    );
    const st = await runVigil(['--profile', 'tls', 'status', id, '--json'], { TEMPORAL_CONFIG_FILE: config });
    expect(st.code, show(st)).toBe(0);
    expect(JSON.parse(st.stdout)).toMatchObject({ workflowId: id, outcome: { status: 'completion_promise_fulfilled' } });
  });

  it('without the client certificate, or without the server name the certificate holds, Vigil does not get in (exit 4)', async () => {
    const base = { TEMPORAL_ADDRESS: address, TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.ca, TEMPORAL_TLS_SERVER_NAME: 'vigil-test.local' };
    const [noCert, noName, plain, statusNoCert, statusPlain] = await Promise.all([
      runVigil(['list', '--limit', '1'], base),
      runVigil(['list', '--limit', '1'], {
        ...base,
        TEMPORAL_TLS_SERVER_NAME: '',
        TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey,
      }),
      runVigil(['list', '--limit', '1'], { TEMPORAL_ADDRESS: address }),
      // status goes through the CLI's light client, not the SDK's: the same refusal, the same message.
      runVigil(['status', 'any-run'], base),
      runVigil(['status', 'any-run'], { TEMPORAL_ADDRESS: address }),
    ]);
    expect(statusNoCert.code, show(statusNoCert)).toBe(4);
    expect(statusNoCert.stderr).toContain(`cannot reach Temporal at ${address} (TLS)`);
    expect(statusPlain.code, show(statusPlain)).toBe(4);
    expect(statusPlain.stderr).toContain(`cannot reach Temporal at ${address} (`);
    expect(noCert.code, show(noCert)).toBe(4);
    expect(noCert.stderr).toContain(`cannot reach Temporal at ${address} (TLS)`);
    expect(noName.code, show(noName)).toBe(4);
    expect(plain.code, show(plain)).toBe(4);
  });
});
