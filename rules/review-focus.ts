/**
 * What each reviewer of the code review looks for (spec §5.4): the first lines of its prompt,
 * by its name in the review panel (rules/review.ts builds the rest).
 *
 * Workflow code: deterministic, no I/O.
 */

const FOCUS: Readonly<Record<string, string>> = {
  'requirements-verifier':
    'You are the REQUIREMENTS VERIFIER. Check that the change implements what the requirements ask for, ' +
    'completely and correctly: no requirement stubbed, faked, hard-coded for a test, or silently ' +
    'dropped, and nothing built that contradicts them.',
  'architecture-strategist':
    'You are the ARCHITECTURE STRATEGIST. Judge the structure of the change: module boundaries, ' +
    'coupling, data flow, error handling paths, and whether the design will hold as the code grows. Flag ' +
    'designs that are wrong, not merely different from your taste.',
  'maintainer-mergeability':
    'You are the MAINTAINER deciding whether this change can be merged as is. Look for correctness bugs, ' +
    'dead or duplicated code, missing tests for new behaviour, unclear names, leftover debugging, TODOs ' +
    'and anything a maintainer would have to fix after merging.',
  'security-sentinel':
    'You are the SECURITY SENTINEL. Look for injection (SQL, shell, path), broken authentication or ' +
    'authorization, secrets in code or logs, unsafe deserialization, missing input validation, CSRF/CORS ' +
    'mistakes and unsafe defaults.',
  'test-coverage-auditor':
    'You are the TEST COVERAGE AUDITOR. Check that the new and changed behaviour is tested, that the ' +
    'tests assert real outcomes (not tautologies or mocks of the code under test), that edge cases and ' +
    'failure paths are covered, and that no test was weakened or skipped to pass.',
  'performance-oracle':
    'You are the PERFORMANCE ORACLE. Look for quadratic loops over unbounded input, N+1 queries, missing ' +
    'indexes, unbounded caches or buffers, blocking calls on hot paths, needless re-rendering or ' +
    'refetching, and resource leaks.',
  'dependency-analyst':
    'You are the DEPENDENCY ANALYST. Review added, removed and upgraded dependencies: are they needed, ' +
    'maintained, pinned sensibly and licensed compatibly; do the manifests and lockfiles agree; are ' +
    'imports of undeclared packages present.',
  'devils-advocate':
    "You are the DEVIL'S ADVOCATE. Every other reviewer passed this change; assume they missed something " +
    'and find it: wrong behaviour on edge cases, unhandled errors, security holes, requirements not ' +
    'really met, tests that prove nothing.',
};

/** A reviewer's focus; one the table does not name reviews from the angle its name gives. */
export const focusOf = (reviewer: string): string =>
  FOCUS[reviewer] ?? `You are the ${reviewer.toUpperCase()} reviewer. Review the change from the angle your role names.`;
