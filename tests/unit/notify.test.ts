/**
 * Tests of activities/notify.ts against real local HTTP receivers (node:http on 127.0.0.1): the
 * webhook, Slack and Discord bodies and headers, retries (5xx, 429 + Retry-After) and no retry on
 * 4xx, a receiver that never answers, redaction of webhook paths, the idempotency ledger, the file
 * and desktop channels, and invalid input.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverNotification, discordPayload, notify, redactUrls, retryAfterMs } from '../../activities/notify.js';
import { NotifyResultSchema, type Notification, type NotifyChannels, type NotifyInput } from '../../schemas/notify.js';

interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  requests: Received[];
}

const servers: http.Server[] = [];
const dirs: string[] = [];
const savedPath = process.env.PATH;

afterEach(async () => {
  process.env.PATH = savedPath;
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A receiver on 127.0.0.1; `reply` answers request n (0-based), or never answers when it returns null. */
async function receiver(
  reply: (n: number, req: Received) => { status: number; body?: string; headers?: Record<string, string> } | null,
): Promise<Receiver> {
  const requests: Received[] = [];
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const r: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(r);
      const answer = reply(requests.length - 1, r);
      if (answer === null) return; // never answers
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests };
}

const ok = (): { status: number; body: string } => ({ status: 200, body: 'ok' });

function tmp(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'vigil-notify-'));
  dirs.push(d);
  return d;
}

const NOTE: Notification = {
  event: 'escalation',
  runId: 'run-42',
  title: 'Vigil needs a person: stuck',
  message: 'No change for 5 iterations.\nHandoff: /tmp/h.md',
  severity: 'critical',
  time: '2026-01-02T03:04:05.000Z',
  details: { iteration: 7, paused: true },
  dedupeKey: 'run-42:escalation:7:uncertainty',
};

const NONE: NotifyChannels = { webhookUrl: '', slackWebhookUrl: '', discordWebhookUrl: '', file: '', desktop: false };

function input(channels: Partial<NotifyChannels>, extra: Partial<NotifyInput> = {}): NotifyInput {
  return { notification: NOTE, channels: { ...NONE, ...channels }, ...extra };
}

/** A sleep that records the requested waits and returns at once. */
function fastSleep(): { sleep: (ms: number) => Promise<void>; waits: number[] } {
  const waits: number[] = [];
  return { waits, sleep: async (ms) => void waits.push(ms) };
}

describe('payloads', () => {
  it('generic webhook receives the exact JSON body and headers', async () => {
    const rx = await receiver(ok);
    const r = await deliverNotification(input({ webhookUrl: `${rx.url}/hooks/generic` }));
    expect(NotifyResultSchema.parse(r)).toEqual({
      dedupeKey: NOTE.dedupeKey,
      results: [{ channel: 'webhook', ok: true, skipped: false, attempts: 1, error: null, status: 200 }],
      delivered: 1,
      failed: 0,
    });
    expect(rx.requests).toHaveLength(1);
    const [req] = rx.requests as [Received];
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hooks/generic');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['idempotency-key']).toBe(NOTE.dedupeKey);
    expect(JSON.parse(req.body)).toEqual({
      event: 'escalation',
      run: 'run-42',
      title: NOTE.title,
      message: NOTE.message,
      severity: 'critical',
      time: NOTE.time,
      details: { iteration: 7, paused: true },
      dedupeKey: NOTE.dedupeKey,
    });
  });

  it("env:NAME channels are resolved from the worker's environment; an unset one is a failed channel that names the variable", async () => {
    const rx = await receiver(ok);
    process.env.VIGIL_TEST_HOOK_URL = `${rx.url}/from-env`;
    try {
      const r = await deliverNotification(input({ webhookUrl: 'env:VIGIL_TEST_HOOK_URL', slackWebhookUrl: 'env:VIGIL_TEST_UNSET_HOOK' }));
      expect(rx.requests.map((q) => q.path)).toEqual(['/from-env']);
      expect(r.results.find((c) => c.channel === 'webhook')).toMatchObject({ ok: true });
      expect(r.results.find((c) => c.channel === 'slack')).toMatchObject({
        ok: false,
        error: "VIGIL_TEST_UNSET_HOOK is not set in the worker's environment (knob value env:VIGIL_TEST_UNSET_HOOK)",
      });
    } finally {
      delete process.env.VIGIL_TEST_HOOK_URL;
    }
  });

  it('Slack gets { text } with the bolded title, the message and the run id; Discord gets { content }', async () => {
    const rx = await receiver(ok);
    const r = await deliverNotification(
      input({ slackWebhookUrl: `${rx.url}/services/T0/B0/secret`, discordWebhookUrl: `${rx.url}/api/webhooks/1/tok` }),
    );
    expect(r.results.map((c) => [c.channel, c.ok])).toEqual([
      ['slack', true],
      ['discord', true],
    ]);
    expect(r.delivered).toBe(2);
    const slack = rx.requests.find((q) => q.path.startsWith('/services/'));
    const discord = rx.requests.find((q) => q.path.startsWith('/api/webhooks/'));
    expect(slack?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(slack?.body ?? '')).toEqual({ text: `:rotating_light: *${NOTE.title}*\n${NOTE.message}\nrun: \`run-42\`` });
    expect(JSON.parse(discord?.body ?? '')).toEqual({
      content: `**${NOTE.title}**\n${NOTE.message}\nrun: run-42`,
      allowed_mentions: { parse: [] },
    });
  });

  it('Slack control characters are escaped; Discord content is cut to 2000 characters, keeping the run line', async () => {
    const rx = await receiver(ok);
    await deliverNotification({
      ...input({ slackWebhookUrl: rx.url }),
      notification: { ...NOTE, message: 'a <!channel> & b', severity: 'info' },
    });
    expect(JSON.parse(rx.requests[0]?.body ?? '')).toEqual({
      text: ':information_source: *Vigil needs a person: stuck*\na &lt;!channel&gt; &amp; b\nrun: `run-42`',
    });

    const long = discordPayload({ ...NOTE, message: 'x'.repeat(4000) });
    expect(long.content).toHaveLength(2000);
    expect(long.content.startsWith(`**${NOTE.title}**\nxxx`)).toBe(true);
    expect(long.content.endsWith('…\nrun: run-42')).toBe(true);
  });
});

describe('HTTP delivery', () => {
  it('500 twice then 200: delivered once after 3 attempts, with backoff and heartbeats between', async () => {
    const rx = await receiver((n) => (n < 2 ? { status: 500, body: 'boom' } : ok()));
    const beats: unknown[] = [];
    const t0 = Date.now();
    const r = await deliverNotification(input({ webhookUrl: rx.url }), { heartbeat: (d) => beats.push(d) });
    const elapsed = Date.now() - t0;
    expect(r.results).toEqual([{ channel: 'webhook', ok: true, skipped: false, attempts: 3, error: null, status: 200 }]);
    expect(r.delivered).toBe(1);
    expect(rx.requests).toHaveLength(3);
    expect(elapsed).toBeGreaterThanOrEqual(1400); // 0.5 s + 1 s of real backoff
    expect(beats).toEqual([
      { channel: 'webhook', attempt: 2 },
      { channel: 'webhook', attempt: 3 },
    ]);
  });

  it('gives up after 4 attempts on 5xx, waiting 0.5 s, 1 s, 2 s', async () => {
    const rx = await receiver(() => ({ status: 503, body: 'down' }));
    const s = fastSleep();
    const r = await deliverNotification(input({ webhookUrl: `${rx.url}/hook/abc123` }), { sleep: s.sleep });
    expect(rx.requests).toHaveLength(4);
    expect(s.waits).toEqual([500, 1000, 2000]);
    expect(r.results[0]).toMatchObject({ ok: false, attempts: 4, status: 503 });
    expect(r.results[0]?.error).toContain('503');
    expect(r.failed).toBe(1);
  });

  it('429 honours a numeric Retry-After, capped at 5 s', async () => {
    const rx = await receiver((n) =>
      n === 0 ? { status: 429, headers: { 'Retry-After': '3' } } : n === 1 ? { status: 429, headers: { 'Retry-After': '120' } } : ok(),
    );
    const s = fastSleep();
    const r = await deliverNotification(input({ webhookUrl: rx.url }), { sleep: s.sleep });
    expect(r.results[0]).toMatchObject({ ok: true, attempts: 3, status: 200 });
    expect(s.waits).toEqual([3000, 5000]);
    expect(retryAfterMs('1.5')).toBe(1500);
    expect(retryAfterMs('Wed, 21 Oct 2026 07:28:00 GMT')).toBeNull();
  });

  it('a 400 is not retried: ok false, the error names 400 but not the URL path', async () => {
    const rx = await receiver(() => ({ status: 400, body: 'invalid_payload' }));
    const secretPath = '/services/T123/B456/xoxSECRETtoken';
    const r = await deliverNotification(input({ slackWebhookUrl: `${rx.url}${secretPath}` }));
    expect(rx.requests).toHaveLength(1);
    const [c] = r.results;
    expect(c).toMatchObject({ channel: 'slack', ok: false, skipped: false, attempts: 1, status: 400 });
    expect(c?.error).toContain('400');
    expect(c?.error).toContain('invalid_payload');
    expect(c?.error).toContain('127.0.0.1');
    expect(c?.error).not.toContain('xoxSECRETtoken');
    expect(c?.error).not.toContain('/services');
    expect(r).toMatchObject({ delivered: 0, failed: 1 });
  });

  it('a receiver that never answers fails within ~2 s (timeoutMs 300, 4 attempts) and does not hang', async () => {
    const rx = await receiver(() => null);
    const s = fastSleep();
    const t0 = Date.now();
    const r = await deliverNotification(input({ webhookUrl: `${rx.url}/hook` }, { timeoutMs: 300 }), { sleep: s.sleep });
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeLessThan(2500);
    expect(rx.requests).toHaveLength(4);
    expect(r.results[0]).toMatchObject({ channel: 'webhook', ok: false, attempts: 4, status: null });
    expect(r.results[0]?.error).toContain('no answer within 300 ms');
    expect(r.results[0]?.error).not.toContain('/hook');
  });

  it('a refused connection is a failed channel, not an exception, and other channels still deliver', async () => {
    const rx = await receiver(ok);
    const dead = await receiver(ok);
    const deadUrl = `${dead.url}/api/webhooks/9/secret-token`;
    await new Promise<void>((resolve) => servers.pop()?.close(() => resolve()));
    const s = fastSleep();
    const r = await deliverNotification(input({ webhookUrl: rx.url, discordWebhookUrl: deadUrl }), { sleep: s.sleep });
    expect(r.results.map((c) => [c.channel, c.ok])).toEqual([
      ['webhook', true],
      ['discord', false],
    ]);
    expect(r.results[1]?.attempts).toBe(4);
    expect(r.results[1]?.error).toMatch(/ECONNREFUSED/);
    expect(r.results[1]?.error).not.toContain('secret-token');
    expect(r).toMatchObject({ delivered: 1, failed: 1 });
  });

  it('heartbeats through the activity context when run as an activity', async () => {
    const rx = await receiver((n) => (n === 0 ? { status: 502, headers: { 'Retry-After': '0' } } : ok()));
    const mock = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
    const beats: unknown[] = [];
    mock.on('heartbeat', (d: unknown) => beats.push(d));
    const r = (await mock.run(notify, input({ webhookUrl: rx.url }))) as Awaited<ReturnType<typeof notify>>;
    expect(r.results[0]).toMatchObject({ ok: true, attempts: 2 });
    expect(beats).toEqual([{ channel: 'webhook', attempt: 2 }]);
  });
});

describe('ledger and local channels', () => {
  it('the same dedupeKey twice with a ledger: the receiver sees one request, the second call is skipped', async () => {
    const rx = await receiver(ok);
    const dir = tmp();
    const ledgerPath = path.join(dir, 'nested', 'notifications.ledger.jsonl');
    const file = path.join(dir, 'out', 'notes.jsonl');
    const req = input({ webhookUrl: rx.url, file }, { ledgerPath });
    const first = await deliverNotification(req);
    const second = await deliverNotification(req);
    expect(rx.requests).toHaveLength(1);
    expect(first).toMatchObject({ delivered: 2, failed: 0 });
    expect(second.results).toEqual([
      { channel: 'webhook', ok: true, skipped: true, attempts: 0, error: null, status: null },
      { channel: 'file', ok: true, skipped: true, attempts: 0, error: null, status: null },
    ]);
    expect(second).toMatchObject({ delivered: 0, failed: 0 });
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(1);
    const ledger = readFileSync(ledgerPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(ledger.map((l) => [l.dedupeKey, l.channel, l.ok]).sort()).toEqual([
      [NOTE.dedupeKey, 'file', true],
      [NOTE.dedupeKey, 'webhook', true],
    ]);

    // Another key is sent; a failed channel is not recorded, so a retry sends it again.
    await deliverNotification({ ...req, notification: { ...NOTE, dedupeKey: 'other' } });
    expect(rx.requests).toHaveLength(2);
  });

  it('a failed delivery is not recorded in the ledger: the next call retries it', async () => {
    const rx = await receiver((n) => (n === 0 ? { status: 404, body: 'no_service' } : ok()));
    const ledgerPath = path.join(tmp(), 'ledger.jsonl');
    const req = input({ webhookUrl: rx.url }, { ledgerPath });
    expect((await deliverNotification(req)).results[0]).toMatchObject({ ok: false, attempts: 1, status: 404 });
    expect((await deliverNotification(req)).results[0]).toMatchObject({ ok: true, skipped: false, attempts: 1 });
    expect((await deliverNotification(req)).results[0]).toMatchObject({ ok: true, skipped: true });
    expect(rx.requests).toHaveLength(2);
  });

  it('the file channel appends JSONL lines (creating the folder)', async () => {
    const file = path.join(tmp(), 'a', 'b', 'notes.jsonl');
    const r1 = await deliverNotification(input({ file }));
    await deliverNotification({ ...input({ file }), notification: { ...NOTE, event: 'paused', severity: 'info', dedupeKey: 'k2' } });
    expect(r1.results).toEqual([{ channel: 'file', ok: true, skipped: false, attempts: 1, error: null, status: null }]);
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    const recs = lines.slice(0, -1).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(recs).toHaveLength(2);
    expect(recs[0]).toEqual({
      event: 'escalation',
      run: 'run-42',
      title: NOTE.title,
      message: NOTE.message,
      severity: 'critical',
      time: NOTE.time,
      details: NOTE.details,
      dedupeKey: NOTE.dedupeKey,
    });
    expect(recs[1]).toMatchObject({ event: 'paused', severity: 'info', dedupeKey: 'k2' });
  });

  it('a file already holding the notification is not written again (a worker killed before the ledger), another one is', async () => {
    const file = path.join(tmp(), 'notes.jsonl');
    // No ledger: the file is its own record of what it got.
    const first = await deliverNotification(input({ file }));
    const again = await deliverNotification(input({ file }));
    expect(first.results[0]).toMatchObject({ channel: 'file', ok: true });
    expect(again.results[0]).toMatchObject({ channel: 'file', ok: true, skipped: true, attempts: 0 });
    await deliverNotification(input({ file }, { notification: { ...NOTE, dedupeKey: `${NOTE.dedupeKey}:other` } }));
    const keys = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { dedupeKey: string }).dedupeKey);
    expect(keys).toEqual([NOTE.dedupeKey, `${NOTE.dedupeKey}:other`]);
  });

  it('an unwritable file is a failed channel, not an exception', async () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'plain'), 'x');
    const r = await deliverNotification(input({ file: path.join(dir, 'plain', 'notes.jsonl') }));
    expect(r.results[0]).toMatchObject({ channel: 'file', ok: false, attempts: 1 });
    expect(r.results[0]?.error).toMatch(/^file: /);
  });

  it('desktop: skipped when notify-send is absent; runs it with the urgency, title and message when present', async () => {
    const empty = tmp();
    process.env.PATH = empty;
    const absent = await deliverNotification(input({ desktop: true }));
    expect(absent.results).toEqual([
      { channel: 'desktop', ok: true, skipped: true, attempts: 0, error: 'notify-send not found', status: null },
    ]);
    expect(absent).toMatchObject({ delivered: 0, failed: 0 });

    const bin = tmp();
    const argsFile = path.join(bin, 'args.txt');
    writeFileSync(path.join(bin, 'notify-send'), `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a" >> '${argsFile}'; done\n`);
    chmodSync(path.join(bin, 'notify-send'), 0o755);
    process.env.PATH = `${empty}${path.delimiter}${bin}`;
    const present = await deliverNotification(input({ desktop: true }));
    expect(present.results).toEqual([{ channel: 'desktop', ok: true, skipped: false, attempts: 1, error: null, status: null }]);
    expect(readFileSync(argsFile, 'utf8')).toBe(`-u\ncritical\n${NOTE.title}\n${NOTE.message}\n`);

    writeFileSync(path.join(bin, 'notify-send'), '#!/bin/sh\necho "cannot connect to the bus" >&2\nexit 1\n');
    const broken = await deliverNotification(input({ desktop: true }));
    expect(broken.results[0]).toMatchObject({ ok: false, error: 'notify-send exited 1: cannot connect to the bus' });
  });
});

describe('input', () => {
  it('no channel configured: no results, nothing thrown', async () => {
    const ledgerPath = path.join(tmp(), 'ledger.jsonl');
    expect(await deliverNotification(input({}, { ledgerPath }))).toEqual({
      dedupeKey: NOTE.dedupeKey,
      results: [],
      delivered: 0,
      failed: 0,
    });
    expect(existsSync(ledgerPath)).toBe(false);
  });

  it('invalid input is a non-retryable ApplicationFailure of type InvalidNotification', async () => {
    const bad: unknown[] = [
      { ...input({}), notification: { ...NOTE, event: 'nope' } },
      { ...input({}), notification: { ...NOTE, title: 't'.repeat(201) } },
      { ...input({}), notification: { ...NOTE, time: 'yesterday' } },
      { ...input({}), notification: { ...NOTE, details: { big: 'x'.repeat(9000) } } },
      input({ webhookUrl: 'ftp://example.com/x' }),
      input({}, { timeoutMs: 0 }),
      { channels: NONE },
    ];
    for (const b of bad) {
      const err = await notify(b as NotifyInput).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect((err as ApplicationFailure).type).toBe('InvalidNotification');
      expect((err as ApplicationFailure).nonRetryable).toBe(true);
    }
  });

  it('an invalid webhook URL does not leak into the failure message', async () => {
    const err = (await notify(input({ slackWebhookUrl: 'notaurl/xoxSECRET' })).catch((e: unknown) => e)) as ApplicationFailure;
    expect(err.type).toBe('InvalidNotification');
    expect(err.message).not.toContain('xoxSECRET');
  });

  it('redactUrls keeps only scheme and host', () => {
    const url = 'https://hooks.slack.com/services/T1/B2/abcdSECRET';
    expect(redactUrls(`request to ${url} failed`, [url])).toBe('request to https://hooks.slack.com/… failed');
    expect(redactUrls('see https://user:pw@discord.com/api/webhooks/1/tok?x=1 now')).toBe('see https://discord.com/… now');
  });
});
