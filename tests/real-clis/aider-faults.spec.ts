/** aider through the aider preset, against the local model server: the API faults (suite.ts). */
import { EXPECTATIONS } from './expectations.js';
import { realCliSuite } from './suite.js';

realCliSuite('aider', 'faults', EXPECTATIONS.aider);
