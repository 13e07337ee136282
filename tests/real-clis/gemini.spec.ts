/** Gemini CLI through the gemini preset, against the local model server: a complete run (suite.ts). */
import { EXPECTATIONS } from './expectations.js';
import { realCliSuite } from './suite.js';

realCliSuite('gemini', 'run', EXPECTATIONS.gemini);
