/**
 * `vigil memory list|show|search|forget|export|import|economics|consolidate` as commander commands (the
 * commands themselves are in cli/memory.ts, loaded when one runs, so `vigil` starts as fast as
 * before). See docs/memory.md.
 */
import { InvalidArgumentError, type Command } from 'commander';

function intArg(name: string, min: number, max: number) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw.trim())) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got ${n}`);
    return n;
  };
}

/** Adds `vigil memory ...` to the program (its subcommands inherit the program's error handling). */
export function addMemoryCommand(program: Command): Command {
  const memory = program
    .command('memory')
    .description(
      'the memory that outlives a run (docs/memory.md), in the event store (DATABASE_URL, else the local ' +
        'one): list, show, search, forget, export, import, economics, consolidate',
    );
  memory
    .command('list')
    .description('patterns, anti-patterns and skills, most important first (with --episodes, the newest episodes too)')
    .option('--repo <dir>', "this repository's memory and the installation's")
    .option('--episodes', 'the episodes too')
    .option('--limit <n>', 'at most this many', intArg('--limit', 1, 10000), 100)
    .option('--json', 'machine-readable output')
    .action(async (o: { repo?: string; episodes?: boolean; limit?: number; json?: boolean }) => {
      const { memoryListCommand } = await import('./memory.js');
      process.exitCode = await memoryListCommand(o);
    });
  memory
    .command('show')
    .description('one item whole, with its links (docs/memory.md, Links: the eight relations)')
    .argument('<kind>', 'pattern (anti-patterns too), skill or episode')
    .argument('<id>', 'its id (vigil memory list)')
    .option('--json', 'machine-readable output')
    .action(async (kind: string, id: string, o: { json?: boolean }) => {
      const { memoryShowCommand } = await import('./memory.js');
      process.exitCode = await memoryShowCommand(kind, id, o);
    });
  memory
    .command('search')
    .description('items whose words match the query (keyword search), best first')
    .argument('<query>', 'words to look for')
    .option('--repo <dir>', "this repository's memory and the installation's")
    .option('--limit <n>', 'at most this many', intArg('--limit', 1, 1000), 20)
    .option('--json', 'machine-readable output')
    .action(async (query: string, o: { repo?: string; limit?: number; json?: boolean }) => {
      const { memorySearchCommand } = await import('./memory.js');
      process.exitCode = await memorySearchCommand(query, o);
    });
  memory
    .command('forget')
    .description('forget an item for good: a pattern or skill is deleted and never consolidated again; an episode is deleted')
    .argument('<kind>', 'pattern (anti-patterns too), skill or episode')
    .argument('<id>', 'its id (vigil memory list)')
    .option('--json', 'machine-readable output')
    .action(async (kind: string, id: string, o: { json?: boolean }) => {
      const { memoryForgetCommand } = await import('./memory.js');
      process.exitCode = await memoryForgetCommand(kind, id, o);
    });
  memory
    .command('export')
    .description("a repository's memory (without --repo: all of it) as a JSON file")
    .option('--repo <dir>', 'this repository only')
    .option('--out <file>', 'write it here instead of to standard output')
    .action(async (o: { repo?: string; out?: string }) => {
      const { memoryExportCommand } = await import('./memory.js');
      process.exitCode = await memoryExportCommand(o);
    });
  memory
    .command('import')
    .description('a memory file (vigil memory export) into this store; forgotten items stay forgotten')
    .argument('<file>', 'the file')
    .option('--repo <dir>', "the repository's checkout here, when it is elsewhere than where the file was written")
    .option('--json', 'machine-readable output')
    .action(async (file: string, o: { repo?: string; json?: boolean }) => {
      const { memoryImportCommand } = await import('./memory.js');
      process.exitCode = await memoryImportCommand(file, o);
    });
  memory
    .command('economics')
    .description(
      'token economics per agent call (docs/memory.md, Token economics): what each prompt read from memory, what the call ' +
        'added, the thresholds crossed and what the next retrieval did about them; a run, or the latest calls',
    )
    .option('--run <id>', 'this run only')
    .option('--limit <n>', 'at most this many calls (the latest)', intArg('--limit', 1, 10000), 50)
    .option('--json', 'machine-readable output')
    .action(async (o: { run?: string; limit?: number; json?: boolean }) => {
      const { memoryEconomicsCommand } = await import('./memory.js');
      process.exitCode = await memoryEconomicsCommand(o);
    });
  memory
    .command('consolidate')
    .description(
      'turn the stored runs into episodes, patterns, anti-patterns and skills now (runs are consolidated when they end; this catches up, e.g. from a schedule)',
    )
    .option('--run <id>', 'this run only (the installation is consolidated again either way)')
    .option('--json', 'machine-readable output')
    .action(async (o: { run?: string; json?: boolean }) => {
      const { memoryConsolidateCommand } = await import('./memory.js');
      process.exitCode = await memoryConsolidateCommand(o);
    });
  return memory;
}
