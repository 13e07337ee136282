/** Codex through the codex preset, against the local model server: a complete run (suite.ts). */
import { EXPECTATIONS } from './expectations.js';
import { realCliSuite } from './suite.js';

realCliSuite('codex', 'run', EXPECTATIONS.codex);
