/**
 * `vigil_start` (cli/mcp.ts): `vigil start --json` as a tool — the same checks in the same order
 * as `vigil start` (cli/start-command.ts), then the same start path (cli/start-run.ts: the rules for
 * a taken id, the hints and warnings, here as notes) — with one rule of its own: the
 * tool reads no file outside the repository it is given. The PRD, the checklist, the config file
 * and a prompt template named by the call (`set` or that config file) must be inside the
 * repository, after `..` and symbolic links are resolved; anything else is refused before it is
 * opened, so a caller cannot have the server read (and answer, as the PRD's title) a file of the
 * operator's elsewhere. A run on another host (`host`) is checked by its paths there (its PRD is
 * read by the worker on that host); a checklist or config file, read here, cannot be, and is refused.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { StartedJsonSchema, type StartedJson } from '../schemas/cli-output.js';
import type { ResolvedKnobs } from './config.js';
import { CliError, EXIT } from './errors.js';
import type { McpDeps, Temporal } from './mcp-deps.js';
import { knobsGivenOf } from '../rules/complexity.js';

export type StartArgs = {
  prd?: string | undefined;
  /** An issue's Markdown file as the PRD, its task list the checklist (`vigil start --issue`). */
  issue?: string | undefined;
  /** No PRD yet: what to build; a discovery call writes the PRD as the run starts (`vigil start --goal`). */
  goal?: string | undefined;
  repo?: string | undefined;
  provider?: string | undefined;
  agentCommand?: string | undefined;
  config?: string | undefined;
  set?: string[] | undefined;
  id?: string | undefined;
  replace?: boolean | undefined;
  checklist?: string | undefined;
  host?: string | undefined;
  noStore?: boolean | undefined;
};

/** `p` is `root` or under it. */
const inside = (root: string, p: string): boolean => {
  const rel = path.relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
};

const OUTSIDE_HINT =
  'vigil_start reads only files inside the repository it is given (`repo`): put the file there, or pass its path inside it';

/**
 * The real path of `file` (relative: from `cwd`), which must be inside the repository `repo`
 * (a directory that exists). Checked by its path first, so nothing outside is even looked at, then
 * by its real path, so a symbolic link (of the file or of a folder on its way) cannot lead out.
 */
export function fileInRepo(what: string, file: string, repo: string, cwd = process.cwd()): string {
  const abs = path.resolve(cwd, file);
  const root = realpathSync(repo);
  // The path as given, against the repository as given or as it really is (/tmp may be a link).
  if (!inside(path.resolve(repo), abs) && !inside(root, abs))
    throw new CliError(`${what} ${abs} is outside the repository ${repo}: ${OUTSIDE_HINT}`, EXIT.usage);
  let real: string;
  try {
    real = realpathSync(abs);
  } catch {
    throw new CliError(`${what} not found: ${abs}`, EXIT.usage);
  }
  if (!inside(root, real))
    throw new CliError(`${what} ${abs} leads outside the repository ${repo} through a symbolic link: ${OUTSIDE_HINT}`, EXIT.usage);
  return real;
}

/** A path on another host inside that host's repository path, by its path alone (it cannot be looked at from here). */
function pathInRemoteRepo(what: string, file: string, repo: string, host: string): void {
  if (!inside(repo, path.normalize(file)))
    throw new CliError(`${what} ${file} is outside the repository ${repo} on host "${host}": ${OUTSIDE_HINT}`, EXIT.usage);
}

/**
 * The prompt template a call names (`set promptTemplate=…`, or in the config file it gives) must be
 * in the repository too; one from the operator's own settings (VIGIL_*, their vigil.config.json) is theirs.
 */
function templateInRepo(resolved: ResolvedKnobs, o: StartArgs, repo: string, remote: boolean, cwd: string): ResolvedKnobs {
  const file = resolved.knobs.promptTemplate;
  const origin = resolved.sources.promptTemplate.source;
  if (!file || !(origin === 'flag' || (origin === 'file' && o.config !== undefined))) return resolved;
  if (remote)
    throw new CliError(`the prompt template ${file} is read here, and the repository is on another host: ${OUTSIDE_HINT}`, EXIT.usage);
  const real = fileInRepo('the prompt template', file, repo, cwd);
  return { ...resolved, knobs: { ...resolved.knobs, promptTemplate: real } };
}

/** `vigil start --json` for a caller of the MCP server (signed as the CLI signs: see docs/mcp.md#who-may-start-runs). */
export async function startRun(deps: McpDeps, temporal: Temporal, o: StartArgs): Promise<{ started: StartedJson; notes: string[] }> {
  const [
    { readPrd, readChecklist, readIssue, prdOnHost, goalPrd, goalTitle },
    runs,
    { checkPromptTemplate, requireAgentCommand },
    { pathOnHost, resolveHost, thisHost },
    { checkAcceptanceSource, prdSource, goalSource, MCP_NAMES },
  ] = await Promise.all([
    import('./prd.js'),
    import('./runs.js'),
    import('./config.js'),
    import('./hosts.js'),
    import('./start-checks.js'),
  ]);
  const cwd = process.cwd();
  const host = resolveHost(o.host);
  const remote = host !== thisHost();
  // A goal (no PRD yet: the discovery call writes it in the run folder as the run starts), alone and on this machine.
  const goal = goalSource(o.goal, { prdFile: o.prd, issueFile: o.issue, tasks: false, attempts: false, remote }, MCP_NAMES);
  // The rules of `vigil start` for a PRD or an issue (one of the two; an issue is its own checklist; read here only).
  const source = goal === null ? prdSource(o.prd, o.issue, o.checklist, remote, MCP_NAMES) : null;
  const repoPath = remote ? pathOnHost('--repo', o.repo ?? '.', host) : runs.checkRepo(o.repo ?? '.');
  const issue = source?.kind === 'issue' ? readIssue(fileInRepo('the issue', source.file, repoPath, cwd)) : null;
  const goalId =
    goal !== null
      ? o.id !== undefined
        ? deps.validateId(o.id)
        : runs.defaultRunId({ path: goalTitle(goal).replace(/[/.]/g, ' '), title: '', bytes: 0 })
      : null;
  let prd;
  if (goal !== null && goalId !== null) prd = goalPrd(goal, repoPath, goalId);
  else if (!source) throw new CliError(MCP_NAMES.missing, EXIT.usage);
  else if (issue) prd = issue.prd;
  else if (remote) {
    const onHost = pathOnHost('the PRD', source.file, host);
    pathInRemoteRepo('the PRD', onHost, repoPath, host);
    for (const [what, given] of [
      ['checklist', o.checklist],
      ['config', o.config],
    ] as const)
      if (given !== undefined)
        throw new CliError(
          `\`${what}\` is read here, and the repository is on host "${host}": ${OUTSIDE_HINT}; pass knobs with \`set\``,
          EXIT.usage,
        );
    prd = prdOnHost(onHost);
  } else prd = readPrd(fileInRepo('the PRD', source.file, repoPath, cwd));
  const config = o.config !== undefined && !remote ? fileInRepo('the config file', o.config, repoPath, cwd) : undefined;
  const flags: Record<string, unknown> = {
    repo: repoPath,
    ...(o.provider !== undefined ? { provider: o.provider } : {}),
    ...(o.agentCommand !== undefined ? { agentCommand: o.agentCommand } : {}),
    ...(config !== undefined ? { config } : {}),
    set: o.set ?? [],
    store: !o.noStore,
  };
  const resolvedKnobs = checkPromptTemplate(templateInRepo(await deps.resolve(flags), o, repoPath, remote, cwd), cwd);
  requireAgentCommand(resolvedKnobs);
  checkAcceptanceSource(resolvedKnobs.knobs);
  const checklist =
    o.checklist !== undefined ? readChecklist(fileInRepo('the checklist', o.checklist, repoPath, cwd)) : (issue?.checklist ?? undefined);
  const workflowId = goalId ?? (o.id !== undefined ? deps.validateId(o.id) : runs.defaultRunId(prd));
  const { client, connection, ep } = await temporal.get();
  // The start path `vigil start` shares (cli/start-run.ts); what it says comes back as notes.
  const { launchRun } = await import('./start-run.js');
  const launched = await launchRun(client, connection, ep, {
    prd,
    repoPath,
    knobs: resolvedKnobs.knobs,
    knobsGiven: knobsGivenOf(resolvedKnobs),
    workflowId,
    host,
    remote,
    replace: o.replace === true,
    ...(checklist ? { checklist } : {}),
    ...(goal !== null ? { goal } : {}),
    env: deps.env ?? process.env,
  });
  const goalNote =
    goal === null
      ? null
      : `no PRD yet: a discovery call analyses the repository and writes it at ${prd.path} first` +
        (resolvedKnobs.knobs.autonomyMode === 'supervised'
          ? `; the run then pauses for you to read it (vigil_resume to build from it)`
          : '');
  const notes = [goalNote, launched.searchAttributesHint, launched.noHostWorkerHint, ...launched.warnings].filter(
    (n): n is string => n !== null,
  );
  const started = launched.started;
  return { started: StartedJsonSchema.parse(started), notes };
}
