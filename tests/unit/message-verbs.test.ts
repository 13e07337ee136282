/**
 * The message table (schemas/message-verbs.ts) is the one place a message is spelled: every row
 * reaches the CLI (the built program's verbs, with the row's arguments and options), MCP (a tool
 * per row, its input from the row), the console (an action with its button per row) and the
 * quick path's grammar; the kinds, the `--json` enum, the payload schemas, the payload builders
 * and the run's update and signal names are the table's names; and docs/messages.md holds the
 * section `npm run docs:messages` makes from it.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerMessages } from '../../cli/commands/messages.js';
import { collect, resolve, runIdArg, validateId } from '../../cli/commands/shared.js';
import { ACTIONS, stepsOf } from '../../cli/console/actions.js';
import { actionsPanel } from '../../cli/console/pages.js';
import { parseFast } from '../../cli/fast.js';
import { buildMcpServer, Temporal, type McpDeps } from '../../cli/mcp.js';
import { withMessagesSection } from '../../cli/messages-doc.js';
import { PAYLOADS } from '../../cli/steer-commands.js';
import { MessageJsonSchema } from '../../schemas/cli-output.js';
import { MESSAGE_NAMES, MESSAGE_VERBS, optionKey, QUICK_VERBS, SENT_MESSAGES, type MessageVerb } from '../../schemas/message-verbs.js';
import { MESSAGE_SCHEMAS, parseMessage } from '../../schemas/messages.js';
import * as messages from '../../workflows/messages.js';
import { messageEvent as journalEvent } from '../../rules/journal.js';
import { assertBuilt, CLI } from '../support/harness.js';
import { statusSnapshot } from '../support/status-snapshot.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NOWHERE = { address: '127.0.0.1:1', namespace: 'default', taskQueue: 'vigil' } as never;

/** A few rows to look at in a failing test's message. */
const rows = (): [string, MessageVerb][] => MESSAGE_NAMES.map((n) => [n, MESSAGE_VERBS[n]]);

describe('the message table', () => {
  it("names the run's updates and signals, the payload schemas, the builders and the --json enum, no more and no fewer", () => {
    const defs = messages as unknown as Record<string, { name: string }>;
    for (const name of MESSAGE_NAMES) {
      expect(defs[`${name}Update`]?.name, name).toBe(name);
      expect(defs[`${name}Signal`]?.name, name).toBe(name);
    }
    expect(Object.keys(MESSAGE_SCHEMAS).sort()).toEqual([...MESSAGE_NAMES].sort());
    expect(Object.keys(PAYLOADS).sort()).toEqual([...SENT_MESSAGES].sort());
    expect(MessageJsonSchema.shape.message.options).toEqual(SENT_MESSAGES);
    // Every CLI verb is its own, and none is a command of another kind.
    expect(new Set(rows().map(([, r]) => r.cli)).size).toBe(MESSAGE_NAMES.length);
  });

  it('builds payloads the run takes, from the options as commander names them and the arguments', () => {
    const o: Record<string, unknown> = { by: 'ana', reason: 'why', now: true, usd: 12.5 };
    for (const name of SENT_MESSAGES) {
      const args = MESSAGE_VERBS[name].args.map((a) => (a.key === 'directive' ? 'use tabs' : 'REQ-1'));
      const payload = PAYLOADS[name](o, ...args);
      expect(parseMessage(name, payload), name).toMatchObject({ ok: true });
      expect(payload.by, name).toBe('ana');
    }
    expect(() => PAYLOADS.budget({ usd: 'lots' })).toThrow(/must be a number of dollars/);
  });

  it('gives the journal its summary per row, never a directive’s text', () => {
    const messageEvent = (...a: Parameters<typeof journalEvent>): { summary?: string } => journalEvent(...a) as { summary?: string };
    expect(messageEvent('stop', { now: true, reason: 'enough' }, 'ana', true).summary).toBe('stop now: enough');
    expect(messageEvent('budget', { usd: 3 }, 'ana', true).summary).toBe('budget set to $3.00');
    expect(messageEvent('input', { directive: 'secret plan' }, 'ana', true).summary).toBe('directive of 11 characters');
    expect(messageEvent('waive', { item: 'REQ-1' }, 'ana', false, 'no such item').summary).toBe('refused: no such item');
    expect(messageEvent('prEvent', { reason: 'x' }, 'gh', true).summary).toBe('x');
  });
});

describe('every verb reaches the CLI, MCP and the console', () => {
  it('the CLI: each row a verb of the program, with its arguments and options', () => {
    const program = new Command('vigil');
    registerMessages(program, { endpoint: () => NOWHERE, resolve, validateId, runIdArg, collect, out: () => undefined });
    for (const [name, row] of rows()) {
      const cmd = program.commands.find((c) => c.name() === row.cli);
      expect(cmd, name).toBeDefined();
      expect(cmd?.description()).toBe(row.summary);
      expect(cmd?.registeredArguments.map((a) => a.name())).toEqual(['id', ...row.args.map((a) => a.name)]);
      expect(cmd?.options.map((o) => o.flags)).toEqual(row.options.map((o) => o.flags));
    }
  });

  describe('the built program', () => {
    assertBuilt();
    it('lists every verb of the table (vigil --help)', async () => {
      const { stdout } = await promisify(execFile)(process.execPath, [CLI, '--help']);
      for (const [name, row] of rows()) expect(stdout, name).toMatch(new RegExp(`^  ${row.cli} \\[options\\] <id>`, 'm'));
    });
  });

  it('the quick path: the quick rows, read with their own options', () => {
    for (const name of QUICK_VERBS) {
      const row: MessageVerb = MESSAGE_VERBS[name];
      const argv = [row.cli, 'r1', ...row.args.filter((a) => !a.optional).map(() => 'x')];
      for (const o of row.options) {
        const { value } = optionKey(o);
        argv.push(...(value ? [o.flags.split(' ')[0] as string, 'v'] : [o.flags]));
      }
      // input's --file and TEXT are either-or for the payload, not for the grammar.
      expect(parseFast(argv), argv.join(' ')).toMatchObject({ verb: name, args: ['r1'] });
    }
    for (const [name, row] of rows()) if (!QUICK_VERBS.includes(name as never)) expect(parseFast([row.cli, 'r1']), name).toBeNull();
  });

  it('MCP: a tool per row, its input the row’s arguments and options', async () => {
    const deps: McpDeps = { endpoint: () => NOWHERE, resolve, validateId, env: {} };
    const server = buildMcpServer(deps, new Temporal(deps.endpoint));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(b);
    try {
      const tools = (await client.listTools()).tools;
      for (const [name, row] of rows()) {
        const tool = tools.find((t) => t.name === row.mcp.tool);
        expect(tool, name).toBeDefined();
        expect(tool?.title).toBe(row.mcp.title);
        const fields = Object.keys((tool?.inputSchema.properties ?? {}) as object);
        for (const arg of row.args) expect(fields, `${name} ${arg.key}`).toContain(arg.key);
        for (const o of row.options.filter((x) => !x.cliOnly)) expect(fields, `${name} ${o.flags}`).toContain(optionKey(o).key);
      }
      // The row's input schema refuses what the message's schema would (no Temporal here to reach).
      const r = await client.callTool({ name: 'vigil_budget', arguments: { id: 'r1', usd: -1 } });
      expect(r.isError).toBe(true);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('the console: an action and its button per row, sending the row’s message', () => {
    const parsed = statusSnapshot({
      paused: false,
      quality: {
        gates: [],
        failing: {},
        lastReview: null,
        reviewRounds: 0,
        checklist: [{ id: 'REQ-1', title: 'Sum', priority: 'critical', status: 'failing', waived: false, heldOut: false }],
        checklistProblem: null,
      },
    } as never);
    // A checkpoint to rewind to (the panel reads its iteration, commit and files).
    const snap = {
      ...parsed,
      checkpoints: { kept: 200, lastTree: null, rewinds: [], list: [{ iteration: 2, commit: 'abcdef0123', filesSinceStart: 1 }] },
    };
    const page = String(actionsPanel(snap as never, 'run'));
    const form = { directive: 'use tabs', usd: '5', item: 'REQ-1', reason: 'why', to: '2' };
    for (const [name, row] of rows()) {
      for (const action of row.console) {
        expect(ACTIONS, name).toContain(action);
        expect(page, `${name}: the ${action} button`).toContain(`value="${action}"`);
        if (action === 'rewind') continue;
        expect(stepsOf(action as never, form, 'ana')[0]?.kind).toBe(name);
      }
    }
  });
});

it('docs/messages.md holds the section `npm run docs:messages` makes', () => {
  const doc = readFileSync(path.join(ROOT, 'docs/messages.md'), 'utf8');
  expect(withMessagesSection(doc), 'run `npm run docs:messages` and commit docs/messages.md').toBe(doc);
});
