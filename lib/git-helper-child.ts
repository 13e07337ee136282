/**
 * The git helper's own program: a tiny Node process (no imports beyond Node's own) that runs git
 * commands for the worker and answers over stdio, one JSON line per request and per answer.
 * Spawning from the worker, a large process, costs ~9 ms of blocked event loop per command; from
 * this small one 1–2 ms, off the worker's loop. activities/git-helper.ts starts it (the source of
 * `gitHelperMain` is passed to `node -e`, so it must stay self-contained: no closure over this
 * module, only `require` of Node's modules) and restarts it when it dies.
 *
 * Requests: `{id, op: 'git', cwd, args, env?, input?}` → `{id, ok, exitCode, stdout, stderr}`;
 * `{id, op: 'treeHash', cwd}` → `{id, ok, treeHash}`; `{id, op: 'inspect', cwd, runStartSha,
 * previousTree, checkpoint?}` → `{id, ok, repo: false}` or `{id, ok, repo: true, treeHash, head,
 * sinceStart, sinceLast, checkpoint}` (numstat texts; `sinceLast` null when the previous tree is
 * unknown or gone; `checkpoint` the commit made when one was asked for and the tree is not the
 * previous one, else null); `{id, op: 'checkpoint', cwd, tree, parent, ref, message, prune, env}` →
 * `{id, ok, commit}`. A failure answers `{id, ok: false, error}`. A request's `baseEnv` is the
 * environment every git command in its repository runs with (lib/git-env.ts). The helper exits when its stdin
 * closes (the worker is gone).
 *
 * A checkpoint: `git commit-tree` of the tree (parent: the previous checkpoint, when it still
 * exists) and one `git update-ref --stdin` transaction that points the ref at it and deletes the
 * pruned refs. In an inspection it runs beside the diffs, once the tree is known.
 *
 * The tree hash (see activities/repo.ts): the git tree id of the working tree as `git add -A` would
 * stage it, computed with a scratch index that starts as a copy of the real one (its stat cache,
 * with the original's mtime so "racily clean" entries are re-read), `.vigil/` removed from it
 * (when it holds any); the user's index is never touched. A repository's hashes run one at a
 * time; a scratch index staged to the same bytes as the one the last tree was written from is
 * that tree (a reviewer's check that the tree did not change costs one git command, not two).
 */
export function gitHelperMain(): void {
  /* eslint-disable @typescript-eslint/no-require-imports -- run by `node -e` as CommonJS */
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  const crypto = require('node:crypto') as typeof import('node:crypto');
  const fs = require('node:fs') as typeof import('node:fs');
  const os = require('node:os') as typeof import('node:os');
  const path = require('node:path') as typeof import('node:path');
  const readline = require('node:readline') as typeof import('node:readline');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const VIGIL_DIR = '.vigil';
  const EXCLUDE = `:(exclude)${VIGIL_DIR}`;

  interface Ran {
    exitCode: number;
    stdout: string;
    stderr: string;
  }

  /** Per repository, the environment its requests carry (lib/git-env.ts): every git command there runs with it. */
  const baseEnvs = new Map<string, Record<string, string>>();

  const run = (cwd: string, args: string[], env: Record<string, string> = {}, input?: string): Promise<Ran> =>
    new Promise((resolve) => {
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let child;
      try {
        child = spawn('git', args, {
          cwd,
          env: { ...process.env, ...baseEnvs.get(cwd), ...env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' },
          stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        });
      } catch (e) {
        resolve({ exitCode: -1, stdout: '', stderr: e instanceof Error ? e.message : String(e) });
        return;
      }
      let failed: string | null = null;
      child.on('error', (e) => (failed = e.message));
      child.stdout?.on('data', (b: Buffer) => out.push(b));
      child.stderr?.on('data', (b: Buffer) => err.push(b));
      // git may exit before it reads its input (a commit-tree whose parent is gone fails at once):
      // the write then fails with EPIPE, which is not the helper's failure (unheard, it would end
      // the helper and every request in it); git's exit code says what happened.
      child.stdin?.on('error', () => {});
      if (input !== undefined) child.stdin?.end(input);
      child.on('close', (code) => {
        const stdout = Buffer.concat(out).toString('utf8');
        resolve({
          exitCode: failed !== null ? -1 : (code ?? -1),
          stdout: stdout.endsWith('\n') ? stdout.slice(0, -1) : stdout,
          stderr: failed ?? Buffer.concat(err).toString('utf8'),
        });
      });
    });

  const ok = async (cwd: string, args: string[], env: Record<string, string> = {}, input?: string): Promise<string> => {
    const r = await run(cwd, args, env, input);
    if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')} failed in ${cwd} (exit ${r.exitCode}): ${r.stderr.trim().slice(0, 1000)}`);
    return r.stdout;
  };

  /** Where a repository keeps its index and its objects (asked once per repository; forgotten when a command there fails). */
  interface Where {
    index: string;
    objects: string;
  }
  const wheres = new Map<string, Where>();
  const whereFrom = (cwd: string, lines: string[]): Where | null => {
    const [index, objects] = lines;
    return index && objects ? { index: path.resolve(cwd, index), objects: path.resolve(cwd, objects) } : null;
  };
  const whereOf = async (cwd: string): Promise<Where> => {
    let w = wheres.get(cwd);
    if (w === undefined) {
      w = whereFrom(cwd, (await ok(cwd, ['rev-parse', '--git-path', 'index', '--git-path', 'objects'])).split('\n')) ?? undefined;
      if (w === undefined) throw new Error(`git rev-parse gave no index and objects paths in ${cwd}`);
      wheres.set(cwd, w);
    }
    return w;
  };

  /**
   * The scratch indexes: one file per repository in one folder of this helper, rewritten for
   * every hash (a folder and a file made and removed per hash would make the file system's inode
   * allocator step over ever more recently deleted inodes, which slows every file created on the
   * machine). Removed when the helper exits, and made again if something removes it meanwhile; a
   * folder left by a helper that was killed is removed by a later one.
   */
  const SCRATCH_PREFIX = 'vigil-git-helper-';
  let scratchDir: string | null = null;
  const scratchFiles = new Map<string, string>();
  const MAX_SCRATCH_FILES = 512;
  let scratchCount = 0;
  let exitHooked = false;
  /**
   * The scratch folders of helpers that are gone (killed before they could remove their own):
   * their pid runs nothing, and nothing was hashed in them for ten minutes (a helper of another
   * pid namespace sharing this folder is not taken for a dead one while it works).
   */
  const ORPHAN_AFTER_MS = 10 * 60_000;
  const removeOrphanScratch = (): void => {
    try {
      for (const name of fs.readdirSync(os.tmpdir())) {
        const pid = Number(new RegExp(`^${SCRATCH_PREFIX}(\\d+)-`).exec(name)?.[1] ?? NaN);
        if (!Number.isInteger(pid) || pid === process.pid) continue;
        const folder = path.join(os.tmpdir(), name);
        try {
          process.kill(pid, 0);
        } catch (e) {
          if ((e as { code?: string }).code === 'ESRCH' && Date.now() - fs.statSync(folder).mtimeMs > ORPHAN_AFTER_MS)
            fs.rmSync(folder, { recursive: true, force: true });
        }
      }
    } catch {
      /* an unreadable temporary folder: nothing to tidy */
    }
  };
  const scratchIndex = (cwd: string): string => {
    if (scratchDir !== null && !fs.existsSync(scratchDir)) {
      // Removed under the helper (a cleaner of old temporary files): made again.
      scratchDir = null;
      scratchFiles.clear();
    }
    if (scratchDir === null) {
      removeOrphanScratch();
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${SCRATCH_PREFIX}${process.pid}-`));
      if (!exitHooked) {
        exitHooked = true;
        process.on('exit', () => {
          if (scratchDir !== null) fs.rmSync(scratchDir, { recursive: true, force: true });
        });
        // Stopped by a signal (a Ctrl+C reaches the worker's whole process group): the folder goes too.
        for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
          process.once(signal, () => process.exit(128 + os.constants.signals[signal]));
      }
      scratchDir = dir;
    }
    let file = scratchFiles.get(cwd);
    if (file === undefined) {
      if (scratchFiles.size >= MAX_SCRATCH_FILES) {
        // The least recently hashed repository gives its file up (not one being hashed now).
        for (const [oldest, its] of scratchFiles) {
          if (hashes.has(oldest)) continue;
          scratchFiles.delete(oldest);
          lastTrees.delete(oldest);
          fs.rmSync(its, { force: true });
          break;
        }
      }
      file = path.join(scratchDir, `index-${(scratchCount += 1)}`);
    } else scratchFiles.delete(cwd); // re-inserted below: the map's order is the order of use
    scratchFiles.set(cwd, file);
    return file;
  };

  /**
   * The last tree written per repository, with a digest of the scratch index it was written
   * from (after `git add -A`, before `write-tree`). A scratch index whose bytes are the same
   * holds the same entries, so it makes the same tree: `write-tree` is skipped while that tree's
   * object is still there, loose (a tree packed or collected since is written again).
   */
  const lastTrees = new Map<string, { digest: string; tree: string }>();
  const looseObject = (where: Where, id: string): boolean => fs.existsSync(path.join(where.objects, id.slice(0, 2), id.slice(2)));

  const computeTree = async (cwd: string, where: Where): Promise<string> => {
    const scratch = scratchIndex(cwd);
    try {
      if (fs.existsSync(where.index)) {
        const st = fs.statSync(where.index);
        fs.copyFileSync(where.index, scratch);
        fs.utimesSync(scratch, st.atime, st.mtime);
      } else fs.rmSync(scratch, { force: true });
      const env = { GIT_INDEX_FILE: scratch };
      await ok(cwd, ['add', '-A'], env);
      const staged = fs.existsSync(scratch) ? fs.readFileSync(scratch) : null;
      const digest = staged === null ? '' : crypto.createHash('sha1').update(staged).digest('hex');
      const last = lastTrees.get(cwd);
      if (last !== undefined && last.digest === digest && looseObject(where, last.tree)) return last.tree;
      // `.vigil/` is usually ignored (info/exclude): only an index that holds some of it needs it removed.
      if (staged === null || staged.includes(`${VIGIL_DIR}/`))
        await ok(cwd, ['rm', '-r', '-q', '--cached', '--ignore-unmatch', '--', VIGIL_DIR], env);
      const tree = await ok(cwd, ['write-tree'], env);
      lastTrees.set(cwd, { digest, tree });
      return tree;
    } catch (e) {
      wheres.delete(cwd);
      lastTrees.delete(cwd);
      throw e;
    }
  };

  /**
   * The hashes of each repository, one at a time (they share its scratch index). A request that
   * comes while one runs joins the next one, which starts when it ends: every answer is a hash
   * begun after its request, and reviewers finishing together share one.
   */
  const hashes = new Map<string, { current: Promise<string> | null; next: Promise<string> | null }>();
  const treeHash = (cwd: string, known?: Where): Promise<string> => {
    let queue = hashes.get(cwd);
    if (queue === undefined) hashes.set(cwd, (queue = { current: null, next: null }));
    const q = queue;
    if (q.next !== null) return q.next;
    const start = (): Promise<string> => {
      const p = (async () => computeTree(cwd, known ?? (await whereOf(cwd))))();
      q.current = p;
      const settle = (): void => {
        if (q.current === p) q.current = null;
        if (q.current === null && q.next === null && hashes.get(cwd) === q) hashes.delete(cwd);
      };
      p.then(settle, settle);
      return p;
    };
    if (q.current === null) return start();
    const next = q.current
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        q.next = null;
        return start();
      });
    q.next = next;
    return next;
  };

  /** The empty tree of each repository (its id depends on the object format). */
  const emptyTrees = new Map<string, string>();
  const emptyTree = async (cwd: string): Promise<string> => {
    let t = emptyTrees.get(cwd);
    if (t === undefined) emptyTrees.set(cwd, (t = await ok(cwd, ['mktree'], {}, '')));
    return t;
  };

  const numstat = (cwd: string, from: string, to: string): Promise<string> =>
    ok(cwd, ['diff', '--numstat', '-z', '--no-renames', from, to, '--', '.', EXCLUDE]);

  interface CheckpointAsk {
    parent: string | null;
    ref: string;
    message: string;
    prune: string[];
    env: Record<string, string>;
  }

  /** A commit of `tree` under `ask.ref` (parent: `ask.parent` when that commit still exists), pruned refs deleted in the same transaction. */
  const checkpoint = async (cwd: string, tree: string, ask: CheckpointAsk): Promise<string> => {
    const commitTree = (parents: string[]): Promise<Ran> =>
      run(cwd, ['commit-tree', '--no-gpg-sign', tree, ...parents, '-F', '-'], ask.env, ask.message);
    let made = await commitTree(ask.parent ? ['-p', ask.parent] : []);
    // A parent that is gone (collected, or from a rewound history) is left out; any other failure is one.
    if (made.exitCode !== 0 && ask.parent && (await run(cwd, ['cat-file', '-e', `${ask.parent}^{commit}`])).exitCode !== 0)
      made = await commitTree([]);
    if (made.exitCode !== 0)
      throw new Error(`git commit-tree failed in ${cwd} (exit ${made.exitCode}): ${made.stderr.trim().slice(0, 1000)}`);
    const commit = made.stdout.trim();
    const lines = [`update ${ask.ref} ${commit}`, ...ask.prune.filter((r) => r !== ask.ref).map((r) => `delete ${r}`)];
    await ok(cwd, ['update-ref', '--stdin'], {}, `${lines.join('\n')}\n`);
    return commit;
  };

  /** The working tree's hash, with the paths known from an earlier call when there are; null when `cwd` is not a work tree. */
  const inspectedTree = async (cwd: string): Promise<string | null> => {
    const known = wheres.get(cwd);
    if (known !== undefined) {
      try {
        return await treeHash(cwd, known);
      } catch {
        // Asked again below: the repository may have moved, gone, or stopped being one.
      }
    }
    // One git call says whether this is a work tree and where its index and objects are.
    const asked = await run(cwd, ['rev-parse', '--is-inside-work-tree', '--git-path', 'index', '--git-path', 'objects']);
    const [inside, ...paths] = asked.stdout.split('\n');
    const where = whereFrom(cwd, paths);
    if (asked.exitCode !== 0 || inside?.trim() !== 'true' || where === null) return null;
    const tree = await treeHash(cwd, where);
    wheres.set(cwd, where);
    return tree;
  };

  type Request = {
    id: number;
    op: string;
    cwd: string;
    args?: string[];
    env?: Record<string, string>;
    input?: string;
    runStartSha?: string | null;
    previousTree?: string | null;
    tree?: string;
    checkpoint?: CheckpointAsk | null;
    baseEnv?: Record<string, string>;
  } & Partial<CheckpointAsk>;

  const handle = async (req: Request): Promise<Record<string, unknown>> => {
    if (req.baseEnv) baseEnvs.set(req.cwd, req.baseEnv);
    if (req.op === 'git') return { ...(await run(req.cwd, req.args ?? [], req.env ?? {}, req.input)) };
    if (req.op === 'treeHash') return { treeHash: await treeHash(req.cwd) };
    if (req.op === 'checkpoint') {
      const { parent = null, ref = '', message = '', prune = [], env = {} } = req;
      return { commit: await checkpoint(req.cwd, String(req.tree), { parent, ref, message, prune, env }) };
    }
    if (req.op === 'inspect') {
      // After the tree hash, the head, the two diffs and the checkpoint run side by side.
      const tree = await inspectedTree(req.cwd);
      if (tree === null) return { repo: false };
      const previous = req.previousTree ?? null;
      const ask = req.checkpoint ?? null;
      const [head, sinceStart, sinceLast, made] = await Promise.all([
        run(req.cwd, ['rev-parse', '--verify', '-q', 'HEAD^{commit}']),
        // With no run-start commit, everything counts as new: diff against the empty tree.
        (async () => numstat(req.cwd, req.runStartSha ?? (await emptyTree(req.cwd)), tree))(),
        // Null when the previous tree is unknown or gone (collected, or from another repository).
        previous === null
          ? null
          : previous === tree
            ? ''
            : run(req.cwd, ['diff', '--numstat', '-z', '--no-renames', previous, tree, '--', '.', EXCLUDE]).then((r) =>
                r.exitCode === 0 ? r.stdout : null,
              ),
        // A tree that changed becomes a checkpoint when the run asks for one.
        ask !== null && tree !== previous ? checkpoint(req.cwd, tree, ask) : null,
      ]);
      return {
        repo: true,
        treeHash: tree,
        head: head.exitCode === 0 && head.stdout.trim() ? head.stdout.trim() : null,
        sinceStart,
        sinceLast,
        checkpoint: made,
      };
    }
    throw new Error(`unknown git helper operation ${req.op}`);
  };

  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    let req: Request;
    try {
      req = JSON.parse(line) as Request;
    } catch {
      return;
    }
    handle(req).then(
      (r) => process.stdout.write(`${JSON.stringify({ id: req.id, ok: true, ...r })}\n`),
      (e: unknown) =>
        process.stdout.write(`${JSON.stringify({ id: req.id, ok: false, error: e instanceof Error ? e.message : String(e) })}\n`),
    );
  });
  lines.on('close', () => process.exit(0));
}
