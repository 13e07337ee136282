/** aider through the aider preset, against the local model server (suite.ts). */
import { realCliSuite } from './suite.js';

// aider rounds its token report (`2.7k sent`), keeps no session, and retries a failing request
// for about a minute before it gives up (no flag bounds it).
realCliSuite('aider', { exactTokens: false, reportsSession: false, faultSeconds: 90 });
