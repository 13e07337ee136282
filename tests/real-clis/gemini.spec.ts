/** Gemini CLI through the gemini preset, against the local model server (suite.ts). */
import { realCliSuite } from './suite.js';

// gemini exec reports no cost: Vigil prices its tokens. Its final 429 answer
// ({"error":{"message":"Resource has been exhausted ... Suggested retry after 3s.","code":429}},
// printed over several lines) is not one Vigil's rate-limit reader recognises; the preset
// classifies it (ParsedOutput.apiFailure), which activities/provider-call.ts does not use yet.
realCliSuite('gemini', { reportsCost: false, faultSeconds: 90, knownGaps: { 'rate-limit': "interpretCall does not read the preset's apiFailure" } });
