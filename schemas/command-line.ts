/**
 * A command line split into argv words, as a knob's value (agentCommand, ...) is read from a
 * string. Moved out of schemas/knobs.ts, which re-exports it.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
/**
 * Splits a command line into argv words; honours single and double quotes. No shell is involved.
 * Backslash follows POSIX sh: outside quotes it escapes any character; inside double quotes only
 * `"`, `\\`, `$` and backtick (elsewhere it stays literal, so `"C:\\dir"` keeps its backslash);
 * inside single quotes nothing. Backslash-newline is a line continuation and disappears.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    const next = line[i + 1];
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && next === '\n') i++;
      else if (ch === '\\' && quote === '"' && next !== undefined && '"\\$`'.includes(next)) current += line[++i];
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && next === '\n') {
      i++;
    } else if (ch === '\\' && next !== undefined) {
      current += line[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unterminated ${quote} quote in command line`);
  if (inWord) words.push(current);
  return words;
}
