/**
 * Schemas built once per process, even inside the workflow sandbox.
 *
 * The SDK evaluates a workflow's modules afresh for every workflow it creates, so that workflows
 * share no state. For Vigil that meant building every zod schema again for each run the worker
 * takes up (a start, a continue-as-new, a replay after the cache let it go): about 5 MiB of heap
 * per cached run and a tenth of a second of the workflow thread each time. A schema is a value
 * made from code alone and means the same to every run, so the schema modules build theirs
 * through `shared`: the first run builds, the next ones reuse.
 *
 * This module is the one thing the workflows share: the bundle preloads it
 * (workers/worker.ts `workflowBundleOptions`), so the sandbox evaluates it once, before any
 * workflow, and hands every workflow the same module. The SDK deep-freezes what a preloaded module
 * exports; the cache lives in a closure, out of that reach (zod memoizes into its schema objects as
 * they are used, which a frozen schema would refuse). It imports nothing, so nothing else is
 * preloaded.
 *
 * Outside the sandbox (activities, the CLI) modules are evaluated once anyway: `shared` builds.
 */
const built = new Map<string, unknown>();

/** The value `build` makes, built the first time `key` is asked for in this process. */
export function shared<T>(key: string, build: () => T): T {
  if (built.has(key)) return built.get(key) as T;
  const value = build();
  built.set(key, value);
  return value;
}
