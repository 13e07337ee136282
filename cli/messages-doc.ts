/**
 * docs/messages.md's table of messages, made from the message table (schemas/message-verbs.ts) and
 * the payload schemas (schemas/messages.ts): `npm run docs:messages` writes it between its two
 * markers; tests/unit/message-verbs.test.ts checks the committed file equals what this makes.
 * Run from dist/ after a whole build (a bare tsc would leave the quick path's bundle older than its
 * code: bin/vigil.js then skips it), not shipped.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { MESSAGE_NAMES, MESSAGE_VERBS, TOOL_SIGNALS, type MessageVerb } from '../schemas/message-verbs.js';
import { MESSAGE_SCHEMAS } from '../schemas/messages.js';

export const BEGIN = '<!-- the messages: made by `npm run docs:messages` from schemas/message-verbs.ts; do not edit by hand -->';
export const END = '<!-- end of the messages -->';

/** `{reason?, by?}` from a payload's object schema: each field, `?` when optional. */
export function payloadFields(schema: z.ZodType): string {
  const shape = (schema as unknown as { shape: Record<string, z.ZodType> }).shape;
  return `{${Object.entries(shape)
    .map(([k, v]) => `${k}${v.safeParse(undefined).success ? '?' : ''}`)
    .join(', ')}}`;
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The generated section: one row per message (and the signals tools send), as Markdown. */
export function messagesSection(): string {
  const rows = MESSAGE_NAMES.map((name) => {
    const row: MessageVerb = MESSAGE_VERBS[name];
    const surfaces = `\`vigil ${row.cli}\`, \`${row.mcp.tool}\`, console: ${row.console.map((a) => `\`${a}\``).join(', ')}`;
    return `| \`${name}\` | \`${payloadFields(MESSAGE_SCHEMAS[name])}\` | ${surfaces} | ${cell(row.effect)} |`;
  });
  const signals = Object.entries(TOOL_SIGNALS).map(([name, s]) => `| signal \`${name}\` | ${cell(s.payload)} | — | ${cell(s.effect)} |`);
  return [BEGIN, '', '| message | payload | sent by | effect |', '|---|---|---|---|', ...rows, ...signals, '', END].join('\n');
}

/** `doc` with its generated section replaced by the current one. */
export function withMessagesSection(doc: string): string {
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`docs/messages.md: the markers of the generated section are missing (${BEGIN} ... ${END})`);
  return doc.slice(0, begin) + messagesSection() + doc.slice(end + END.length);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/messages.md');
  const before = readFileSync(file, 'utf8');
  const after = withMessagesSection(before);
  if (after !== before) writeFileSync(file, after);
  process.stdout.write(`${after !== before ? 'wrote' : 'unchanged:'} ${path.relative(process.cwd(), file)}\n`);
}
