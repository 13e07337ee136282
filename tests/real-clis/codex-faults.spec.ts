/** Codex through the codex preset, against the local model server: the API faults (suite.ts). */
import { EXPECTATIONS } from './expectations.js';
import { realCliSuite } from './suite.js';

realCliSuite('codex', 'faults', EXPECTATIONS.codex);
