/**
 * One HTTP server of the CLI's (the console, the webhook receiver) listening: served by
 * @hono/node-server on `host:port` (port 0: any free one), with the port it got, its URL, and a
 * close that ends open connections (a console's polling or an event stream would hold a plain
 * close for ever).
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';

export interface Listening {
  url: string;
  port: number;
  close: () => Promise<void>;
}

/** Resolves once the server listens; rejects when it cannot (the port taken, the host unknown). */
export async function listen(fetch: (req: Request) => Response | Promise<Response>, host: string, port: number): Promise<Listening> {
  let bound = port;
  const server: ServerType = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch, hostname: host, port }, (info: AddressInfo) => {
      bound = info.port;
      resolve(s);
    });
    s.once('error', reject);
  });
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${hostPart}:${bound}/`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        const s = server as { closeAllConnections?: () => void; close: (cb: () => void) => void };
        s.closeAllConnections?.();
        s.close(() => resolve());
      }),
  };
}
