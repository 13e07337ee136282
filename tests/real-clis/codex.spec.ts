/** Codex through the codex preset, against the local model server (suite.ts). */
import { realCliSuite } from './suite.js';

// codex exec --json reports no cost: Vigil prices its tokens.
realCliSuite('codex', { reportsCost: false, faultSeconds: 30 });
