/**
 * Where Vigil connects: the environment and temporal.toml profiles resolved as the `temporal` CLI
 * resolves them (address, namespace, API key, TLS files and data, server name, gRPC headers,
 * profile selection), mapped to the options every client and worker connection takes, and server
 * flags that beat the environment.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CliError,
  connectionOptions,
  endpointFromEnv,
  EXIT,
  localEndpoint,
  searchAttributeCommands,
  searchAttributeHint,
  uiUrlFor,
  type Endpoint,
} from '../../cli/connection.js';
import { devServerTarget } from '../../cli/processes.js';
import { SEARCH_ATTRIBUTE_FLAGS, SEARCH_ATTRIBUTES } from '../../schemas/search-attributes.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-connection-'));
const file = (name: string, content: string): string => {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
};
const CA = file('ca.pem', '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n');
const CERT = file('client.pem', '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n');
const KEY = file('client.key', '-----BEGIN PRIVATE KEY-----\nkey\n-----END PRIVATE KEY-----\n');
const bytes = (s: string | Uint8Array | undefined): string => Buffer.from(s ?? '').toString('utf8');

/** A temporal.toml with two profiles: `default` (plain, local) and `team` (TLS, mTLS files, server name). */
const TOML = file(
  'temporal.toml',
  [
    '[profile.default]',
    'address = "10.1.1.1:7233"',
    'namespace = "from-default-profile"',
    '',
    '[profile.team]',
    'address = "temporal.team.example:7233"',
    'namespace = "team-ns"',
    '',
    '[profile.team.tls]',
    `server_ca_cert_path = "${CA}"`,
    `client_cert_path = "${CERT}"`,
    `client_key_path = "${KEY}"`,
    'server_name = "temporal.internal"',
    '',
    '[profile.cloud]',
    'address = "vigil.a1b2c.tmprl.cloud:7233"',
    'namespace = "vigil.a1b2c"',
    'api_key = "profile-key"',
    '',
    '[profile.cloud.grpc_meta]',
    'x-team = "platform"',
    '',
  ].join('\n'),
);

function settingsError(fn: () => unknown): CliError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(EXIT.usage);
    return err as CliError;
  }
  throw new Error('expected a settings error');
}

describe('endpointFromEnv: environment', () => {
  it('keeps the defaults: 127.0.0.1:7233, namespace default, task queue vigil, no TLS', () => {
    const ep = endpointFromEnv({});
    expect(ep).toEqual({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'vigil', uiUrl: 'http://127.0.0.1:8233' });
    expect(connectionOptions(ep)).toEqual({ address: '127.0.0.1:7233' });
  });

  it('reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and VIGIL_TASK_QUEUE; blank values count as unset', () => {
    const ep = endpointFromEnv({ TEMPORAL_ADDRESS: ' temporal.example:7300 ', TEMPORAL_NAMESPACE: 'team', VIGIL_TASK_QUEUE: 'vigil-team' });
    expect(ep).toMatchObject({
      address: 'temporal.example:7300',
      namespace: 'team',
      taskQueue: 'vigil-team',
      uiUrl: 'http://temporal.example:8300',
    });
    expect(endpointFromEnv({ TEMPORAL_ADDRESS: '  ', TEMPORAL_NAMESPACE: '' })).toMatchObject({
      address: '127.0.0.1:7233',
      namespace: 'default',
    });
  });

  it('TEMPORAL_API_KEY: sent as the API key, with TLS on (system roots) unless TEMPORAL_TLS=false', () => {
    const ep = endpointFromEnv({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'secret-key' });
    expect(connectionOptions(ep)).toEqual({ address: 'ns.acct.tmprl.cloud:7233', apiKey: 'secret-key', tls: true });
    expect(connectionOptions(endpointFromEnv({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }))).toEqual({
      address: '127.0.0.1:7233',
      apiKey: 'k',
      tls: false,
    });
  });

  it('TEMPORAL_TLS=true: TLS with the system roots and nothing else', () => {
    const { tls } = connectionOptions(endpointFromEnv({ TEMPORAL_TLS: 'true' }));
    expect(tls).toBeTruthy();
    expect(tls === true || (tls !== false && tls?.serverRootCACertificate === undefined && tls?.clientCertPair === undefined)).toBe(true);
  });

  it('TEMPORAL_TLS_* paths: server CA, client cert and key, server name (TLS on without TEMPORAL_TLS)', () => {
    const { tls } = connectionOptions(
      endpointFromEnv({
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: CA,
        TEMPORAL_TLS_CLIENT_CERT_PATH: CERT,
        TEMPORAL_TLS_CLIENT_KEY_PATH: KEY,
        TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      }),
    );
    if (typeof tls !== 'object') throw new Error(`expected a TLS config, got ${String(tls)}`);
    expect(bytes(tls.serverRootCACertificate)).toContain('ca');
    expect(bytes(tls.clientCertPair?.crt)).toContain('client');
    expect(bytes(tls.clientCertPair?.key)).toContain('PRIVATE KEY');
    expect(tls.serverNameOverride).toBe('temporal.internal');
  });

  it('TEMPORAL_TLS_*_DATA: inline PEM instead of files', () => {
    const { tls } = connectionOptions(
      endpointFromEnv({
        TEMPORAL_TLS_SERVER_CA_CERT_DATA: 'CA-PEM',
        TEMPORAL_TLS_CLIENT_CERT_DATA: 'CERT-PEM',
        TEMPORAL_TLS_CLIENT_KEY_DATA: 'KEY-PEM',
      }),
    );
    if (typeof tls !== 'object') throw new Error('expected a TLS config');
    expect(bytes(tls.serverRootCACertificate)).toBe('CA-PEM');
    expect(bytes(tls.clientCertPair?.crt)).toBe('CERT-PEM');
    expect(bytes(tls.clientCertPair?.key)).toBe('KEY-PEM');
  });

  it('a TLS file that cannot be read is a settings error (exit 2) naming the file, before anything connects', () => {
    const err = settingsError(() => endpointFromEnv({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'missing-ca.pem') }));
    expect(err.message).toContain('missing-ca.pem');
  });

  it('TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not something the SDK can do: TLS stays on and a warning says so', () => {
    const ep = endpointFromEnv({ TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' });
    expect(ep.tls).toBeTruthy();
    expect(ep.warnings?.[0]).toMatch(/TEMPORAL_TLS_DISABLE_HOST_VERIFICATION .* TEMPORAL_TLS_SERVER_NAME/);
    expect(endpointFromEnv({}).warnings).toBeUndefined();
  });

  it('TEMPORAL_GRPC_META_*: gRPC headers on every call', () => {
    expect(connectionOptions(endpointFromEnv({ TEMPORAL_GRPC_META_X_TEAM: 'platform' })).metadata).toEqual({ 'x-team': 'platform' });
  });
});

describe('endpointFromEnv: temporal.toml profiles', () => {
  it('TEMPORAL_CONFIG_FILE: the `default` profile unless another is named', () => {
    expect(endpointFromEnv({ TEMPORAL_CONFIG_FILE: TOML })).toMatchObject({ address: '10.1.1.1:7233', namespace: 'from-default-profile' });
  });

  it('the default file location ($XDG_CONFIG_HOME or ~/.config, then temporalio/temporal.toml) is read too', () => {
    if (process.platform !== 'linux') return;
    const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-home-'));
    mkdirSync(path.join(home, '.config', 'temporalio'), { recursive: true });
    writeFileSync(path.join(home, '.config', 'temporalio', 'temporal.toml'), '[profile.default]\naddress = "10.2.2.2:7233"\n');
    expect(endpointFromEnv({ HOME: home }).address).toBe('10.2.2.2:7233');
  });

  it('TEMPORAL_PROFILE selects a profile: its address, namespace, TLS files and server name', () => {
    const ep = endpointFromEnv({ TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'team' });
    expect(ep).toMatchObject({ address: 'temporal.team.example:7233', namespace: 'team-ns' });
    const { tls } = connectionOptions(ep);
    if (typeof tls !== 'object') throw new Error('expected a TLS config');
    expect(bytes(tls.serverRootCACertificate)).toContain('ca');
    expect(bytes(tls.clientCertPair?.crt)).toContain('client');
    expect(tls.serverNameOverride).toBe('temporal.internal');
  });

  it('a profile with an API key and gRPC headers: TLS on, key and headers sent, the Cloud UI linked', () => {
    const ep = endpointFromEnv({ TEMPORAL_CONFIG_FILE: TOML }, { profile: 'cloud' });
    expect(connectionOptions(ep)).toEqual({
      address: 'vigil.a1b2c.tmprl.cloud:7233',
      apiKey: 'profile-key',
      tls: true,
      metadata: { 'x-team': 'platform' },
    });
    expect(ep.uiUrl).toBe('https://cloud.temporal.io');
    expect(ep.profile).toBe('cloud');
  });

  it('--profile beats TEMPORAL_PROFILE', () => {
    expect(endpointFromEnv({ TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'team' }, { profile: 'cloud' }).namespace).toBe('vigil.a1b2c');
  });

  it('the environment beats the profile, field by field, as for the temporal CLI', () => {
    const ep = endpointFromEnv(
      { TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_ADDRESS: '127.0.0.1:7999', TEMPORAL_TLS_SERVER_NAME: 'other.internal' },
      { profile: 'team' },
    );
    expect(ep.address).toBe('127.0.0.1:7999');
    expect(ep.namespace).toBe('team-ns');
    const { tls } = connectionOptions(ep);
    if (typeof tls !== 'object') throw new Error('expected a TLS config');
    expect(tls.serverNameOverride).toBe('other.internal');
    expect(bytes(tls.serverRootCACertificate)).toContain('ca');
    expect(connectionOptions(endpointFromEnv({ TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_TLS: 'false' }, { profile: 'team' })).tls).toBe(false);
  });

  it('a profile that does not exist is a settings error naming the file it looked in', () => {
    const err = settingsError(() => endpointFromEnv({ TEMPORAL_CONFIG_FILE: TOML }, { profile: 'nope' }));
    expect(err.message).toContain("Profile 'nope' not found");
    expect(err.message).toContain(TOML);
    expect(settingsError(() => endpointFromEnv({ TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'nope' })).message).toContain("'nope'");
  });

  it('a missing TEMPORAL_CONFIG_FILE is no config (defaults and environment), as for the temporal CLI', () => {
    expect(endpointFromEnv({ TEMPORAL_CONFIG_FILE: path.join(dir, 'none.toml') }).address).toBe('127.0.0.1:7233');
  });
});

describe('flags beat the environment', () => {
  const remote = endpointFromEnv({ TEMPORAL_ADDRESS: 'temporal.team.example:7233', TEMPORAL_API_KEY: 'k' });

  it('--port names a local dev server, not the one TEMPORAL_ADDRESS points at', () => {
    expect(devServerTarget(remote, { port: 7300 })).toEqual({ host: '127.0.0.1', port: 7300, address: '127.0.0.1:7300', explicit: true });
    const local = endpointFromEnv({ TEMPORAL_ADDRESS: 'localhost:7233' });
    expect(devServerTarget(local, { port: 7300 })).toMatchObject({ address: 'localhost:7300', explicit: true });
    expect(devServerTarget(local, { ip: '0.0.0.0' })).toMatchObject({ address: '0.0.0.0:7233', explicit: true });
  });

  it('without server flags the configured address is the target', () => {
    expect(devServerTarget(remote, {})).toEqual({
      host: 'temporal.team.example',
      port: 7233,
      address: 'temporal.team.example:7233',
      explicit: false,
    });
  });

  it("a local dev server's endpoint carries no TLS, API key or headers meant for the configured server", () => {
    const ep = localEndpoint(remote, '127.0.0.1:7300');
    expect(connectionOptions(ep)).toEqual({ address: '127.0.0.1:7300' });
    expect(ep).toMatchObject({ namespace: 'default', taskQueue: 'vigil', uiUrl: 'http://127.0.0.1:8300' });
  });

  it('VIGIL_UI_URL beats the derived Web UI address', () => {
    expect(uiUrlFor('temporal.example:7233', { VIGIL_UI_URL: 'https://temporal-ui.example/' })).toBe('https://temporal-ui.example');
    expect(uiUrlFor('0.0.0.0:7233', {})).toBe('http://localhost:8233');
  });
});

describe('search attribute hint', () => {
  const ep: Endpoint = { address: 'x:7233', namespace: 'team-ns', taskQueue: 'vigil', uiUrl: '' };
  const names = SEARCH_ATTRIBUTES.map((k) => k.name);

  it('names each missing attribute with the temporal CLI command that adds it, and the Temporal Cloud one', () => {
    const cmds = searchAttributeCommands(names, ep);
    expect(cmds.temporal).toEqual([
      'temporal operator search-attribute create --namespace team-ns --name VigilStatus --type Keyword',
      'temporal operator search-attribute create --namespace team-ns --name VigilIteration --type Int',
      'temporal operator search-attribute create --namespace team-ns --name VigilRepo --type Keyword',
      'temporal operator search-attribute create --namespace team-ns --name VigilProvider --type Keyword',
      'temporal operator search-attribute create --namespace team-ns --name VigilRelease --type Keyword',
    ]);
    expect(cmds.cloud).toBe(
      'tcld namespace search-attributes add --namespace team-ns --search-attribute VigilStatus=Keyword --search-attribute ' +
        'VigilIteration=Int --search-attribute VigilRepo=Keyword --search-attribute VigilProvider=Keyword --search-attribute ' +
        'VigilRelease=Keyword',
    );
  });

  it("knows every search attribute's type as the schemas define it (the CLI does not load them to say so)", () => {
    expect(
      searchAttributeCommands(names, ep)
        .temporal.map((c) => c.replace(/^.* --name (\w+) --type (\w+)$/, '$1=$2'))
        .sort(),
    ).toEqual([...SEARCH_ATTRIBUTE_FLAGS].sort());
  });

  it('repeats --profile for the temporal CLI and vigil setup when one was given', () => {
    const hint = searchAttributeHint(['VigilRepo'], { ...ep, profile: 'team' });
    expect(hint).toContain("lacks Vigil's search attributes VigilRepo");
    expect(hint).toContain('vigil setup --search-attributes --profile team');
    expect(hint).toContain('temporal operator search-attribute create --profile team --namespace team-ns --name VigilRepo --type Keyword');
    expect(hint).not.toContain('VigilStatus');
  });
});
