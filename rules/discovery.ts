/**
 * A run without a PRD (`vigil start --goal "…"`): the discovery call, the seed's "codebase analysis
 * mode". Before anything else the run's builder agent is asked, in the sandbox and with the
 * repository read-only, to analyse the codebase (languages, layout, how its tests run, what of the
 * goal already exists) and to write a PRD for the goal into the file `VIGIL_PRD_FILE` names; the
 * activity keeps it in the run folder and the run goes on from it, as from a PRD a person wrote.
 * What it is asked (`discoveryPrompt`), whether what it wrote can be a PRD (`discoveredPrdProblem`),
 * and what the person is told (`discoveredPrdNote`: in a supervised run, the reason of the pause
 * that shows it before any work).
 *
 * Pure: no clocks, randomness, environment or I/O.
 */

/** The longest PRD a discovery call may write (as a person's PRD file: 1 MiB). */
export const MAX_DISCOVERED_PRD_BYTES = 1024 * 1024;

/** The discovery call's prompt: the goal, the codebase analysis, the PRD's shape. The activity appends the map of the repository. */
export function discoveryPrompt(p: { goal: string; maxItems: number }): string {
  return [
    'You are the discovery agent of a Vigil run. The run has a goal but no PRD (product requirements document) yet:',
    'write one, from the goal below and from what the repository holds. The builder works from your PRD, and the run is',
    'done when every requirement in it is met and verified.',
    '',
    '## The goal',
    '',
    p.goal.trim(),
    '',
    '## First, analyse the codebase (read only: the repository is read-only for this call; change nothing)',
    '',
    '- its languages, frameworks and dependencies (the manifest files: package.json, pyproject.toml, go.mod, Cargo.toml, ...);',
    '- its layout: where the source, the tests, the configuration and the documentation are;',
    '- how its tests run (the exact command) and how it builds;',
    '- what already exists of the goal, and what is missing.',
    '',
    '## Then write the PRD',
    '',
    'Write it in Markdown to the file named by the environment variable VIGIL_PRD_FILE (the one file you may write;',
    'it is outside the repository). Its shape:',
    '',
    '- a first line `# <a short title for the goal>`;',
    '- `## Goal`: the goal in your own words, one paragraph;',
    '- `## What exists`: the analysis above in a few lines (languages, layout, the test command, what of the goal is there);',
    '- `## Requirements`: a task list, one `- [ ] <requirement> — <how to verify it: a test, a command>` line per requirement, ' +
      `at most ${p.maxItems}, each one observable and testable, nothing the goal does not ask for;`,
    '- `## Out of scope`: what the goal does not ask for and the builder should leave alone.',
    '',
    'Answer with a one-line summary once the file is written. Write nothing else, anywhere.',
  ].join('\n');
}

/** Why a discovered PRD's text cannot be the run's PRD, or null when it can. */
export function discoveredPrdProblem(text: string, bytes: number): string | null {
  if (bytes > MAX_DISCOVERED_PRD_BYTES) return `it is too large (${bytes} bytes, at most ${MAX_DISCOVERED_PRD_BYTES})`;
  if (text.includes('\0')) return 'it is not text (it contains NUL bytes)';
  if (text.includes('\uFFFD')) return 'it is not UTF-8 text';
  if (text.trim().length === 0) return 'it is empty';
  return null;
}

/** What the person reads once the discovery call wrote the PRD (supervised: the pause's reason, until `vigil resume`). */
export function discoveredPrdNote(p: { runId: string; prdPath: string; title: string; bytes: number; supervised: boolean }): string {
  const head = `The discovery agent wrote the run's PRD from its goal: ${p.prdPath} ("${p.title}", ${p.bytes} bytes).`;
  return p.supervised
    ? `${head} Read it before the builder starts: the run is done when it is. Edit the file if it says too much or too little, ` +
        `or \`vigil input ${p.runId} "…"\` to tell the builder more; then \`vigil resume ${p.runId}\` to build from it ` +
        `(its checklist is taken from the file as it is then), or \`vigil stop ${p.runId}\`.`
    : `${head} The run is not supervised, so the builder starts from it now; read it there to know what done means.`;
}

/** First Markdown heading, else the first non-empty line, at most 200 characters (a PRD's title, shown in the Temporal UI). */
export function prdTitle(text: string): string {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const heading = lines.find((l) => /^#{1,6}\s+\S/.test(l));
  const first = heading ? heading.replace(/^#{1,6}\s+/, '') : (lines.find((l) => l.trim()) ?? '');
  const t = first.replace(/\s+#*\s*$/, '').trim();
  return t.length > 200 ? `${t.slice(0, 199)}…` : t;
}
