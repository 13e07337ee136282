/** Claude Code through the claude preset, against the local model server (suite.ts). */
import { realCliSuite } from './suite.js';

realCliSuite('claude', { faultSeconds: 30 });
