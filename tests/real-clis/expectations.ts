/**
 * What each real CLI is expected to do against the local model server, said once for both of its
 * spec files (`<cli>.spec.ts`, the complete run; `<cli>-faults.spec.ts`, the API faults: suite.ts).
 */
import { CLAUDE_MAX_RETRIES } from '../../lib/providers/claude.js';
import type { CliExpectations } from './suite.js';
import type { RealCliName } from './clis.js';

export const EXPECTATIONS: Record<RealCliName, Partial<CliExpectations>> = {
  // aider rounds its token report (`2.7k sent`), keeps no session, and retries a failing request
  // for about a minute before it gives up (no flag bounds it).
  aider: { exactTokens: false, reportsSession: false, faultSeconds: 90 },
  // A refused request is retried CLAUDE_MAX_RETRIES times (the preset's CLAUDE_CODE_MAX_RETRIES), not ten.
  // Batched rounds: claude --agents runs the council's members and the reviewers as declared agents, one call per round.
  claude: { faultSeconds: 30, faultRequests: 1 + CLAUDE_MAX_RETRIES, readsHangs: true, batchesRounds: true },
  // codex exec --json reports no cost: Vigil prices its tokens. Its retries of a refused request are
  // bounded by the provider's request_max_retries = 1 and stream_max_retries = 1 (tests/real-clis/clis.ts,
  // as docs/agents-and-providers.md asks): a 529 took 2 requests here, a 500 4 (each stream retry
  // makes its own request retries: (1 + 1) x (1 + 1)).
  codex: { reportsCost: false, faultSeconds: 30, faultRequests: 4, readsHangs: true },
  // gemini exec reports no cost: Vigil prices its tokens. Its final 429 answer
  // ({"error":{"message":"Resource has been exhausted ... Suggested retry after 3s.","code":429}},
  // printed over several lines) is read by the preset (ParsedOutput.apiFailure), whose reading
  // lib/providers/call.ts takes before any text pattern.
  gemini: { reportsCost: false, faultSeconds: 90 },
  // opencode retries a failing request itself for about a minute and a half (no flag bounds it),
  // and its JSON events carry no usage for the session-title requests it makes to a small model on
  // the side (about 1,300 input tokens each, one per call): Vigil cannot count what it is not told.
  opencode: { faultSeconds: 150, countsSideRequests: false },
};
