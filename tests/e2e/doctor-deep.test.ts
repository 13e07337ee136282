/**
 * `vigil doctor --deep` as a user runs it (real `node bin/vigil.js` processes), against the local
 * model server of the real-CLI suite (tests/support/model-server) standing in for the vendors'
 * endpoints: offline it sends nothing and says the endpoint and key were not checked; with --deep
 * one request per provider reaches the server with the user's key — accepted, refused (401),
 * unreachable — and codex's endpoint is read from its config.toml as codex reads it (it ignores
 * OPENAI_BASE_URL). Each report parsed with DoctorJsonSchema.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DoctorJsonSchema, type DoctorCheck } from '../../schemas/cli-output.js';
import { assertBuilt, temporalAddress } from '../support/harness.js';
import { startModelServer, type ModelServer } from '../support/model-server/server.js';
import { runVigil, show } from './cli-helpers.js';

const KEY = 'sk-vigil-doctor-test-key';
let server: ModelServer;
let home: string;

const doctor = async (args: string[], env: Record<string, string>) => {
  const r = await runVigil(
    ['doctor', '--json', ...args],
    { TEMPORAL_ADDRESS: temporalAddress(), HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), ...env },
    { timeoutMs: 120_000 },
  );
  expect([0, 1], show(r)).toContain(r.code);
  const report = DoctorJsonSchema.parse(JSON.parse(r.stdout));
  const check = (name: string): DoctorCheck | undefined => report.checks.find((c) => c.name === name);
  return { report, check, r };
};

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  assertBuilt();
  server = await startModelServer();
  home = mkdtempSync(path.join(os.tmpdir(), 'vigil-doctor-deep-'));
});
afterAll(async () => {
  await server?.close();
});

describe('vigil doctor: the endpoint and the key', () => {
  it('offline by default: no request is sent, and the report says the endpoint and key were not checked', async () => {
    const before = server.requests().length;
    const { report, check } = await doctor(['--provider', 'claude'], { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY });
    expect(server.requests().length).toBe(before);
    expect(report.deep).toBe(false);
    expect(check('claude.endpoint')).toMatchObject({
      ok: true,
      required: false,
      detail: expect.stringMatching(
        new RegExp(`^not checked \\(offline\\): calls go to ${server.url} \\(ANTHROPIC_BASE_URL\\) with ANTHROPIC_API_KEY`),
      ),
    });
    expect(report.notChecked.join('\n')).toMatch(/endpoints and keys: no request was sent/);
  });

  it('--deep: a one-token request reaches the configured endpoint with the key, and the key is accepted', async () => {
    const before = server.requests().length;
    const { report, check } = await doctor(['--provider', 'claude', '--deep'], { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY });
    const sent = server.requests().slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ api: 'anthropic', path: '/v1/messages', status: 200, model: 'claude-haiku-4-5' });
    expect(check('claude.endpoint')).toMatchObject({
      ok: true,
      required: true,
      detail: expect.stringContaining('answered a one-token request (claude-haiku-4-5)'),
    });
    expect(report.deep).toBe(true);
    // What it could not check, said plainly.
    expect(report.notChecked.join('\n')).toMatch(/OAuth logins/);
  });

  it('--deep: a refused key (401) is a required ✗ that says so', async () => {
    server.fail({ kind: 'auth', roles: ['side'], times: 1 });
    try {
      const { report, check, r } = await doctor(['--provider', 'claude', '--deep'], {
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: KEY,
      });
      expect(check('claude.endpoint')).toMatchObject({
        ok: false,
        required: true,
        detail: expect.stringMatching(/key refused \(401: invalid x-api-key\)/),
        fix: expect.stringContaining('ANTHROPIC_API_KEY'),
      });
      expect(report.ok).toBe(false);
      expect(r.code).toBe(1);
    } finally {
      server.clearFaults();
    }
  });

  it('--deep: an unreachable endpoint is a required ✗ naming the connection error', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const { check } = await doctor(['--provider', 'claude', '--deep'], { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: KEY });
    expect(check('claude.endpoint')).toMatchObject({
      ok: false,
      required: true,
      detail: `${url} (ANTHROPIC_BASE_URL) is unreachable (ECONNREFUSED)`,
    });
  });

  it('codex: the endpoint is the provider its config.toml declares; OPENAI_BASE_URL, which codex ignores, is a ✗ when it points elsewhere', async () => {
    const codexHome = path.join(home, 'codex-declared');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      path.join(codexHome, 'config.toml'),
      [
        'model_provider = "local"',
        '',
        '[model_providers.local]',
        'name = "local"',
        `base_url = "${server.url}/v1"`,
        'env_key = "LOCAL_KEY"',
        'wire_api = "responses"',
        'request_max_retries = 1',
        '',
      ].join('\n'),
    );
    const before = server.requests().length;
    const declared = await doctor(['--provider', 'codex', '--deep'], { CODEX_HOME: codexHome, LOCAL_KEY: KEY, OPENAI_API_KEY: KEY });
    expect(server.requests().slice(before)).toMatchObject([{ api: 'responses', path: '/v1/responses', status: 200 }]);
    expect(declared.check('codex.endpoint')).toMatchObject({
      ok: true,
      detail: expect.stringContaining(`${server.url}/v1 (${codexHome}/config.toml [model_providers.local])`),
    });
    expect(declared.check('codex.config')?.detail).toMatch(/request_max_retries 1, stream_max_retries unset/);
    expect(declared.check('codex.base-url')).toBeUndefined();

    // No config: codex goes to its built-in openai provider whatever OPENAI_BASE_URL says.
    const ignored = await doctor(['--provider', 'codex'], {
      CODEX_HOME: path.join(home, 'codex-none'),
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: `${server.url}/v1`,
    });
    expect(ignored.check('codex.base-url')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('codex ignores it and goes to https://api.openai.com/v1'),
    });
    expect(ignored.check('codex.endpoint')?.detail).toMatch(/^not checked \(offline\)/);
  });

  it('gemini --deep: generateContent at GOOGLE_GEMINI_BASE_URL with the key; a refused key (400 API_KEY_INVALID) says so', async () => {
    const env = { GOOGLE_GEMINI_BASE_URL: server.url, GEMINI_API_KEY: KEY };
    expect((await doctor(['--provider', 'gemini', '--deep'], env)).check('gemini.endpoint')).toMatchObject({ ok: true });
    server.fail({ kind: 'auth', roles: ['side'], times: 1 });
    try {
      expect((await doctor(['--provider', 'gemini', '--deep'], env)).check('gemini.endpoint')?.detail).toMatch(
        /key refused \(400: API key not valid/,
      );
    } finally {
      server.clearFaults();
    }
  });
});
