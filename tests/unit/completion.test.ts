/**
 * `vigil completion bash|zsh|fish`: the script made from commander's command tree loads in a real
 * bash, registers itself for `vigil`, and offers the commands, subcommands, options and option
 * choices the program has (bash's COMP_WORDS/COMP_CWORD set as bash sets them at a TAB). Needs the
 * built CLI (`npm run build`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertBuilt, CLI } from '../support/harness.js';

const vigil = (...args: string[]): string =>
  execFileSync(process.execPath, [CLI, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** The script as a file that bash sources, as `source <(vigil completion bash)` would. */
function scriptFile(script: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-completion-')), 'vigil.bash');
  writeFileSync(file, script);
  return file;
}

/** The candidates bash offers for a command line whose last word is being completed. */
function candidates(file: string, line: string[]): string[] {
  const words = line.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  const out = execFileSync(
    'bash',
    [
      '--norc',
      '--noprofile',
      '-c',
      `source "$0"; COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _vigil_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
      file,
    ],
    { encoding: 'utf8' },
  );
  return out.split('\n').filter(Boolean);
}

describe('vigil completion', () => {
  assertBuilt();
  const bash = scriptFile(vigil('completion', 'bash'));

  it('loads in bash and registers itself for vigil', () => {
    const registered = execFileSync('bash', ['--norc', '--noprofile', '-c', 'source "$0"; complete -p vigil', bash], { encoding: 'utf8' });
    expect(registered.trim()).toBe('complete -o default -F _vigil_complete vigil');
  });

  it('offers the commands, subcommands, options and choices of the tree', () => {
    expect(candidates(bash, ['vigil', 'st'])).toEqual(['start', 'status', 'stop']);
    expect(candidates(bash, ['vigil', 'sch'])).toEqual(['schedule']);
    expect(candidates(bash, ['vigil', 'schedule', ''])).toEqual(
      expect.arrayContaining(['create', 'list', 'describe', 'pause', 'unpause', 'resume', 'trigger', 'delete']),
    );
    expect(candidates(bash, ['vigil', 'watch', 'r1', '--j'])).toEqual(['--json']);
    expect(candidates(bash, ['vigil', 'wait', 'r1', '--for', ''])).toEqual(['terminal', 'paused']);
    expect(candidates(bash, ['vigil', '--profile', 'prod', 'list', '--st'])).toEqual(['--status']);
    expect(candidates(bash, ['vigil', 'schedule', 'create', 'nightly', '--overlap', 's'])).toEqual(['skip']);
    expect(candidates(bash, ['vigil', 'completion', ''])).toEqual(['bash', 'zsh', 'fish']);
    // Only the program itself has --version.
    expect(candidates(bash, ['vigil', 'status', '--v'])).toEqual([]);
  });

  it('prints zsh and fish scripts from the same tree, and refuses another shell (exit 2)', () => {
    const zsh = vigil('completion', 'zsh');
    expect(zsh.split('\n')[0]).toBe('#compdef vigil');
    expect(zsh).toContain('bashcompinit');
    expect(zsh).toContain('complete -o default -F _vigil_complete vigil');
    const fish = vigil('completion', 'fish');
    expect(fish).toContain("complete -c vigil -n '__fish_use_subcommand' -a 'status'");
    expect(fish).toContain("-l for -x -a 'terminal paused'");
    let code = 0;
    try {
      vigil('completion', 'powershell');
    } catch (err) {
      code = (err as { status: number }).status;
    }
    expect(code).toBe(2);
  });
});
