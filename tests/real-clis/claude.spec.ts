/** Claude Code through the claude preset, against the local model server (suite.ts). */
import { CLAUDE_MAX_RETRIES } from '../../activities/providers/claude.js';
import { realCliSuite } from './suite.js';

// A refused request is retried CLAUDE_MAX_RETRIES times (the preset's CLAUDE_CODE_MAX_RETRIES), not ten.
// Batched rounds: claude --agents runs the council's members and the reviewers as declared agents, one call per round.
realCliSuite('claude', { faultSeconds: 30, faultRequests: 1 + CLAUDE_MAX_RETRIES, readsHangs: true, batchesRounds: true });
