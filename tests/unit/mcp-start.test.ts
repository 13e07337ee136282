/**
 * `vigil_start` reads no file outside the repository it is given (cli/mcp-start.ts), against real
 * files, folders and symbolic links: a PRD, checklist, config file or prompt template named by
 * the call outside the repository — by an absolute path, by `..`, or through a link (of the file
 * or of a folder on its way) — is refused before it is read, and its text never comes back (the
 * PRD's title was how a file's first line leaked). Files inside the repository, also through the
 * repository's own linked path, pass every check and reach the start itself; the Temporal
 * connection here is one that fails on purpose, so reaching it proves the checks let them through.
 * Over HTTP a call without the operator's token is refused before any of this (a run is signed for
 * the operator only), and so is a fork of `vigil_rewind` (it starts a run), while stdio is the
 * operator's own process.
 */
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { resolveKnobs } from '../../cli/config.js';
import type { Endpoint } from '../../cli/endpoint.js';
import { buildMcpServer, Temporal, type McpDeps, type McpTransportKind } from '../../cli/mcp.js';
import { fileInRepo, startRun } from '../../cli/mcp-start.js';
import { makeRepo } from '../support/harness.js';

const SECRET = 'TOP SECRET first line of a file of the operator';
const NOT_CONNECTED = 'reached the start: the checks let it through';

/** The knob resolution cli/main.ts hands the server (flags, --set, --config), without this process's VIGIL_* settings. */
const deps: McpDeps = {
  endpoint: (): Endpoint => {
    throw new Error(NOT_CONNECTED);
  },
  resolve: (o) =>
    Promise.resolve(
      resolveKnobs({
        flags: {
          ...(typeof o.provider === 'string' ? { provider: o.provider } : {}),
          ...(typeof o.agentCommand === 'string' ? { agentCommand: o.agentCommand } : {}),
        },
        sets: (o.set as string[] | undefined) ?? [],
        env: {},
        ...(typeof o.config === 'string' ? { configFile: o.config } : {}),
        cwd: process.cwd(),
      }),
    ),
  validateId: (id) => id,
};

/** A file of the operator's outside any repository. */
function outsideFile(name = 'notes.md', text = `# ${SECRET}\n`): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-outside-')), name);
  writeFileSync(file, text);
  return file;
}

const start = (args: Parameters<typeof startRun>[2]) => startRun(deps, new Temporal(deps.endpoint), args);
const agent = { provider: 'command', agentCommand: 'true' };

describe('fileInRepo', () => {
  it('takes a file inside the repository, by a relative or absolute path, and through the repository’s own link', () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n', 'docs/PRD.md': '# The PRD\n' } });
    expect(fileInRepo('the PRD', 'docs/PRD.md', repo, repo)).toBe(path.join(repo, 'docs/PRD.md'));
    expect(fileInRepo('the PRD', path.join(repo, 'docs', '..', 'docs', 'PRD.md'), repo)).toBe(path.join(repo, 'docs/PRD.md'));
    // The repository named through a link of its own: the same files.
    const link = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-link-')), 'repo');
    symlinkSync(repo, link);
    expect(fileInRepo('the PRD', path.join(link, 'docs/PRD.md'), link)).toBe(path.join(repo, 'docs/PRD.md'));
    // A link inside the repository to another file inside it is fine.
    symlinkSync(path.join(repo, 'docs/PRD.md'), path.join(repo, 'PRD-link.md'));
    expect(fileInRepo('the PRD', 'PRD-link.md', repo, repo)).toBe(path.join(repo, 'docs/PRD.md'));
  });

  it('refuses a file outside it: an absolute path, `..`, a linked file, a linked folder', () => {
    const repo = makeRepo();
    const secret = outsideFile();
    expect(() => fileInRepo('the PRD', secret, repo)).toThrow(`the PRD ${secret} is outside the repository ${repo}`);
    expect(() => fileInRepo('the PRD', '/etc/shadow', repo)).toThrow('the PRD /etc/shadow is outside the repository');
    const dotdot = path.join('..', path.basename(path.dirname(secret)), path.basename(secret));
    expect(() => fileInRepo('the PRD', dotdot, repo, repo)).toThrow(/is outside the repository/);
    symlinkSync(secret, path.join(repo, 'PRD.md'));
    expect(() => fileInRepo('the PRD', 'PRD.md', repo, repo)).toThrow(
      `the PRD ${path.join(repo, 'PRD.md')} leads outside the repository ${repo} through a symbolic link`,
    );
    symlinkSync(path.dirname(secret), path.join(repo, 'docs'));
    expect(() => fileInRepo('the checklist', `docs/${path.basename(secret)}`, repo, repo)).toThrow(
      /leads outside the repository .* symbolic link/,
    );
    // Where it does not exist inside, it is named as missing (an outside path is never looked at).
    expect(() => fileInRepo('the PRD', 'nope.md', repo, repo)).toThrow(`the PRD not found: ${path.join(repo, 'nope.md')}`);
  });
});

describe('vigil_start', () => {
  const refusal = async (args: Parameters<typeof startRun>[2]): Promise<string> => {
    const err = await start(args).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).not.toContain(SECRET);
    return message;
  };

  it('refuses a PRD, checklist, config file or prompt template outside the repository, before reading it', async () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n', 'PRD.md': '# The PRD\n\nDo it.\n' } });
    expect(await refusal({ prd: outsideFile(), repo, ...agent })).toMatch(/^the PRD \S+ is outside the repository/);
    expect(await refusal({ prd: '/etc/shadow', repo, ...agent })).toMatch(
      /^the PRD \/etc\/shadow is outside the repository .*vigil_start reads only files inside/,
    );
    symlinkSync(outsideFile(), path.join(repo, 'linked.md'));
    expect(await refusal({ prd: path.join(repo, 'linked.md'), repo, ...agent })).toMatch(/leads outside the repository .* symbolic link/);
    const prd = path.join(repo, 'PRD.md');
    expect(await refusal({ prd, repo, ...agent, checklist: outsideFile('list.md', `- [ ] REQ-1 (critical): ${SECRET}\n`) })).toMatch(
      /^the checklist \S+ is outside the repository/,
    );
    expect(await refusal({ prd, repo, ...agent, config: outsideFile('c.json', `${SECRET}\n`) })).toMatch(
      /^the config file \S+ is outside the repository/,
    );
    expect(await refusal({ prd, repo, ...agent, set: [`promptTemplate=${outsideFile('t.md', `${SECRET} {{prd}}\n`)}`] })).toMatch(
      /^the prompt template \S+ is outside the repository/,
    );
    // A config file in the repository that names a template outside it: refused too.
    writeFileSync(path.join(repo, 'vigil.json'), JSON.stringify({ promptTemplate: outsideFile('t2.md', `${SECRET}\n`) }));
    expect(await refusal({ prd, repo, ...agent, config: path.join(repo, 'vigil.json') })).toMatch(
      /^the prompt template \S+ is outside the repository/,
    );
    // On another host: the PRD's path must be under the repository's path there, and nothing is read here.
    expect(await refusal({ prd: '/srv/other/PRD.md', repo: '/srv/app', host: 'elsewhere', ...agent })).toMatch(
      /^the PRD \/srv\/other\/PRD\.md is outside the repository \/srv\/app on host "elsewhere"/,
    );
    expect(await refusal({ prd: '/srv/app/PRD.md', repo: '/srv/app', host: 'elsewhere', ...agent, checklist: '/srv/app/c.md' })).toMatch(
      /^`checklist` is read here, and the repository is on host "elsewhere"/,
    );
  });

  it('takes an issue as the PRD only from inside the repository, and never beside a PRD or a checklist', async () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n', 'ISSUE.md': '# It crashes\n\n- [ ] it starts\n' } });
    const issue = path.join(repo, 'ISSUE.md');
    expect(await refusal({ issue, repo, ...agent })).toBe(NOT_CONNECTED);
    expect(await refusal({ issue: outsideFile('issue.md', `# ${SECRET}\n\n- [ ] ${SECRET}\n`), repo, ...agent })).toMatch(
      /^the issue \S+ is outside the repository/,
    );
    expect(await refusal({ issue, prd: issue, repo, ...agent })).toMatch(/^give `prd` .* or `issue` .*, not both: the issue is the PRD$/);
    expect(await refusal({ issue, checklist: issue, repo, ...agent })).toMatch(/takes the PRD checklist from the issue's task list/);
    expect(await refusal({ issue: '/srv/app/ISSUE.md', repo: '/srv/app', host: 'elsewhere', ...agent })).toMatch(
      /^`issue` is read on this machine, and the run's host is another/,
    );
    expect(await refusal({ repo, ...agent })).toBe(
      'missing the PRD: give `prd` (a PRD file), `issue` (an issue file) or `goal` (what to build, as text)',
    );
    // A goal: alone, on this machine, in the tool's words; a good one reaches the start (nothing read).
    expect(await refusal({ goal: 'Add a CSV export', repo, ...agent })).toBe(NOT_CONNECTED);
    expect(await refusal({ goal: 'Add a CSV export', prd: issue, repo, ...agent })).toMatch(/^give `goal` or a PRD \(\S+\), not both/);
    expect(await refusal({ goal: ' ', repo, ...agent })).toMatch(/^`goal` needs the goal as text/);
    expect(await refusal({ goal: 'g', repo: '/srv/app', host: 'elsewhere', ...agent })).toMatch(/^`goal` runs on this machine/);
  });

  it('lets files inside the repository through to the start (the honest call)', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# r\n',
        'PRD.md': '# The PRD\n\nDo it.\n',
        'checklist.md': '- [ ] REQ-1 (critical): it works — run it\n',
        'vigil.json': JSON.stringify({ maxIterations: 3 }),
        'prompt.md': 'Work on {{prd}}.\n{{directives}}\n{{completion}}\n',
      },
    });
    const inRepo = (f: string) => path.join(repo, f);
    expect(
      await refusal({
        prd: inRepo('PRD.md'),
        repo,
        ...agent,
        checklist: inRepo('checklist.md'),
        config: inRepo('vigil.json'),
        set: [`promptTemplate=${inRepo('prompt.md')}`],
      }),
    ).toBe(NOT_CONNECTED);
    expect(await refusal({ prd: '/srv/app/docs/PRD.md', repo: '/srv/app', host: 'elsewhere', ...agent })).toBe(NOT_CONNECTED);
  });
});

describe('who may start a run', () => {
  async function callTool(kind: McpTransportKind, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const server = buildMcpServer(deps, new Temporal(deps.endpoint), kind);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(b);
    try {
      return (await client.callTool({ name, arguments: args })) as CallToolResult;
    } finally {
      await client.close();
      await server.close();
    }
  }
  const callStart = (kind: McpTransportKind, args: Record<string, unknown>) => callTool(kind, 'vigil_start', args);
  const text = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

  it('over HTTP, refuses a call that did not come with the token (no authInfo); over stdio, the operator’s own process goes on', async () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n', 'PRD.md': '# The PRD\n' } });
    const args = { prd: path.join(repo, 'PRD.md'), repo, ...agent };
    const http = await callStart('http', args);
    expect(http.isError).toBe(true);
    expect(text(http)).toMatch(
      /^vigil_start starts a run signed with the operator's run secret, and this call did not come with the token/,
    );
    const stdio = await callStart('stdio', args);
    expect(stdio.isError).toBe(true);
    expect(text(stdio)).toBe(NOT_CONNECTED);
  });

  it('over HTTP, refuses a fork (a new signed run) without the token; a rewind in place, and a fork over stdio, go on', async () => {
    const fork = await callTool('http', 'vigil_rewind', { id: 'some-run', to: 1, fork: true });
    expect(fork.isError).toBe(true);
    expect(text(fork)).toMatch(
      /^vigil_rewind with fork starts a run signed with the operator's run secret, and this call did not come with the token/,
    );
    // The honest calls reach Temporal (which this test's connection refuses on purpose).
    expect(text(await callTool('http', 'vigil_rewind', { id: 'some-run', to: 1 }))).toBe(NOT_CONNECTED);
    expect(text(await callTool('stdio', 'vigil_rewind', { id: 'some-run', to: 1, fork: true }))).toBe(NOT_CONNECTED);
  });

  it('keeps its path rule over stdio too', async () => {
    const r = await callStart('stdio', { prd: outsideFile(), repo: makeRepo(), ...agent });
    expect(text(r)).toMatch(/is outside the repository/);
    expect(text(r)).not.toContain(SECRET);
  });
});
