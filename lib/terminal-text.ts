/**
 * Agent text made safe for a terminal (`vigil logs`, `vigil handoff`, the lines of `vigil watch`):
 * what an agent writes can hold escape sequences (ANSI CSI `ESC [`, OSC `ESC ]` — window titles,
 * hyperlinks, clipboard writes), a carriage return or backspaces that overprint a line, or C1
 * controls (U+0080–U+009F, `U+009B` is a one-character CSI) — enough to clear the screen or print
 * a fake "finished: completed" line. Every such character is shown visibly instead: C0 controls as
 * their Unicode control pictures (`ESC [2J` prints as `␛[2J`, CR as `␍`), DEL as `␡`, C1 controls
 * as `<U+009B>`. Shown, not stripped: a person reading a log sees that the agent emitted a
 * sequence and what it was (evidence, not a silent edit), and nothing is lost from the text;
 * a library such as `strip-ansi` removes only the sequences it recognises and leaves a bare CR,
 * a backspace or a C1 CSI to do their work, so one small function does the whole job here.
 * Newline and tab pass through in log text; a CRLF line ending stays a newline. In a one-line
 * message (`neutraliseLine`) a newline is shown as `␊` too, so a reason cannot start a line of its
 * own.
 */

/** C0 controls but newline (0x0a) and tab (0x09), DEL, and the C1 controls: matching them is the point. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// eslint-disable-next-line no-control-regex
const CONTROL_OR_NEWLINE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g;

function picture(c: string): string {
  const code = c.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** Text with lines (a log, a handoff): every control shown visibly but newline and tab; CRLF read as a newline. */
export function neutraliseText(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(CONTROL, picture);
}

/** One line of a message: as `neutraliseText`, and a newline (or CRLF) shown as `␊` too. */
export function neutraliseLine(line: string): string {
  return line.replace(/\r\n/g, '\n').replace(CONTROL_OR_NEWLINE, picture);
}
