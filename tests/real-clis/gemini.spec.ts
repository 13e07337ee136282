/** Gemini CLI through the gemini preset, against the local model server (suite.ts). */
import { realCliSuite } from './suite.js';

// gemini exec reports no cost: Vigil prices its tokens. Its final 429 answer
// ({"error":{"message":"Resource has been exhausted ... Suggested retry after 3s.","code":429}},
// printed over several lines) is read by the preset (ParsedOutput.apiFailure), whose reading
// activities/provider-call.ts takes before any text pattern.
realCliSuite('gemini', { reportsCost: false, faultSeconds: 90 });
