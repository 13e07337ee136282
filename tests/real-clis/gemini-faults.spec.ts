/** Gemini CLI through the gemini preset, against the local model server: the API faults (suite.ts). */
import { EXPECTATIONS } from './expectations.js';
import { realCliSuite } from './suite.js';

realCliSuite('gemini', 'faults', EXPECTATIONS.gemini);
