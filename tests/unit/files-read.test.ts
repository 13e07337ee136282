/**
 * The files an agent read, for the memory's episodes (lib/files-read.ts and the provider
 * presets' `filesRead`): read and search tools in claude's and opencode's streams, commands that
 * print or search a file in codex's and opencode's, and the FILES_READ signal any agent may write;
 * kept beside the call's log, bounded, relative to the repository.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { filesReadOf, keepFilesRead, normalizeReads } from '../../lib/files-read.js';
import { commandReads, MAX_FILES_READ, toolReads } from '../../lib/providers/common.js';
import { PROVIDERS } from '../../lib/providers/index.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'providers');
const fixture = (provider: string, file: string): string => readFileSync(path.join(FIXTURES, provider, file), 'utf8');

describe('what the presets read from a transcript', () => {
  it("claude: its Read tool's path (the fixture's stream), not its edits or shell commands", () => {
    const p = PROVIDERS.claude.parseOutput({ text: fixture('claude', 'budget-exceeded.jsonl'), exitCode: 1, requestedModel: null });
    expect(p.filesRead).toEqual(['/work/repo/PRD.md']);
    const edits = PROVIDERS.claude.parseOutput({ text: fixture('claude', 'success.jsonl'), exitCode: 0, requestedModel: null });
    expect(edits.filesRead).toEqual([]);
  });
  it('claude: Read, Grep and Glob in one stream, each path once, in order', () => {
    const line = (name: string, input: Record<string, unknown>) =>
      JSON.stringify({ type: 'assistant', message: { id: `m-${name}`, content: [{ type: 'tool_use', id: `t-${name}`, name, input }] } });
    const text = [
      line('Read', { file_path: 'src/add.js' }),
      line('Grep', { pattern: 'add', path: 'test' }),
      line('Glob', { pattern: '**/*.js' }),
      line('Read', { file_path: 'src/add.js' }),
      line('Write', { file_path: 'out.txt', content: 'x' }),
    ].join('\n');
    expect(PROVIDERS.claude.parseOutput({ text, exitCode: 0, requestedModel: null }).filesRead).toEqual(['src/add.js', 'test']);
  });
  it('codex: files its shell commands print or search', () => {
    const item = (command: string) =>
      JSON.stringify({
        type: 'item.completed',
        item: { id: command, type: 'command_execution', command, aggregated_output: '', exit_code: 0, status: 'completed' },
      });
    const text = [
      item("bash -lc 'cat src/add.js'"),
      item("bash -lc 'sed -n 1,80p test/add.test.js'"),
      item('rg -n "strictEqual" test'),
      item('npm test'),
    ].join('\n');
    expect(PROVIDERS.codex.parseOutput({ text, exitCode: 0, requestedModel: null }).filesRead).toEqual([
      'src/add.js',
      'test/add.test.js',
      'test',
    ]);
  });
  it('opencode: its read tool, and its bash tool when it prints a file', () => {
    const tool = (t: string, input: Record<string, unknown>) =>
      JSON.stringify({ type: 'tool_use', part: { type: 'tool', tool: t, state: { status: 'completed', input, output: '' } } });
    const text = [
      tool('read', { filePath: '/w/src/add.js' }),
      tool('bash', { command: 'head -n 20 README.md' }),
      tool('edit', { filePath: '/w/src/add.js' }),
    ].join('\n');
    expect(PROVIDERS.opencode.parseOutput({ text, exitCode: 0, requestedModel: null }).filesRead).toEqual(['/w/src/add.js', 'README.md']);
  });
  it('the helpers: which tools and commands read, and what is not a file', () => {
    expect(toolReads('NotebookRead', { notebook_path: 'a.ipynb' })).toEqual(['a.ipynb']);
    expect(toolReads('read_many_files', { paths: ['a', 'b'] })).toEqual(['a', 'b']);
    expect(toolReads('Edit', { file_path: 'a' })).toEqual([]);
    expect(commandReads('cat a.txt && grep -n foo b.txt | head -n 3')).toEqual(['a.txt', 'b.txt']);
    expect(commandReads('cat *.js $HOME/x')).toEqual([]);
    expect(commandReads('npm test')).toEqual([]);
  });
});

describe('kept beside the log', () => {
  const setup = () => {
    const repo = mkdtempSync(path.join(os.tmpdir(), 'vigil-files-read-'));
    mkdirSync(path.join(repo, '.vigil', 'signals'), { recursive: true });
    const logPath = path.join(repo, '.vigil', 'iteration-0001.log');
    return { repo, logPath, signal: path.join(repo, '.vigil', 'signals', 'FILES_READ') };
  };
  it("the transcript's and the FILES_READ signal's paths, relative to the repository, each once; the signal consumed", () => {
    const { repo, logPath, signal } = setup();
    writeFileSync(signal, 'src/add.js\n\ntest/add.test.js\n/etc/hosts\n');
    keepFilesRead({ logPath, repoPath: repo, fromTranscript: [path.join(repo, 'src/add.js'), 'README.md'], signalFile: signal });
    expect(existsSync(signal)).toBe(false);
    expect(filesReadOf(logPath, repo)).toEqual(['src/add.js', 'README.md', 'test/add.test.js', '/etc/hosts']);
  });
  it('nothing read: no file, and an empty list', () => {
    const { repo, logPath, signal } = setup();
    keepFilesRead({ logPath, repoPath: repo, fromTranscript: undefined, signalFile: signal });
    expect(existsSync(logPath.replace(/\.log$/, '.files-read.json'))).toBe(false);
    expect(filesReadOf(logPath, repo)).toEqual([]);
  });
  it('bounded: at most MAX_FILES_READ paths of at most 300 characters', () => {
    const many = Array.from({ length: 80 }, (_, i) => `f${i}-${'x'.repeat(400)}`);
    const got = normalizeReads(many, '/r');
    expect(got).toHaveLength(MAX_FILES_READ);
    expect(got.every((p) => p.length <= 300)).toBe(true);
  });
});
