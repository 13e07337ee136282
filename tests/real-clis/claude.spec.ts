/** Claude Code through the claude preset, against the local model server (suite.ts). */
import { CLAUDE_MAX_RETRIES } from '../../activities/providers/claude.js';
import { realCliSuite } from './suite.js';

// A refused request is retried CLAUDE_MAX_RETRIES times (the preset's CLAUDE_CODE_MAX_RETRIES), not ten.
realCliSuite('claude', { faultSeconds: 30, faultRequests: 1 + CLAUDE_MAX_RETRIES, readsHangs: true });
