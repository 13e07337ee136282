/**
 * The console's live agent log (`GET /runs/:id/log/stream`, cli/console/server.ts), as
 * server-sent events: the current iteration from its start, then each next one as it begins, until
 * the run finishes (event `end`). An event's id is `<iteration>:<offset>`: a reconnecting browser
 * goes on where it was. A run that does not exist gets 404 (an EventSource stops on it), never a
 * stream that waits for it; one deleted while streamed ends with why. Each read of the log is one
 * read on the run's host (cli/console/sources.ts readLogChunk).
 */
import type { Client } from '@temporalio/client';
import type { Context } from 'hono';
import { html } from 'hono/html';
import { streamSSE } from 'hono/streaming';
import type { Endpoint } from '../endpoint.js';
import { CliError, EXIT } from '../errors.js';
import { nextIteration } from '../logs.js';
import type { RunView } from '../steer.js';
import { shown } from './pages.js';
import { readLogChunk, runView } from './sources.js';

const noSuch = (err: unknown): err is CliError => err instanceof CliError && err.exitCode === EXIT.noSuchRun;

/** The handler of `GET /runs/:id/log/stream`. */
export function logStream(client: Client, ep: Endpoint): (c: Context) => Promise<Response> {
  return async (c) => {
    const id = c.req.param('id') as string;
    const first = await runView(client, id).catch((err: unknown) => err);
    if (noSuch(first)) return c.text(first.message, 404);
    return streamSSE(c, async (stream) => {
      let aborted = false;
      stream.onAbort(() => {
        aborted = true;
      });
      const send = async (event: 'log' | 'end', text: string, eventId?: string): Promise<void> => {
        const data = String(await html`${text}`);
        await stream.writeSSE({ event, data, ...(eventId ? { id: eventId } : {}) });
      };
      let view: RunView | null = first instanceof Error ? null : (first as RunView);
      let snap = view?.snapshot ?? null;
      while (!aborted && (!view || !snap || snap.iteration < 1)) {
        if (view?.kind === 'finished') break;
        await stream.sleep(2000);
        const again = await runView(client, id).catch((err: unknown) => err);
        if (noSuch(again)) {
          // Gone meanwhile (deleted from Temporal): the stream ends, with why.
          await send('end', `==> ${again.message}\n`);
          return;
        }
        if (!(again instanceof Error)) view = again as RunView;
        snap = view?.snapshot ?? snap;
      }
      if (!view || !snap) {
        await send('end', '==> no worker answered for this run; its log cannot be read now\n');
        return;
      }
      const resume = /^(\d+):(\d+)$/.exec(c.req.header('last-event-id') ?? '');
      let iteration = resume ? Number(resume[1]) : Math.max(1, snap.iteration);
      let offset = resume ? Number(resume[2]) : 0;
      if (!resume) await send('log', `==> iteration ${iteration}\n`);
      while (!aborted) {
        const live = view.kind === 'running' && snap.iteration === iteration && snap.agentRunning;
        const chunk = await readLogChunk(client, ep.taskQueue, snap, iteration, offset, live ? 10_000 : 0, !live).catch((err: unknown) => ({
          problem: err instanceof Error ? err.message : String(err),
        }));
        if (!('found' in chunk) || chunk.problem) {
          await send('log', `==> ${chunk.problem ?? 'the log could not be read'}\n`);
          await stream.sleep(5000);
        } else if (chunk.found && chunk.text !== '') {
          offset = chunk.nextOffset;
          await send('log', shown(chunk.text), `${iteration}:${offset}`);
          if (!live && offset < chunk.size) continue;
        }
        if (live && 'found' in chunk && chunk.found && chunk.text !== '') continue;
        const fresh = await runView(client, id).catch(() => null);
        if (fresh) {
          view = fresh;
          snap = fresh.snapshot ?? snap;
        }
        const next = nextIteration(view, iteration);
        if (next === 'finished') {
          await send('end', '');
          await send('log', `==> the run has finished\n`);
          return;
        }
        if (typeof next === 'number') {
          iteration = next;
          offset = 0;
          await send('log', `==> iteration ${iteration}\n`, `${iteration}:0`);
        } else if (!live) {
          // Paused or between calls: look again in a while (each look is one read on the host).
          await stream.sleep(3000);
        }
      }
    });
  };
}
