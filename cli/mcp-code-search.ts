/**
 * `vigil_code_search` (cli/mcp.ts; the search in lib/code-search.ts): a repository's code, as
 * `path:line` and the line. Which repository: inside a run (VIGIL_RUN_ID and the prompt file its
 * call was given), the run's — any role's call, the search only reads — and no other; for a
 * person's client, the one it names (or the one `vigil mcp` runs in). A path outside that
 * repository is refused, whatever way it is spelt.
 */
import path from 'node:path';
import { runDirPath } from '../schemas/paths.js';
import { McpCodeSearchOutputSchema, type McpCodeSearchOutput } from '../schemas/mcp.js';
import { CodeSearchRefused, repositoryTop, searchCode, type CodeSearchOptions } from '../lib/code-search.js';
import { CliError, EXIT } from './errors.js';

/** The repository of the run whose agent call started this server (its prompt file is under `<repo>/.vigil/runs/<run>/`), or null. */
export function runRepository(env: NodeJS.ProcessEnv): string | null {
  const runId = env.VIGIL_RUN_ID;
  const prompt = env.VIGIL_PROMPT_FILE;
  if (!runId || !prompt || !path.isAbsolute(prompt)) return null;
  const runFolder = path.dirname(path.normalize(prompt));
  const repo = path.dirname(path.dirname(path.dirname(runFolder)));
  return path.normalize(runDirPath(repo, runId)) === runFolder ? repo : null;
}

export async function codeSearch(
  env: NodeJS.ProcessEnv,
  o: CodeSearchOptions & { repo?: string | undefined },
  cwd: string = process.cwd(),
): Promise<McpCodeSearchOutput> {
  try {
    let top: string;
    if (env.VIGIL_RUN_ID) {
      const own = runRepository(env);
      if (!own)
        throw new CliError(
          `vigil_code_search: VIGIL_PROMPT_FILE (${env.VIGIL_PROMPT_FILE ?? ''}) does not name run "${env.VIGIL_RUN_ID}"'s repository`,
          EXIT.usage,
        );
      top = repositoryTop(own);
      if (o.repo !== undefined && repositoryTop(path.resolve(own, o.repo)) !== top)
        throw new CliError(`vigil_code_search: an agent's call searches its run's repository (${top}) only; leave repo out`, EXIT.usage);
    } else top = repositoryTop(path.resolve(cwd, o.repo ?? '.'));
    return McpCodeSearchOutputSchema.parse(await searchCode(top, o));
  } catch (err) {
    if (err instanceof CodeSearchRefused) throw new CliError(`vigil_code_search: ${err.message}`, EXIT.usage);
    throw err;
  }
}
