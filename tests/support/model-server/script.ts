/**
 * Owns what the local model server answers, whatever the wire format: a conversation reduced to
 * the few facts the script needs (`Conversation`), the Vigil role the prompt belongs to (read from
 * the prompt Vigil wrote: rules/*-prompt and checklist.ts), and the scripted reply
 * (`Reply`: text and tool calls) for it.
 *
 * The builder's session: first turn, a call of the CLI's own file-writing tool (or shell) that
 * creates `BUILDER_FILE`, then, once the tool's result is in the conversation, a final text that
 * carries the completion promise. A CLI with no tools (aider) gets a SEARCH/REPLACE block instead.
 * Reviewing roles answer in their role's format at once: `VERDICT: PASS` for code reviewers and
 * the review's devil's advocate, `VOTE: APPROVE` for council members and the council's devil's
 * advocate, a JSON array for checklist extraction, `ITEM <id>: PASS - ...` lines for the verifier.
 * A batched round's main agent (claude `--agents`) runs every declared agent with the Agent tool
 * (a council round's PRD checklist verifier first, and the members only when it fails none of the
 * items the prompt names; the devil's advocate last, only when every member approved or passed),
 * then returns their findings (and the verifier's items) through the StructuredOutput tool; each
 * declared agent, whose instructions (its system prompt) are Vigil's member prompt, answers as
 * that member.
 * Anything else (a CLI's side request: titles, summaries, quota checks) gets a short plain text.
 *
 * Pure: no I/O.
 */
import { z } from 'zod';

export const ROLES = [
  'iteration',
  'council',
  'council-devils-advocate',
  'reviewer',
  'review-devils-advocate',
  'checklist',
  'checklist-verifier',
  'council-batch',
  'review-batch',
  'side',
] as const;
export type ScriptRole = (typeof ROLES)[number];

export const BUILDER_FILE = 'real-cli-proof.txt';
export const COMPLETION_PROMISE = 'COMPLETION PROMISE FULFILLED';

export const ToolSchema = z.object({ name: z.string(), parameters: z.unknown().optional() });
export type Tool = z.infer<typeof ToolSchema>;

export interface Conversation {
  /** System instructions, joined. */
  system: string;
  /** Text of every user turn, in order (tool results excluded). */
  userTexts: string[];
  /** Tool results (function outputs) seen in the conversation. */
  toolResults: number;
  tools: Tool[];
  /** The model the CLI asked for. */
  model: string;
  /** The tool calls of earlier turns, and the text of each one's result, in order (only the Anthropic wire reads them). */
  toolExchanges?: { name: string; input: unknown; result: string | null }[];
}

export interface ToolCall {
  name: string;
  /** Arguments as an object (JSON tools) or a string (freeform tools such as codex's apply_patch). */
  input: Record<string, unknown> | string;
}

export interface Reply {
  role: ScriptRole;
  text: string;
  toolCalls: ToolCall[];
}

/** Markers of the prompts Vigil writes, most specific first. */
const ROLE_MARKERS: readonly [ScriptRole, RegExp][] = [
  // A batched round's main agent (rules/round-batch.ts): it runs the declared agents.
  ['council-batch', /^Completion council round \d+, iteration \d+: one call for (?:the PRD checklist verifier and )?\d+ council members/m],
  ['review-batch', /^Code review round \d+, iteration \d+: one call for \d+ code reviewers/m],
  ['checklist', /extract a checklist of its verifiable requirements/],
  ['checklist-verifier', /Verify each requirement below against the repository/],
  ['council-devils-advocate', /The completion council voted UNANIMOUSLY/],
  ['council', /You are member \d+ of \d+ of a completion council/],
  ['review-devils-advocate', /^Code review, round \d+, iteration \d+\.[\s\S]*Unanimous approval is suspicious/m],
  ['reviewer', /^Code review, round \d+, iteration \d+\./m],
];

/** A CLI's own side request (a title for the session, a summary): it quotes the prompt but is not the role's call. */
const SIDE_SYSTEM = /title generator|generate a (?:short |brief )?title|summari[sz]e (?:this|the) conversation/i;

/** The Vigil role a conversation belongs to: the first user turn holds Vigil's prompt. */
export function roleOf(c: Conversation): ScriptRole {
  if (SIDE_SYSTEM.test(c.system) && c.tools.length === 0) return 'side';
  const prompt = c.userTexts.join('\n');
  for (const [role, re] of ROLE_MARKERS) if (re.test(prompt)) return role;
  // An iteration prompt names the completion promise.
  if (prompt.includes(COMPLETION_PROMISE)) return 'iteration';
  // A declared agent of a batched round: Vigil's member prompt is its system prompt (its instructions).
  for (const [role, re] of ROLE_MARKERS) if (role !== 'council-batch' && role !== 'review-batch' && re.test(c.system)) return role;
  // Anything else is a CLI's own side request.
  return 'side';
}

/** The agents a batched round's prompt names (`- vigil-…` lines). */
function declaredAgents(c: Conversation): string[] {
  return [...c.userTexts.join('\n').matchAll(/^- (vigil-[a-z0-9-]+)$/gm)].map((m) => m[1] as string);
}

/**
 * A batched round's main agent: first every declared agent through the Agent tool (in the
 * foreground); once each has answered, the structured answer (the StructuredOutput tool) with
 * each agent's finding read from its report; then a short closing text.
 */
function batchReply(role: 'council-batch' | 'review-batch', c: Conversation): Reply {
  const prompt = c.userTexts.join('\n');
  // A council round that carries the PRD checklist verifier: that agent first, the members only when none of the items the prompt names fails.
  const verifier = /^(?:First run only the agent|Run the agent) (vigil-[a-z0-9-]+)/m.exec(prompt)?.[1] ?? null;
  const stopIf = /for any of these items: (.+?) — run no other agent/.exec(prompt)?.[1]?.split(', ') ?? [];
  const exchanges = c.toolExchanges ?? [];
  if (exchanges.some((x) => x.name === 'StructuredOutput'))
    return { role, text: 'Every agent answered; the findings are in the structured output.', toolCalls: [] };
  const answered = new Map<string, string>();
  for (const x of exchanges) {
    const agent = z.object({ subagent_type: z.string() }).safeParse(x.input);
    if (x.name === 'Agent' && agent.success && x.result !== null) answered.set(agent.data.subagent_type, x.result);
  }
  const run = (pending: string[]): Reply => ({
    role,
    text: `Running ${pending.length} agent(s).`,
    toolCalls: pending.map((n) => ({
      name: 'Agent',
      input: {
        subagent_type: n,
        description: `run ${n}`,
        prompt: 'Carry out your instructions on this repository and answer in the format they ask for.',
        run_in_background: false,
      },
    })),
  });
  let checklist: { agent: string; items: { id: string; verdict: string; evidence: string }[] } | null = null;
  let stopped = false;
  if (verifier !== null) {
    const report = answered.get(verifier);
    if (report === undefined) return run([verifier]);
    const items = [...report.matchAll(/ITEM\s+(\S+?)\s*:\s*(PASS|FAIL)\s*-?\s*(.*)/g)].map((m) => ({
      id: m[1] as string,
      verdict: m[2] as string,
      evidence: (m[3] as string).trim(),
    }));
    checklist = { agent: verifier, items };
    stopped = stopIf.some((id) => !items.some((it) => it.id === id && it.verdict === 'PASS'));
  }
  const members = stopped ? [] : declaredAgents(c);
  const pending = members.filter((n) => !answered.has(n));
  if (pending.length > 0) return run(pending);
  // The devil's advocate the prompt asks for after a unanimous round: run once the members all approved (passed).
  const followUp = /run the agent (vigil-[a-z0-9-]+) once, the same way, and add its finding too/.exec(prompt)?.[1] ?? null;
  const unanimous =
    members.length > 0 &&
    members.every((n) =>
      role === 'council-batch' ? /VOTE:\s*APPROVE/.test(answered.get(n) ?? '') : /VERDICT:\s*PASS/.test(answered.get(n) ?? ''),
    );
  if (followUp !== null && unanimous && !answered.has(followUp)) return run([followUp]);
  const names = followUp !== null && unanimous ? [...members, followUp] : members;
  const findings = names.map((n) => {
    const report = answered.get(n) ?? '';
    if (role === 'council-batch') {
      const vote = /VOTE:\s*(APPROVE|REJECT|CANNOT_VALIDATE)/.exec(report)?.[1] ?? 'CANNOT_VALIDATE';
      const reason = /REASON:\s*(.*)/.exec(report)?.[1]?.trim() ?? '';
      const issues = [...report.matchAll(/ISSUES:\s*(CRITICAL|HIGH|MEDIUM|LOW):\s*(.*)/g)].map((m) => ({
        severity: (m[1] as string).toLowerCase(),
        description: (m[2] as string).trim(),
      }));
      return { agent: n, vote, reason, issues };
    }
    const verdict = /VERDICT:\s*(PASS|FAIL)/.exec(report)?.[1] ?? 'FAIL';
    const found = [...report.matchAll(/\[(Critical|High|Medium|Low)\]\s*(.*)/g)].map((m) => ({
      severity: (m[1] as string).toLowerCase(),
      text: (m[2] as string).trim(),
    }));
    return { agent: n, verdict, findings: found };
  });
  return { role, text: '', toolCalls: [{ name: 'StructuredOutput', input: { ...(checklist ? { checklist } : {}), findings } }] };
}

/** A verifier's answer turned into a checklist not met: every item FAIL (the model server's `failChecklist`). */
export function unmetVerification(r: Reply): Reply {
  return { ...r, text: r.text.replace(/^ITEM (\S+?): PASS - .*$/gm, `ITEM $1: FAIL - ${BUILDER_FILE} does not show it yet`) };
}

/** The working directory the CLI told the model about, when it did. */
export function workingDirectoryOf(c: Conversation): string | null {
  const all = [c.system, ...c.userTexts].join('\n');
  const m =
    /<cwd>([^<\n]+)<\/cwd>/.exec(all) ??
    /[Ww]orking directory:\s*(\/[^\s<]+)/.exec(all) ??
    /working in the directory:?\s*(\/[^\s<]+)/.exec(all) ??
    /current working directory (?:is )?[`'"]?(\/[^\s`'"<]+)/i.exec(all);
  return m?.[1] ?? null;
}

const hasTool = (c: Conversation, name: string): boolean => c.tools.some((t) => t.name === name);

/** Property names of a JSON-schema tool's parameters. */
function paramNames(t: Tool | undefined): string[] {
  const props = z.object({ properties: z.record(z.string(), z.unknown()) }).safeParse(t?.parameters);
  return props.success ? Object.keys(props.data.properties) : [];
}

const CONTENT = "written by the builder through the CLI's own tool\n";

/** The builder's first move: the CLI's write tool when it has one, else its shell. */
export function builderToolCall(c: Conversation): ToolCall | null {
  const cwd = workingDirectoryOf(c);
  const abs = (p: string): string => (cwd ? `${cwd.replace(/\/$/, '')}/${p}` : p);
  for (const name of ['Write', 'write_file', 'write']) {
    const tool = c.tools.find((t) => t.name === name);
    if (!tool) continue;
    const params = paramNames(tool);
    const pathKey = params.find((p) => /^(file_?path|path|absolute_path)$/i.test(p)) ?? 'file_path';
    return { name, input: { [pathKey]: abs(BUILDER_FILE), content: CONTENT } };
  }
  if (hasTool(c, 'apply_patch')) {
    const patch = `*** Begin Patch\n*** Add File: ${BUILDER_FILE}\n+${CONTENT.trimEnd()}\n*** End Patch\n`;
    const tool = c.tools.find((t) => t.name === 'apply_patch');
    return { name: 'apply_patch', input: paramNames(tool).includes('input') ? { input: patch } : patch };
  }
  const script = `printf '%s\\n' "${CONTENT.trimEnd().replace(/'/g, '')}" > ${BUILDER_FILE}`;
  if (hasTool(c, 'shell')) return { name: 'shell', input: { command: ['bash', '-lc', script] } };
  if (hasTool(c, 'exec_command')) return { name: 'exec_command', input: { cmd: script } };
  for (const name of ['Bash', 'bash', 'run_shell_command'])
    if (hasTool(c, name)) return { name, input: { command: script, description: 'write the proof file' } };
  return null;
}

const CHECKLIST = [
  { id: 'REQ-1', title: `The file ${BUILDER_FILE} exists`, priority: 'critical', verify: `ls ${BUILDER_FILE}` },
  { id: 'REQ-2', title: 'The README is kept', priority: 'medium', verify: 'ls README.md' },
];

export function reply(c: Conversation): Reply {
  const role = roleOf(c);
  switch (role) {
    case 'iteration': {
      if (c.toolResults > 0) return { role, text: `I created ${BUILDER_FILE}. ${COMPLETION_PROMISE}`, toolCalls: [] };
      if (c.tools.length === 0 || /SEARCH\/REPLACE/.test(c.system)) {
        // aider: edits are fenced SEARCH/REPLACE blocks in the answer, applied by aider itself.
        const block = [BUILDER_FILE, '```', '<<<<<<< SEARCH', '=======', CONTENT.trimEnd(), '>>>>>>> REPLACE', '```'].join('\n');
        return { role, text: `I will create the file.\n\n${block}\n\n${COMPLETION_PROMISE}`, toolCalls: [] };
      }
      const call = builderToolCall(c);
      return call
        ? { role, text: 'Creating the file.', toolCalls: [call] }
        : { role, text: `No tool to write with. ${COMPLETION_PROMISE}`, toolCalls: [] };
    }
    case 'reviewer':
    case 'review-devils-advocate':
      return { role, text: '- [Low] the proof file could say more (real-cli-proof.txt:1)\nVERDICT: PASS', toolCalls: [] };
    case 'council':
    case 'council-devils-advocate':
      return { role, text: `VOTE: APPROVE\nREASON: ${BUILDER_FILE} exists as required\nISSUES: LOW: nothing blocking`, toolCalls: [] };
    case 'checklist':
      return { role, text: JSON.stringify(CHECKLIST), toolCalls: [] };
    case 'checklist-verifier': {
      // Its items are in the prompt: the first user turn of a call of its own, the instructions (system prompt) of a declared agent.
      const ids = [
        ...new Set(
          [...[...c.userTexts, c.system].join('\n').matchAll(/^- ([A-Za-z0-9][A-Za-z0-9_.-]*) \((?:critical|high|medium|low)\):/gm)].map(
            (m) => m[1] as string,
          ),
        ),
      ];
      return { role, text: ids.map((id) => `ITEM ${id}: PASS - checked ${BUILDER_FILE} in the working tree`).join('\n'), toolCalls: [] };
    }
    case 'council-batch':
    case 'review-batch':
      return batchReply(role, c);
    case 'side':
      return { role, text: 'Real CLI proof', toolCalls: [] };
  }
}

/** Deterministic token counts: about four characters a token, at least one. */
export function tokensOf(s: string): number {
  return Math.max(1, Math.ceil(s.length / 4));
}
