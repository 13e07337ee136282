/**
 * Reads a prompt template file (knob `promptTemplate`) and checks it with the pure parser
 * (rules/prompt.ts). `vigil start` calls it to refuse a bad template before the run
 * starts; the agent activity calls it at every iteration (the file may be edited during a long
 * run) and falls back to the built-in template, saying why, when the file went bad meanwhile.
 */
import { readFileSync, statSync } from 'node:fs';
import { MAX_TEMPLATE_BYTES, parsePromptTemplate, type PromptTemplate } from '../rules/prompt.js';

export type TemplateRead = { ok: true; template: PromptTemplate } | { ok: false; errors: string[] };

export function readPromptTemplate(file: string): TemplateRead {
  let text: string;
  try {
    const st = statSync(file);
    if (!st.isFile()) return { ok: false, errors: [`${file} is not a regular file`] };
    if (st.size > MAX_TEMPLATE_BYTES)
      return { ok: false, errors: [`${file} is ${st.size} bytes; a template is at most ${MAX_TEMPLATE_BYTES}`] };
    text = new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(file));
  } catch (err) {
    const code = (err as { code?: string }).code;
    return {
      ok: false,
      errors: [
        code === 'ENOENT'
          ? `${file} does not exist`
          : code
            ? `cannot read ${file}: ${(err as Error).message}`
            : `${file} is not UTF-8 text`,
      ],
    };
  }
  const r = parsePromptTemplate(text);
  return r.ok ? r : { ok: false, errors: r.errors.map((e) => `${file}: ${e}`) };
}
