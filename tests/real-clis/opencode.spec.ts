/** OpenCode through the opencode preset, against the local model server (suite.ts). */
import { realCliSuite } from './suite.js';

// opencode retries a failing request itself for about a minute and a half (no flag bounds it),
// and its JSON events carry no usage for the session-title requests it makes to a small model on
// the side (about 1,300 input tokens each, one per call): Vigil cannot count what it is not told.
realCliSuite('opencode', { faultSeconds: 150, countsSideRequests: false });
