/**
 * Owns the action of `vigil start PRD|--issue FILE [--repo DIR] [--id ID [--replace]] [--tasks FILE]
 * [--wait] [--json]`: reads the PRD (or an issue and its task list), the repository and the knobs, refuses what the run would ignore or
 * hide (cli/start-checks.ts, cli/run-id.ts), starts the run (cli/runs.ts), says where it runs and
 * what will not work as one might expect (warnings on stderr, once each), and with --wait follows
 * it to its end. The run starts through the path MCP's vigil_start shares (cli/start-run.ts). The
 * options are declared in cli/commands/start.ts.
 */
import type { ResolvedKnobs } from './config.js';
import { runUrl, searchAttributeHint, withClient, type Endpoint } from './connection.js';
import { out } from './steer-commands.js';

export interface StartDeps {
  /** The knobs a start with these flags resolves (flags, --set, --config, VIGIL_*, defaults). */
  resolve: (o: Record<string, unknown>) => Promise<ResolvedKnobs>;
  endpoint: () => Endpoint;
  validateId: (id: string) => string;
}

const jsonLine = (value: unknown): void => out(JSON.stringify(value));

/** `vigil start`: sets process.exitCode with --wait (the run's outcome code); throws a CliError for bad input. */
export async function startCommand(prdFile: string | undefined, o: Record<string, unknown>, deps: StartDeps): Promise<void> {
  const issueFile = typeof o.issue === 'string' ? o.issue : undefined;
  const [
    { readPrd, readChecklist, readIssue, readTasks, prdOnHost, checkAcceptanceFolder, goalPrd, goalTitle },
    { checkRepo, defaultRunId },
    { checkPromptTemplate, requireAgentCommand },
    { followRun },
    { pathOnHost, resolveHost, thisHost },
    { sdkRunApi },
    { checkAcceptanceSource, checkTasks, prdSource, goalSource, CLI_NAMES },
    { knobsGivenOf },
    { launchRun },
  ] = await Promise.all([
    import('./prd.js'),
    import('./runs.js'),
    import('./config.js'),
    import('./follow.js'),
    import('./hosts.js'),
    import('./sdk-run-api.js'),
    import('./start-checks.js'),
    import('../rules/complexity.js'),
    import('./start-run.js'),
  ]);
  const host = resolveHost(typeof o.host === 'string' ? o.host : undefined);
  // The repository and the PRD are on the run's host: checked here only when that is this machine.
  const remote = host !== thisHost();
  // --goal: no PRD yet; the discovery call writes it in the run folder as the run starts (cli/prd.ts goalPrd).
  const goal = goalSource(o.goal, { prdFile, issueFile, tasks: o.tasks !== undefined, attempts: o.attempts !== undefined, remote });
  const source =
    goal === null ? prdSource(prdFile, issueFile, typeof o.checklist === 'string' ? o.checklist : undefined, remote, CLI_NAMES) : null;
  const issue = source?.kind === 'issue' ? readIssue(source.file) : null;
  const repoPath = remote ? pathOnHost('--repo', String(o.repo), host) : checkRepo(String(o.repo));
  const givenId = typeof o.id === 'string' ? deps.validateId(o.id) : null;
  const goalId = goal !== null ? (givenId ?? defaultRunId({ path: goalTitle(goal).replace(/[/.]/g, ' '), title: '', bytes: 0 })) : null;
  const prd =
    goal !== null && goalId !== null
      ? goalPrd(goal, repoPath, goalId)
      : issue
        ? issue.prd
        : remote
          ? prdOnHost(pathOnHost('the PRD', String(source?.file), host))
          : readPrd(String(source?.file));
  const resolvedKnobs = checkPromptTemplate(await deps.resolve(o), process.cwd());
  requireAgentCommand(resolvedKnobs);
  // The acceptance folder (knob acceptanceTests): checked here, where the person can fix it (exit 2).
  const acceptance = typeof o.acceptance === 'string' ? o.acceptance : resolvedKnobs.knobs.acceptanceTests;
  checkAcceptanceSource({ ...resolvedKnobs.knobs, acceptanceTests: acceptance });
  if (acceptance && !remote) resolvedKnobs.knobs.acceptanceTests = await checkAcceptanceFolder(acceptance, repoPath);
  else if (acceptance) resolvedKnobs.knobs.acceptanceTests = acceptance;
  const checklist = typeof o.checklist === 'string' ? readChecklist(o.checklist) : (issue?.checklist ?? undefined);
  const tasks = typeof o.tasks === 'string' ? readTasks(o.tasks) : undefined;
  checkTasks(resolvedKnobs.knobs, tasks, typeof o.tasks === 'string' ? o.tasks : undefined);
  const workflowId = goalId ?? givenId ?? defaultRunId(prd);
  const ep = deps.endpoint();
  // --attempts K: K runs of this PRD, one picked (cli/attempts.ts); the multiplier said before anything starts.
  const { attemptOptions, attemptsNotice, startAttempts } = await import('./attempts.js');
  const attempts = attemptOptions(o, resolvedKnobs.knobs);
  if (attempts) process.stderr.write(`vigil: ${attemptsNotice(attempts, resolvedKnobs.knobs)}\n`);
  await withClient(ep, async (client, connection) => {
    if (attempts) {
      const { runInputFor } = await import('./runs.js');
      const run = {
        ...runInputFor({ prd, repoPath, knobs: resolvedKnobs.knobs, knobsGiven: knobsGivenOf(resolvedKnobs), workflowId, host, checklist }),
        searchAttributes: false,
      };
      const sa = await startAttempts(client, connection, ep, { workflowId, replace: o.replace === true, run, attempts });
      if (sa.missing.length) process.stderr.write(`${searchAttributeHint(sa.missing, ep, sa.refusal)}\n`);
      // --json and --wait as for any run: a started line, then the run followed to its outcome's exit code.
      const { afterAttemptsStart } = await import('./attempts.js');
      const waited = await afterAttemptsStart(client, {
        workflowId,
        k: attempts.attempts,
        historyUrl: runUrl(ep, workflowId),
        json: o.json === true,
        wait: o.wait === true,
        print: out,
      });
      if (waited !== null) process.exitCode = waited;
      return;
    }
    // The start path MCP's vigil_start shares (cli/start-run.ts).
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
      ...(tasks ? { tasks } : {}),
      ...(goal !== null ? { goal } : {}),
    });
    if (launched.searchAttributesHint) process.stderr.write(`${launched.searchAttributesHint}\n`);
    if (o.json) out(JSON.stringify(launched.started));
    else {
      out(`started run ${workflowId}`);
      out(`  PRD        : ${prd.path} ("${prd.title}")`);
      out(`  repository : ${repoPath}`);
      out(
        `  host       : ${host} (task queue ${launched.started.hostTaskQueue})${remote ? '; the PRD and repository are there, unchecked from here' : ''}`,
      );
    }
    if (launched.noHostWorkerHint) process.stderr.write(`vigil: ${launched.noHostWorkerHint}\n`);
    if (goal !== null && !o.json)
      out(
        '  goal       : no PRD yet: a discovery call analyses the repository and writes it at the path above first' +
          (resolvedKnobs.knobs.autonomyMode === 'supervised'
            ? '; the run then pauses for you to read it (vigil resume to build from it)'
            : ''),
      );
    if (issue && !o.json) {
      const items = issue.checklist?.length ?? 0;
      out(
        items > 0
          ? `  checklist  : ${items} item(s) from the issue's task list`
          : '  checklist  : the issue has no task list (- [ ] ...): an agent extracts one from its text',
      );
    }
    for (const w of launched.warnings) process.stderr.write(`vigil: warning: ${w}\n`);
    if (!o.json) {
      out(`  history    : ${runUrl(ep, workflowId)}`);
      out(`  follow     : vigil watch ${workflowId}`);
    }
    if (o.wait) {
      // Ctrl+C pauses the run, a second stops it (cli/ctrl-c.ts); the lines that follow show it.
      const { steerOnCtrlC } = await import('./ctrl-c.js');
      const release = steerOnCtrlC(sdkRunApi(client), ep, workflowId);
      try {
        const r = await followRun(client, workflowId, {
          until: 'terminal',
          ...(o.json ? { onEvent: jsonLine } : { onLine: (l: string) => out(`  ${l}`) }),
        });
        process.exitCode = r.exitCode;
      } finally {
        release();
      }
    }
  });
}
