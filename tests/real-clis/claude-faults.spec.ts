/** Claude Code through the claude preset, against the local model server: the API faults (suite.ts). */
import { EXPECTATIONS } from './expectations.js';
import { realCliSuite } from './suite.js';

realCliSuite('claude', 'faults', EXPECTATIONS.claude);
