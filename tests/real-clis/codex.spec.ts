/** Codex through the codex preset, against the local model server (suite.ts). */
import { realCliSuite } from './suite.js';

// codex exec --json reports no cost: Vigil prices its tokens. Its retries of a refused request are
// bounded by the provider's request_max_retries = 1 and stream_max_retries = 1 (tests/real-clis/clis.ts,
// as docs/agents-and-providers.md asks): a 529 took 2 requests here, a 500 4 (each stream retry
// makes its own request retries: (1 + 1) x (1 + 1)).
realCliSuite('codex', { reportsCost: false, faultSeconds: 30, faultRequests: 4, readsHangs: true });
