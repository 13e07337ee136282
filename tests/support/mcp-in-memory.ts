/**
 * One tool call through the MCP protocol to `vigil mcp`'s server (`buildMcpServer`), linked to the
 * official SDK's client in memory, its process's variables as given: the tools that need no
 * Temporal (tests/unit/mcp-memory-tools.test.ts, tests/store/memory-agent.test.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { buildMcpServer, Temporal, type McpDeps } from '../../cli/mcp.js';
import { runDirPath } from '../../schemas/paths.js';

/** The variables Vigil sets for an agent call of `runId` in `repo` (its prompt file written where Vigil writes it). */
export function agentCallEnv(repo: string, runId = 'vigil-prd-7', iteration = 2, role = 'iteration'): NodeJS.ProcessEnv {
  const prompt = path.join(runDirPath(repo, runId), `iteration-${String(iteration).padStart(4, '0')}.prompt.md`);
  mkdirSync(path.dirname(prompt), { recursive: true });
  writeFileSync(prompt, 'the prompt\n');
  return { VIGIL_RUN_ID: runId, VIGIL_ROLE: role, VIGIL_ITERATION: String(iteration), VIGIL_PROMPT_FILE: prompt };
}

export async function callTool(env: NodeJS.ProcessEnv, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const deps: McpDeps = {
    endpoint: () => {
      throw new Error('no Temporal here: these tools never connect');
    },
    resolve: () => Promise.reject(new Error('not used')),
    validateId: (id) => id,
    env,
  };
  const server = buildMcpServer(deps, new Temporal(deps.endpoint));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'builder', version: '1' });
  await client.connect(b);
  try {
    return (await client.callTool({ name, arguments: args })) as CallToolResult;
  } finally {
    await client.close();
    await server.close();
  }
}

export const toolText = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** The tool's error text; fails the test when the call was not refused. */
export async function refusedCall(env: NodeJS.ProcessEnv, name: string, args: Record<string, unknown>): Promise<string> {
  const r = await callTool(env, name, args);
  expect(r.isError, toolText(r)).toBe(true);
  return toolText(r);
}

/** The tool's structured output; fails the test with the tool's error when it refused. */
export async function okCall(env: NodeJS.ProcessEnv, name: string, args: Record<string, unknown>): Promise<unknown> {
  const r = await callTool(env, name, args);
  expect(r.isError ?? false, toolText(r)).toBe(false);
  return r.structuredContent;
}
