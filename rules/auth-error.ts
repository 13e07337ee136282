/**
 * Authentication errors of a failed agent call (spec §1.8's `auth_error` class). Owns the auth
 * message forms; the reading itself is `findProviderEvidence` (runner-lines.ts), shared with the
 * rate-limit detector: the provider's structured verdict wins when it printed one, otherwise the
 * last 40 lines are read without test-runner lines.
 *
 * §1.8 matches `(http[ /]?40[13]|status[: ]+40[13]|unauthorized|invalid api key|
 * authentication[_ ]error|401 )` anywhere in a line; here a line counts only when the status sits
 * in an HTTP/status/error context, so prose ("the 403 page now renders", "unauthorized users get a
 * 401") does not:
 *   - every provider: `HTTP 401`, `HTTP/1.1 403`, `status: 401` / `status=403` / `status code 403`
 *     (a bare `status 401` is prose), `"code": 401`, `401 Unauthorized`, `403 Forbidden`,
 *     `Error: ... 401` / `API Error: 403 ...` (an error line carrying the status),
 *     `Unauthorized` as the whole message or after `Error:`,
 *     `invalid api key` / `invalid_api_key`, `authentication_error` / `authentication error`;
 *   - claude: `Invalid API key · Please run /login`, `OAuth token has expired`;
 *   - codex: `Not logged in` as the message (`Error: Not logged in ...`);
 *   - gemini: `API key not valid`, `PERMISSION_DENIED`, `UNAUTHENTICATED`, and a structured error
 *     with code 401 or 403.
 * Without a provider (or for `command`) every form counts.
 */
import { familiesOf, findProviderEvidence, type CliFamily, type Provider, type ProviderRecord } from './runner-lines.js';

export type { Provider } from './runner-lines.js';

export interface AuthErrorVerdict {
  kind: 'auth';
  /** The line (or record text) that matched, trimmed to 300 characters. */
  evidence: string;
}

const COMMON_FORMS: readonly RegExp[] = [
  /\bhttp(?:\/\d(?:\.\d)?)?[ /]?40[13]\b/i, // HTTP 401, HTTP/1.1 403
  /\bstatus(?:[ _]?code)?["']?\s*[:=]\s*40[13]\b|\bstatus code 40[13]\b/i, // status: 401, "status_code"=403
  /"code"\s*:\s*40[13]\b/, // JSON error bodies
  /\b401 unauthorized\b|\b403 forbidden\b/i,
  /^\W*(?:\w+ )?error:.*\b40[13]\b/i, // API Error: 401 {...}
  /^\W*(?:error:\s*unauthorized\b|unauthorized\W*$)/i,
  /\binvalid[ _]api[ _]key\b/i,
  /\bauthentication[_ ]error\b/i,
];

const FAMILY_FORMS: Record<CliFamily, readonly RegExp[]> = {
  claude: [/\boauth token (?:has )?expired\b/i, /please run \/login\b/i],
  codex: [/^\W*(?:error:\s*)?not logged in\b/i],
  gemini: [/\bapi key not valid\b/i, /\bPERMISSION_DENIED\b/, /\bUNAUTHENTICATED\b/],
};

function formsOf(provider: Provider | undefined): readonly RegExp[] {
  return [...COMMON_FORMS, ...familiesOf(provider).flatMap((f) => FAMILY_FORMS[f])];
}

const isAuthRecord = (r: ProviderRecord): boolean => r.code === 401 || r.code === 403;

const EVIDENCE_CHARS = 300;

export function detectAuthError(text: string, provider?: Provider): AuthErrorVerdict | null {
  const forms = formsOf(provider);
  const found = findProviderEvidence(text, provider, (line) => forms.some((re) => re.test(line)), isAuthRecord);
  return found === null ? null : { kind: 'auth', evidence: found.evidence.trim().slice(0, EVIDENCE_CHARS) };
}
