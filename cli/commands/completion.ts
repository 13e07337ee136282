/** `vigil completion bash|zsh|fish`: a completion script made from the program's own command tree. */
import { Argument, type Command } from 'commander';

/** `vigil completion`. */
export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description(
      'print a shell completion script made from this command tree: `source <(vigil completion bash)` (or zsh); fish: `vigil ' +
        'completion fish > ~/.config/fish/completions/vigil.fish`',
    )
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .action(async (shell: string) => {
      const { completionScript } = await import('../completion.js');
      process.stdout.write(completionScript(program, shell));
    });
}
