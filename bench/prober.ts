/**
 * The load bench's outside client (bench/run.ts, `--concurrent`): a process of its own, as `vigil`
 * and every ops tool are, that asks loaded runs for their status and pauses and resumes them,
 * timing each answer. The bench's own client shares the worker's process and its busy event loop;
 * this one does not, so its figures are what a person's client sees.
 *
 * Protocol: one JSON line on stdin, `{"address", "namespace", "workflowIds", "everyMs", "forMs"}`;
 * one JSON line on stdout at the end, `{"statusMs": [...], "pauseMs": [...], "unanswered": N}`.
 */
import { Client, Connection } from '@temporalio/client';

interface Ask {
  address: string;
  namespace: string;
  workflowIds: string[];
  everyMs: number;
  forMs: number;
}

async function readAsk(): Promise<Ask> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return JSON.parse(text) as Ask;
}

const ask = await readAsk();
const connection = await Connection.connect({ address: ask.address });
const client = new Client({ connection, namespace: ask.namespace });
const statusMs: number[] = [];
const pauseMs: number[] = [];
let unanswered = 0;
const deadline = performance.now() + ask.forMs;
for (let k = 0; performance.now() < deadline - ask.everyMs; k++) {
  await new Promise((r) => setTimeout(r, ask.everyMs));
  const h = client.workflow.getHandle(ask.workflowIds[k % ask.workflowIds.length] as string);
  // An unanswered query or pause counts at its timeout.
  let t = performance.now();
  await h.query('status').catch(() => (unanswered += 1));
  statusMs.push(performance.now() - t);
  t = performance.now();
  await h.executeUpdate('pause', { args: [{ reason: 'bench (outside client)', by: 'bench' }] }).catch(() => (unanswered += 1));
  pauseMs.push(performance.now() - t);
  await h.executeUpdate('resume', { args: [{ by: 'bench' }] }).catch(() => undefined);
}
await connection.close();
process.stdout.write(`${JSON.stringify({ statusMs, pauseMs, unanswered })}\n`);
