/**
 * What every part of `vigil mcp` shares (cli/mcp.ts, cli/mcp-start.ts, cli/mcp-reads.ts): what
 * cli/commands/serve.ts hands the server (`McpDeps`) and the Temporal client it connects once and keeps.
 */
import type { Client, Connection } from '@temporalio/client';
import type { ResolvedKnobs } from './config.js';
import { connect, type Endpoint } from './connection.js';

export interface McpDeps {
  endpoint: () => Endpoint;
  /** `vigil start`'s knob resolution (flags, --set, --config, VIGIL_*, the store's default), from cli/commands/shared.ts. */
  resolve: (opts: Record<string, unknown>) => Promise<ResolvedKnobs>;
  /** `vigil start --id`'s check, from cli/commands/shared.ts. */
  validateId: (id: string) => string;
  env?: NodeJS.ProcessEnv;
}

/** The Temporal client, connected once on first use and kept (a failed connect is tried again next call). */
export class Temporal {
  private conn: Promise<{ client: Client; connection: Connection }> | null = null;

  constructor(private readonly endpoint: () => Endpoint) {}

  get(): Promise<{ client: Client; connection: Connection; ep: Endpoint }> {
    const ep = this.endpoint();
    if (!this.conn) {
      this.conn = connect(ep);
      this.conn.catch(() => (this.conn = null));
    }
    return this.conn.then((c) => ({ ...c, ep }));
  }

  async close(): Promise<void> {
    const c = await this.conn?.catch(() => null);
    await c?.connection.close();
  }
}
