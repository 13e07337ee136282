/**
 * Who may use the operator console (cli/console/server.ts), as Hono middleware:
 *
 * - **Loopback by default.** Bound to 127.0.0.1 (or ::1, localhost), the console answers only
 *   requests whose Host header names a loopback address with its port: a web page elsewhere that
 *   re-binds its own name to 127.0.0.1 (DNS rebinding) sends its own name and is refused.
 * - **A token for any other bind address.** The console's bearer token is made once (32 random
 *   bytes) and kept in `$VIGIL_HOME/console-token` (mode 0600); the command prints it once, when it
 *   is made. A browser opens `http://HOST:PORT/?token=…` once: the console sets an HttpOnly,
 *   SameSite=Strict cookie and redirects to the same page without the token; a script sends
 *   `Authorization: Bearer …`. Anything else gets 401 and what to do.
 * - **CSRF-safe actions.** Every POST must be a form (urlencoded or multipart: what htmx and a
 *   plain form send) and pass Hono's `csrf()` middleware (Origin or Sec-Fetch-Site same-origin),
 *   so another site cannot make a signed-in browser send a message to a run.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { csrf } from 'hono/csrf';

export const TOKEN_FILE = 'console-token';
export const TOKEN_COOKIE = 'vigil_console';

/** True for an address that only this machine reaches. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The console's token: read from `$VIGIL_HOME/console-token`, or made and kept there now (`created`). */
export function consoleToken(home: string): { token: string; file: string; created: boolean } {
  const file = path.join(home, TOKEN_FILE);
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    if (token.length >= 32) return { token, file, created: false };
  }
  mkdirSync(home, { recursive: true });
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { token, file, created: true };
}

/** Constant-time comparison (of digests, so lengths never leak). */
export function sameToken(given: string | undefined | null, token: string): boolean {
  if (!given) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

export interface AccessOptions {
  /** The address the console is bound to. */
  host: string;
  /** The port it listens on (for the Host check). */
  port: () => number;
  /** Required on a non-loopback bind; null on loopback. */
  token: string | null;
  /** Where the token is kept, for the 401 message. */
  tokenFile: string;
}

const FORM = /^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i;

/** The middleware of every route: Host check on loopback, token elsewhere, forms and same-origin for POST. */
export function accessGuard(opts: AccessOptions): MiddlewareHandler[] {
  const loopbackHosts = (): Set<string> => {
    const p = opts.port();
    return new Set([`127.0.0.1:${p}`, `localhost:${p}`, `[::1]:${p}`, `${opts.host}:${p}`.toLowerCase()]);
  };
  const who: MiddlewareHandler = async (c, next) => {
    if (opts.token === null) {
      const hostHeader = (c.req.header('host') ?? '').toLowerCase();
      if (!loopbackHosts().has(hostHeader)) {
        return c.text(
          `refused: this console answers only to a loopback address (Host "${hostHeader}"); open http://127.0.0.1:${opts.port()}/`,
          403,
        );
      }
      return next();
    }
    const auth = c.req.header('authorization');
    const bearer = auth && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, '').trim() : null;
    if (sameToken(bearer, opts.token) || sameToken(getCookie(c, TOKEN_COOKIE), opts.token)) return next();
    const url = new URL(c.req.url);
    const given = url.searchParams.get('token');
    if (c.req.method === 'GET' && sameToken(given, opts.token)) {
      setCookie(c, TOKEN_COOKIE, opts.token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      url.searchParams.delete('token');
      return c.redirect(`${url.pathname}${url.search}`, 303);
    }
    return c.text(
      `unauthorised: this console listens on ${opts.host} and needs its token. Open the URL \`vigil console\` printed when the token was made ` +
        `(http://HOST:PORT/?token=…), or send "Authorization: Bearer TOKEN"; the token is in ${opts.tokenFile} on the console's machine.`,
      401,
    );
  };
  const forms: MiddlewareHandler = async (c, next) => {
    if (c.req.method !== 'POST') return next();
    if (!FORM.test(c.req.header('content-type') ?? ''))
      return c.text('refused: actions are sent as forms (application/x-www-form-urlencoded or multipart/form-data)', 415);
    return next();
  };
  // Origin (or Sec-Fetch-Site) must be this console's own for a form POST.
  return [who, forms, csrf()];
}
