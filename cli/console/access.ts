/**
 * Who may use the operator console (cli/console/server.ts), as Hono middleware — and the access
 * tokens it shares with `vigil mcp --http` (cli/mcp-http.ts):
 *
 * - **Loopback by default.** Bound to 127.0.0.1 (or ::1, localhost), the console answers only
 *   requests whose Host header names a loopback address with its port: a web page elsewhere that
 *   re-binds its own name to 127.0.0.1 (DNS rebinding) sends its own name and is refused.
 * - **A token for any other bind address.** The console's bearer token is made once (32 random
 *   bytes) and kept in `$VIGIL_HOME/console-token` (mode 0600); the command prints it once, when it
 *   is made. A browser opens `http://HOST:PORT/?token=…` once: the console sets an HttpOnly,
 *   SameSite=Strict cookie and redirects to the same page (a path of its own, never another
 *   site) without the token; a script sends `Authorization: Bearer …`. Anything else gets 401 and
 *   what to do.
 * - **Nothing for another site.** A request a browser marks as coming from another site
 *   (`Sec-Fetch-Site: cross-site` or `same-site`, or an `Origin` that is not the console's) is
 *   refused (403), GETs included: another page cannot read, poll or stream the console through
 *   its visitor's browser. A link followed from another site gets a page with a link to click
 *   instead. A request without either header (a script, curl) is not a browser's cross-site one.
 * - **CSRF-safe actions.** Every POST must be a form (urlencoded or multipart: what htmx and a
 *   plain form send) and pass Hono's `csrf()` middleware (Origin or Sec-Fetch-Site same-origin),
 *   so another site cannot make a signed-in browser send a message to a run. A script that sends
 *   the bearer token needs no Origin: a browser cannot attach that header to another site's
 *   request without a CORS preflight, which the console never grants.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, closeSync, constants, lstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { csrf } from 'hono/csrf';
import { html } from 'hono/html';
import { readRegularFile, writePrivateFile } from '../../lib/safe-files.js';

export const TOKEN_FILE = 'console-token';
export const TOKEN_COOKIE = 'vigil_console';

/** True for an address that only this machine reaches. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

export interface AccessToken {
  token: string;
  file: string;
  /** Made now (then the caller may show it once). */
  created: boolean;
}

/**
 * A token kept in `$VIGIL_HOME/<name>`: read, or made now (32 random bytes, base64url). The file
 * is private (0600, its folder 0700 when made here), never read or written through a symbolic
 * link, and made exclusively, so two processes starting together keep the same token. A file
 * others could read is made private again.
 */
export function accessToken(home: string, name: string): AccessToken {
  const file = path.join(home, name);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 3; attempt++) {
    const got = readRegularFile(file, 4096);
    if (got && !got.ok) throw new Error(`${got.problem} (${file}): remove it, and a new token is made`);
    if (got?.ok) {
      const token = got.text.trim();
      if (token.length >= 32 && /^[A-Za-z0-9_-]+$/.test(token)) {
        if ((lstatSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
        return { token, file, created: false };
      }
      // Too short or not a token: replaced by a new one.
      const fresh = randomBytes(32).toString('base64url');
      writePrivateFile(file, `${fresh}\n`);
      return { token: fresh, file, created: true };
    }
    const token = randomBytes(32).toString('base64url');
    let fd: number;
    try {
      fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue; // made by another process meanwhile: read it
      throw err;
    }
    try {
      writeSync(fd, `${token}\n`);
    } finally {
      closeSync(fd);
    }
    return { token, file, created: true };
  }
  throw new Error(`${file} keeps changing: cannot read the token`);
}

/** The console's token: read from `$VIGIL_HOME/console-token`, or made and kept there now (`created`). */
export function consoleToken(home: string): AccessToken {
  return accessToken(home, TOKEN_FILE);
}

/** Constant-time comparison (of digests, so lengths never leak). */
export function sameToken(given: string | undefined | null, token: string): boolean {
  if (!given) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer …` header, or null. */
export function bearerOf(header: string | undefined | null): string | null {
  return header && /^Bearer\s+/i.test(header) ? header.replace(/^Bearer\s+/i, '').trim() : null;
}

/**
 * Whether a browser marks this request as another site's: `Sec-Fetch-Site` other than
 * same-origin or none (a person's own navigation), or, from a browser that does not send it, an
 * `Origin` whose host is not the one the request was sent to (compared without the scheme, so a
 * TLS proxy in front keeps working). Neither header: a script, not a page.
 */
export function fromAnotherSite(headers: { site?: string | undefined; origin?: string | undefined; host?: string | undefined }): boolean {
  const site = headers.site?.trim().toLowerCase();
  if (site) return site !== 'same-origin' && site !== 'none';
  const origin = headers.origin?.trim();
  if (!origin) return false;
  try {
    return new URL(origin).host !== (headers.host ?? '').toLowerCase();
  } catch {
    return true; // `null` (a sandboxed frame, a redirect across sites) or garbage
  }
}

/**
 * A path of this console to send a browser to: `pathname` + `search` when that is a path here
 * (starts with one `/`), else `/`. Never `//other.site/…` or `/\other.site`, which a browser
 * takes for another site.
 */
export function localPath(pathname: string, search = ''): string {
  if (!pathname.startsWith('/') || pathname.startsWith('//') || pathname.startsWith('/\\')) return '/';
  const target = `${pathname}${search}`;
  const base = 'http://console.invalid';
  return new URL(target, base).origin === base ? target : '/';
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

/** The answer to a request from another site: 403, and for a link a person followed, a link to click here. */
function anotherSite(c: Context): Response | Promise<Response> {
  const navigation = c.req.method === 'GET' && c.req.header('sec-fetch-mode') === 'navigate';
  if (!navigation) return c.text('refused: this console does not answer requests from other sites', 403);
  const url = new URL(c.req.url);
  url.searchParams.delete('token');
  const here = localPath(url.pathname, url.search);
  return c.html(
    html`<!doctype html><title>Vigil console</title>
      <p>This console does not answer pages of other sites. To open it, follow this link: <a href="${here}">${here}</a></p>`,
    403,
  );
}

/** The middleware of every route: another site refused, Host check on loopback, token elsewhere, forms and same-origin for POST. */
export function accessGuard(opts: AccessOptions): MiddlewareHandler[] {
  const loopbackHosts = (): Set<string> => {
    const p = opts.port();
    return new Set([`127.0.0.1:${p}`, `localhost:${p}`, `[::1]:${p}`, `${opts.host}:${p}`.toLowerCase()]);
  };
  const sites: MiddlewareHandler = async (c, next) => {
    const seen = { site: c.req.header('sec-fetch-site'), origin: c.req.header('origin'), host: c.req.header('host') };
    return fromAnotherSite(seen) ? anotherSite(c) : next();
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
    if (sameToken(bearerOf(c.req.header('authorization')), opts.token) || sameToken(getCookie(c, TOKEN_COOKIE), opts.token)) return next();
    const url = new URL(c.req.url);
    const given = url.searchParams.get('token');
    if (c.req.method === 'GET' && sameToken(given, opts.token)) {
      setCookie(c, TOKEN_COOKIE, opts.token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      url.searchParams.delete('token');
      return c.redirect(localPath(url.pathname, url.search), 303);
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
  // Origin (or Sec-Fetch-Site) must be this console's own for a form POST — unless the bearer token came with it.
  const sameOrigin = csrf();
  const actions: MiddlewareHandler = async (c, next) => {
    if (opts.token !== null && sameToken(bearerOf(c.req.header('authorization')), opts.token)) return next();
    return sameOrigin(c, next);
  };
  return [sites, who, forms, actions];
}
