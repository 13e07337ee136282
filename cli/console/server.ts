/**
 * The operator console (`vigil console`, also started by `vigil up` and `vigil demo --keep-server`):
 * one web page for every run that waits for a person, every run, and the reports, fed by Temporal
 * (visibility, the `status` query, updates) and the event store, usable without the Temporal UI.
 *
 * Libraries, each well kept and small, none of their protocol or drawing code written here:
 * - Hono (`hono`, with `@hono/node-server` to run it on Node's http server): routing, the
 *   `html` template that escapes every value, cookies, its `csrf()` middleware and `streamSSE`
 *   (server-sent events for the live agent log). Chosen over Fastify for its size (no dependencies)
 *   and because the middleware the console needs (CSRF, cookies, SSE) ships with it.
 * - htmx (`htmx.org`, with `htmx-ext-sse`): the page is server-rendered HTML; htmx polls the parts
 *   that change, posts the action forms and appends the log as it streams, so the console needs no
 *   front-end build and no client-side framework.
 * - uPlot (`uplot`): the charts, drawn on a canvas from the numbers the server renders into the page.
 * All three front-end files are served from node_modules by the console itself (no CDN: a console
 * on a machine without internet works the same), under a Content-Security-Policy that allows
 * scripts from the console only.
 *
 * Access: cli/console/access.ts. Actions: cli/console/actions.ts (the CLI's messages). The live
 * log: cli/console/log-stream.ts.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import { ActorSchema } from '../../schemas/run.js';
import type { Endpoint } from '../endpoint.js';
import { listen } from '../http-listen.js';
import type { RunView } from '../steer.js';
import { accessGuard, consoleToken, isLoopback, localPath } from './access.js';
import { ActionFormSchema, ActionSchema, perform } from './actions.js';
import { CONSOLE_CSS, CONSOLE_JS } from './client-script.js';
import { logStream } from './log-stream.js';
import { chartsFromSnapshot, waitingFor } from './model.js';
import {
  ackHtml,
  actionsPanel,
  chartsSection,
  checkpointsSection,
  handoffSection,
  inboxCards,
  inboxPage,
  layout,
  messagesSection,
  runPage,
  runSummary,
  timelineSection,
} from './pages.js';
import { costText, runsPage, runsTable, statusMatches, type RunsFilter } from './runs-list.js';
import { attemptsRowStatus, attemptsStatus, pickCards, registerAttempts, runningAttempts } from './attempts-section.js';
import { inbox, listRuns, messagesFromHistory, readHandoff, runView, storedReport, storedRun, withStore, type RunRow } from './sources.js';
import { acknowledgeNotifications, listNotifications } from '../notifications.js';
import { INBOX_NOTIFICATIONS, notificationsSection, RUN_NOTIFICATIONS, runNotificationsSection } from './notifications-section.js';
import { packagesSection } from './packages-section.js';
import { memoryPage, reportsPage } from './reports-pages.js';
import { prSection } from './pr-section.js';
import { temporalHooksApp } from '../hooks-command.js';

export interface ConsoleOptions {
  client: Client;
  connection: Connection;
  ep: Endpoint;
  host: string;
  /** 0: any free port. */
  port: number;
  /** VIGIL_HOME: where the token is kept. */
  home: string;
  /** Who the actions are sent by, unless the person sets another name in the page. */
  operator: string;
  env?: NodeJS.ProcessEnv;
  /** The webhook secret (VIGIL_HOOKS_SECRET): set, the console also receives GitHub's webhooks at /hooks. */
  hooksSecret?: string;
}

export interface RunningConsole {
  url: string;
  host: string;
  port: number;
  /** Required (not loopback): the token, and whether it was made now (then it is printed, once). */
  token: { value: string; file: string; created: boolean } | null;
  /** Where it receives GitHub's webhooks (a webhook secret is set), else null. */
  hooksUrl: string | null;
  close(): Promise<void>;
}

const OPERATOR_COOKIE = 'vigil_operator';

/** The front-end files, from node_modules. */
function assets(): Map<string, { body: string; type: string }> {
  const require = createRequire(import.meta.url);
  const dir = (pkg: string): string => path.dirname(require.resolve(`${pkg}/package.json`));
  const js = 'text/javascript; charset=utf-8';
  const css = 'text/css; charset=utf-8';
  return new Map([
    ['htmx.min.js', { body: readFileSync(path.join(dir('htmx.org'), 'dist/htmx.min.js'), 'utf8'), type: js }],
    ['sse.js', { body: readFileSync(path.join(dir('htmx-ext-sse'), 'dist/sse.min.js'), 'utf8'), type: js }],
    ['uPlot.iife.min.js', { body: readFileSync(path.join(dir('uplot'), 'dist/uPlot.iife.min.js'), 'utf8'), type: js }],
    ['uPlot.min.css', { body: readFileSync(path.join(dir('uplot'), 'dist/uPlot.min.css'), 'utf8'), type: css }],
    ['console.js', { body: CONSOLE_JS, type: js }],
    ['console.css', { body: CONSOLE_CSS, type: css }],
  ]);
}

/**
 * The largest request body the console reads: an action's form (a directive is at most 1 MiB,
 * which urlencoding can triple). A larger one is refused (413) before it is read whole.
 */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

export function consoleApp(opts: ConsoleOptions, port: () => number, token: string | null, tokenFile: string): Hono {
  const { client, ep } = opts;
  const env = opts.env ?? process.env;
  const files = assets();
  const app = new Hono();
  app.use('*', async (c, next) => {
    await next();
    c.header('Content-Security-Policy', CSP);
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('Cache-Control', 'no-store');
  });
  // GitHub's webhooks (`vigil hooks`, cli/hooks.ts), when a webhook secret is set: mounted before the access guard, for GitHub
  // sends neither the console's token nor its Origin. The signature is their check: a wrong one is 401 and nothing is signalled.
  if (opts.hooksSecret) app.route('/hooks', temporalHooksApp(client, opts.hooksSecret));
  app.use('*', ...accessGuard({ host: opts.host, port, token, tokenFile }));
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => {
        // The rest of the body is not read: the connection ends with the answer.
        c.header('Connection', 'close');
        return c.text(
          `refused: a request body here is at most ${MAX_BODY_BYTES / 1024 / 1024} MiB (an action's form; a directive is at most 1 MiB)`,
          413,
        );
      },
    }),
  );
  app.onError((err, c) => {
    if ('getResponse' in err && typeof err.getResponse === 'function') return err.getResponse() as Response;
    return c.text(`the console could not answer: ${(err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''}`, 502);
  });

  const operator = (c: Context): string => {
    const named = ActorSchema.safeParse(getCookie(c, OPERATOR_COOKIE) ?? '');
    return named.success ? named.data : opts.operator;
  };
  const page = (c: Context, title: string, body: ReturnType<typeof html>): Response | Promise<Response> =>
    c.html(layout(title, operator(c), body));

  app.get('/assets/:name', (c) => {
    const f = files.get(c.req.param('name'));
    if (!f) return c.text('no such asset', 404);
    return c.body(f.body, 200, { 'Content-Type': f.type });
  });

  app.post('/operator', async (c) => {
    const body = await c.req.parseBody();
    const named = ActorSchema.safeParse(typeof body.operator === 'string' ? body.operator : '');
    if (named.success) setCookie(c, OPERATOR_COOKIE, named.data, { httpOnly: true, sameSite: 'Strict', path: '/' });
    // Back to the page it was set on: a path of this console only.
    let back = '/';
    try {
      const referer = new URL(c.req.header('referer') ?? '');
      if (referer.host === new URL(c.req.url).host) back = localPath(referer.pathname);
    } catch {
      /* no referer, or not a URL */
    }
    return c.redirect(back, 303);
  });

  // ------------------------------------------------------------------------------ inbox
  let attemptsProblem: string | null = null;
  const inboxFragment = async (): Promise<ReturnType<typeof html>> => {
    const now = new Date();
    const [entries, picking] = await Promise.all([
      inbox(client, now),
      runningAttempts(client).catch((err: unknown) => ({ statuses: [], problem: err instanceof Error ? err.message : String(err) })),
    ]);
    const withHandoffs = await Promise.all(
      entries.map(async (entry) => ({ entry, handoff: await readHandoff(client, ep.taskQueue, entry.snapshot).catch(() => null) })),
    );
    // Runs with attempts waiting for a person's pick: their cards (cli/console/attempts-section.ts) join the inbox; what
    // could not be listed is said there and logged (once per change), never left out silently.
    const waiting = picking.statuses.filter((s) => s.phase === 'waiting_for_pick');
    if (picking.problem !== attemptsProblem && picking.problem)
      process.stderr.write(`vigil console: attempts could not be listed: ${picking.problem}\n`);
    attemptsProblem = picking.problem;
    return inboxCards(withHandoffs, now, waiting.length || picking.problem ? pickCards(waiting, picking.problem) : undefined);
  };
  // What runs told people that nobody acknowledged (cli/console/notifications-section.ts).
  const notificationsFragment = async (): Promise<ReturnType<typeof html>> =>
    notificationsSection(await withStore(env, (db) => listNotifications(db, { onlyNew: true, limit: INBOX_NOTIFICATIONS })));
  app.get('/', async (c) => page(c, 'Inbox', inboxPage(html`${await inboxFragment()}${await notificationsFragment()}`)));
  app.get('/fragments/inbox', async (c) => c.html(await inboxFragment()));
  app.get('/fragments/notifications', async (c) => c.html(await notificationsFragment()));
  app.post('/notifications/ack', async (c) => {
    const body = await c.req.parseBody();
    const run = typeof body.run === 'string' ? body.run.trim() : '';
    if (body.all !== '1' && !run) return c.text('say which run (run=…) or all=1', 400);
    const done = await withStore(env, (db) => acknowledgeNotifications(db, body.all === '1' ? null : [run], operator(c)));
    if (!done.ok) return c.text(`not acknowledged: ${done.why}`, 502);
    // htmx swaps the section in place; a plain form goes back to the inbox.
    return c.req.header('hx-request') ? c.html(await notificationsFragment()) : c.redirect('/', 303);
  });

  // ------------------------------------------------------------------------------ runs
  const filtered = async (f: RunsFilter): Promise<{ rows: RunRow[]; cost: Map<string, string> }> => {
    const all = await listRuns(client, { limit: 200, withAttempts: true });
    // Filtered on the search attributes (a run with attempts carries them too, from its start), then shown.
    const rows = all.filter(
      (r) =>
        statusMatches(f.status, r) && (!f.repo || (r.repo ?? '').includes(f.repo)) && (!f.provider || (r.provider ?? '') === f.provider),
    );
    // A run with attempts says its phase, its winner, or that it waits for a pick.
    await Promise.all(
      rows.filter((r) => r.attempts).map(async (r) => (r.status = attemptsRowStatus(await attemptsStatus(client, r.workflowId)))),
    );
    const cost = new Map<string, string>();
    const stored = await storedReport(env, new Date());
    if (stored.ok) for (const p of stored.value.perRun) cost.set(p.workflowId, costText(p.spendUsd, p.unpricedCalls, null));
    // Running runs answer their status at once: their cost so far, where the store has none.
    await Promise.all(
      rows
        .filter((r) => r.temporalStatus === 'RUNNING' && !cost.has(r.workflowId))
        .slice(0, 50)
        .map(async (r) => {
          const v = await runView(client, r.workflowId).catch(() => null);
          if (v?.snapshot)
            cost.set(r.workflowId, costText(v.snapshot.spend.usd, v.snapshot.spend.unpricedCalls ?? 0, v.snapshot.spend.calls));
        }),
    );
    return { rows, cost };
  };
  const filterOf = (c: Context): RunsFilter => {
    const q = (k: string): string | undefined => c.req.query(k)?.trim() || undefined;
    return {
      ...(q('status') ? { status: q('status') } : {}),
      ...(q('repo') ? { repo: q('repo') } : {}),
      ...(q('provider') ? { provider: q('provider') } : {}),
    };
  };
  app.get('/runs', async (c) => {
    const f = filterOf(c);
    const { rows, cost } = await filtered(f);
    return page(c, 'Runs', runsPage(f, runsTable(rows, cost, new Date())));
  });
  app.get('/fragments/runs', async (c) => {
    const { rows, cost } = await filtered(filterOf(c));
    return c.html(runsTable(rows, cost, new Date()));
  });

  // ------------------------------------------------------------------------------ one run
  registerAttempts(app, client, { page, operator });
  const viewOf = async (c: Context): Promise<RunView | Response> => {
    try {
      return await runView(client, c.req.param('id') as string);
    } catch (err) {
      return c.html(html`<p class="muted">${err instanceof Error ? err.message : String(err)}</p>`, 404);
    }
  };
  const rowOf = async (id: string): Promise<RunRow | null> => (await listRuns(client, { limit: 1, workflowId: id }))[0] ?? null;
  const charts = async (view: RunView): Promise<ReturnType<typeof html>> => {
    const s = view.snapshot;
    const stored = await storedRun(env, view.workflowId, new Date(), s ? s.budgetUsd : null);
    if (stored.ok && stored.value) return chartsSection(view.workflowId, stored.value.charts, '');
    if (!s)
      return chartsSection(view.workflowId, null, 'no worker answered the status query, and the event store has no events of this run');
    return chartsSection(
      view.workflowId,
      chartsFromSnapshot(s, new Date()),
      stored.ok ? 'The event store has no events of this run.' : `${stored.why}.`,
    );
  };
  const timeline = async (view: RunView): Promise<ReturnType<typeof html>> => {
    const stored = await storedRun(env, view.workflowId, new Date(), null);
    return timelineSection(view.workflowId, view.snapshot, stored.ok && stored.value ? stored.value.report : null);
  };
  const messages = async (id: string): Promise<ReturnType<typeof html>> => {
    const msgs = await messagesFromHistory(client, id).catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
    return typeof msgs === 'string'
      ? messagesSection(id, null, `the run's history could not be read: ${msgs}`)
      : messagesSection(id, msgs, '');
  };
  // What the run told people, and the button that acknowledges them (cli/console/notifications-section.ts).
  const runNotifications = async (id: string): Promise<ReturnType<typeof html>> =>
    runNotificationsSection(id, await withStore(env, (db) => listNotifications(db, { run: id, limit: RUN_NOTIFICATIONS })));
  app.post('/runs/:id/notifications/ack', async (c) => {
    const id = c.req.param('id');
    const done = await withStore(env, (db) => acknowledgeNotifications(db, [id], operator(c)));
    if (!done.ok) return c.text(`not acknowledged: ${done.why}`, 502);
    return c.req.header('hx-request') ? c.html(await runNotifications(id)) : c.redirect(`/runs/${encodeURIComponent(id)}`, 303);
  });
  app.get('/runs/:id', async (c) => {
    const view = await viewOf(c);
    if (view instanceof Response) return view;
    const s = view.snapshot;
    const now = new Date();
    const waiting = s && view.kind === 'running' ? waitingFor(s, now) : null;
    const running = view.kind === 'running';
    const doc = s ? await readHandoff(client, ep.taskQueue, s).catch(() => null) : null;
    return page(
      c,
      view.workflowId,
      runPage(
        view.workflowId,
        runSummary(view, (await rowOf(view.workflowId).catch(() => null)) ?? null, waiting, now),
        s && running ? actionsPanel(s, 'run') : null,
        html`${handoffSection(s, doc, !running)}${await runNotifications(view.workflowId)}`,
        await charts(view),
        checkpointsSection(s, running),
        await timeline(view),
        await messages(view.workflowId),
        running,
        packagesSection(s, running),
        prSection(s, running),
      ),
    );
  });
  app.get('/runs/:id/fragments/:part', async (c) => {
    const view = await viewOf(c);
    if (view instanceof Response) return view;
    const s = view.snapshot;
    switch (c.req.param('part')) {
      case 'summary':
        return c.html(
          runSummary(
            view,
            (await rowOf(view.workflowId).catch(() => null)) ?? null,
            s && view.kind === 'running' ? waitingFor(s, new Date()) : null,
            new Date(),
          ),
        );
      case 'charts':
        return c.html(await charts(view));
      case 'checkpoints':
        return c.html(checkpointsSection(s, view.kind === 'running'));
      case 'timeline':
        return c.html(await timeline(view));
      case 'messages':
        return c.html(await messages(view.workflowId));
      case 'packages':
        return c.html(packagesSection(s, view.kind === 'running'));
      case 'pr':
        return c.html(prSection(s, view.kind === 'running'));
      case 'notifications':
        return c.html(await runNotifications(view.workflowId));
      default:
        return c.text('no such part', 404);
    }
  });

  app.post('/runs/:id/actions', async (c) => {
    const id = c.req.param('id');
    const body = await c.req.parseBody();
    const action = ActionSchema.safeParse(body.action);
    if (!action.success) return c.html(ackHtml(id, { ok: false, lines: [`unknown action "${String(body.action)}"`] }), 400);
    const form = ActionFormSchema.parse(Object.fromEntries(Object.entries(body).filter(([, v]) => typeof v === 'string')));
    const result = await perform({ client, connection: opts.connection, ep, by: operator(c) }, id, action.data, form);
    return c.html(ackHtml(id, result), result.ok ? 200 : 422);
  });

  // The live agent log, as server-sent events (cli/console/log-stream.ts).
  app.get('/runs/:id/log/stream', logStream(client, ep));

  app.get('/reports', async (c) => {
    const r = await storedReport(env, new Date());
    return page(
      c,
      'Reports',
      reportsPage(
        r.ok ? r.value : null,
        r.ok ? '' : `${r.why}. Reports read the event store: set DATABASE_URL, or run \`vigil up\`, which starts the local one.`,
      ),
    );
  });

  app.get('/memory', async (c) => {
    const q = (c.req.query('q') ?? '').slice(0, 500).trim();
    const { listMemory, searchMemory } = await import('../../lib/memory-reads.js');
    const r = await withStore(env, async (db) => ({
      items: await listMemory(db, { limit: 500 }),
      hits: q ? await searchMemory(db, q, { limit: 50 }) : null,
    }));
    return page(
      c,
      'Memory',
      memoryPage(
        r.ok ? r.value.items : null,
        q,
        r.ok ? r.value.hits : null,
        r.ok ? '' : `${r.why}. The memory is in the event store: set DATABASE_URL, or run \`vigil up\`, which starts the local one.`,
      ),
    );
  });

  app.get('/healthz', async (c) => c.json({ ok: true, store: (await withStore(env, async () => true)).ok }));
  return app;
}

/** Starts the console; resolves once it listens. */
export async function startConsole(opts: ConsoleOptions): Promise<RunningConsole> {
  const loopback = isLoopback(opts.host);
  const t = loopback ? null : consoleToken(opts.home);
  let bound = opts.port;
  const app = consoleApp(opts, () => bound, t ? t.token : null, t ? t.file : '');
  const l = await listen(app.fetch, opts.host, opts.port);
  bound = l.port;
  return {
    url: l.url,
    host: opts.host,
    port: bound,
    token: t ? { value: t.token, file: t.file, created: t.created } : null,
    hooksUrl: opts.hooksSecret ? new URL('hooks', l.url).toString() : null,
    close: l.close,
  };
}
