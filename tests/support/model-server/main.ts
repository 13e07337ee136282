/**
 * Runs the local model server on its own, for trying a real agent CLI against it by hand:
 *   npx esbuild tests/support/model-server/main.ts --bundle --platform=node --format=esm --outfile=/tmp/model-server.mjs
 *   node /tmp/model-server.mjs [--port N] [--log requests.jsonl]
 * then point the CLI at the printed URL (tests/real-clis/clis.ts lists each CLI's variables).
 * Faults while it runs: curl -X POST URL/_vigil/faults -d '{"kind":"overloaded","times":2}'.
 */
import { startModelServer } from './server.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const port = Number(arg('--port') ?? 0);
const logFile = arg('--log');
const server = await startModelServer({ port, ...(logFile ? { logFile } : {}) });
process.stdout.write(`model server at ${server.url}\n`);
process.on('SIGINT', () => void server.close().then(() => process.exit(0)));
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
