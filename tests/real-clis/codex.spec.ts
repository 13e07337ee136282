/** Codex through the codex preset, against the local model server (suite.ts). */
import { realCliSuite } from './suite.js';

// codex exec --json reports no cost: Vigil prices its tokens. Its retries of a refused request are
// bounded by the provider's request_max_retries = 1 (tests/real-clis/clis.ts, as docs/providers.md asks).
realCliSuite('codex', { reportsCost: false, faultSeconds: 30, faultRequests: 2, readsHangs: true });
