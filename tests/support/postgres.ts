/**
 * A real, throwaway Postgres for a test file: the embedded one, in a temporary folder, on a free
 * port, without fsync (the data is thrown away). Never a mock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../workers/dev-server.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../workers/postgres.js';

export interface TestPostgres {
  /** The running server (a test that restarts it puts the new one here). */
  server: EmbeddedPostgres;
  dataDir: string;
  /** The URL of another database on the same server, created empty. */
  freshDatabase(name: string): Promise<string>;
  /** Stops the server and removes its folder. */
  cleanup(): Promise<void>;
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vigil-test-pg-'));
  const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), durable: false });
  const tp: TestPostgres = {
    server,
    dataDir,
    async freshDatabase(name: string): Promise<string> {
      const admin = new pg.Client({ connectionString: withDatabase(tp.server.url, 'postgres') });
      await admin.connect();
      try {
        await admin.query(`drop database if exists ${admin.escapeIdentifier(name)}`);
        await admin.query(`create database ${admin.escapeIdentifier(name)}`);
      } finally {
        await admin.end();
      }
      return withDatabase(tp.server.url, name);
    },
    async cleanup(): Promise<void> {
      await tp.server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return tp;
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
