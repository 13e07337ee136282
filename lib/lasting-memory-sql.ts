// The tables' comments, kept under the line width.
const MEMORY_TRACES_COMMENT =
  "What an iteration''s agent call adds to the journal for memory: files changed, errors, the tests'' failure " +
  "line, the agent''s summary (all redacted), and what memory its prompt carried.";

const MEMORY_PATTERNS_COMMENT =
  'Patterns and anti-patterns consolidated from episodes; repo null: across the repositories of this ' +
  'installation; imported: from a memory file (kept when no episode here makes it).';

const MEMORY_JUDGEMENTS_COMMENT =
  'One row per run whose memory the judge (role memory) was asked about: what it applied, what the call cost, and' +
  ' why nothing was applied when so.';

/**
 * The event store's migration 2: the memory that outlives a run (docs/memory.md). Tables, not
 * views: episodes and consolidated items carry their own importance and access counts, which
 * retrieval updates. Kept apart from lib/lasting-memory.ts so the event store's migration
 * list can import it without an import circle.
 */
export const LASTING_MEMORY_MIGRATION = `
create table memory_traces (
  workflow_id text not null,
  iteration integer not null,
  files jsonb not null default '[]',
  errors jsonb not null default '[]',
  test_failure text,
  summary text,
  retrieved jsonb not null default '[]',
  retrieved_chars jsonb,
  recorded_at timestamptz not null default now(),
  primary key (workflow_id, iteration)
);
comment on table memory_traces is '${MEMORY_TRACES_COMMENT}';

create table memory_episodes (
  id bigserial primary key,
  workflow_id text not null,
  iteration integer not null,
  repo text not null,
  at timestamptz,
  phase text, tier text, provider text,
  outcome text not null check (outcome in ('success', 'failure', 'partial')),
  files jsonb not null, errors jsonb not null, findings jsonb not null, council_reasons jsonb not null,
  signatures jsonb not null, passed jsonb not null, summary text, retrieved jsonb not null,
  importance real not null,
  access_count integer not null default 0,
  last_accessed_at timestamptz,
  created_at timestamptz not null default now(),
  unique (workflow_id, iteration)
);
create index memory_episodes_repo_idx on memory_episodes (repo, at);

create table memory_patterns (
  id bigserial primary key,
  repo text,
  scope text generated always as (coalesce(repo, '')) stored,
  kind text not null check (kind in ('pattern', 'anti_pattern')),
  signature text not null,
  topic text not null,
  title text not null,
  body text not null,
  keywords jsonb not null,
  evidence integer not null,
  runs integer not null,
  first_seen timestamptz, last_seen timestamptz,
  importance real not null,
  access_count integer not null default 0,
  last_accessed_at timestamptz,
  imported boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (scope, kind, signature)
);
comment on table memory_patterns is '${MEMORY_PATTERNS_COMMENT}';

create table memory_skills (
  id bigserial primary key,
  repo text,
  scope text generated always as (coalesce(repo, '')) stored,
  task_kind text not null,
  title text not null,
  steps jsonb not null,
  keywords jsonb not null,
  evidence integer not null,
  importance real not null,
  access_count integer not null default 0,
  last_accessed_at timestamptz,
  from_runs jsonb not null,
  imported boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (scope, task_kind)
);

create table memory_links (
  relation text not null check (relation in ('derived_from', 'contradicts', 'supersedes')),
  from_kind text not null check (from_kind in ('pattern', 'skill')),
  from_id bigint not null,
  to_kind text not null check (to_kind in ('pattern', 'skill', 'episode')),
  to_id bigint not null,
  primary key (relation, from_kind, from_id, to_kind, to_id)
);

create table memory_forgotten (
  scope text not null,
  kind text not null,
  signature text not null,
  forgotten_at timestamptz not null default now(),
  primary key (scope, kind, signature)
);
comment on table memory_forgotten is 'Items a person forgot (vigil memory forget): consolidation never makes them again.';

create table memory_consolidations (
  workflow_id text primary key,
  consolidated_at timestamptz not null default now()
);
`;

/**
 * Migration 3: the memory judge's work (docs/memory.md, Judgement). A pattern's lesson (one line
 * the judge phrased) and the item it was merged into (a merged item is no longer retrieved); the
 * links the judge made (`judged`), which consolidation keeps; and each run's judgement with what
 * it cost, for the reports.
 */
export const MEMORY_JUDGE_MIGRATION = `
alter table memory_patterns add column lesson text, add column lesson_by text, add column merged_into bigint;
alter table memory_links add column judged boolean not null default false;
create table memory_judgements (
  workflow_id text primary key,
  judged_at timestamptz not null default now(),
  provider text,
  model text,
  items integer not null,
  lessons integer not null,
  merges integer not null,
  calls integer not null,
  usd double precision not null,
  input_tokens bigint not null default 0,
  output_tokens bigint not null default 0,
  unpriced boolean not null default false,
  problem text,
  log_path text
);
comment on table memory_judgements is '${MEMORY_JUDGEMENTS_COMMENT}';
`;

/** Migration 4: the files an iteration's agent read (docs/memory.md, What is kept), on its trace and its episode. */
export const FILES_READ_MIGRATION = `
alter table memory_traces add column files_read jsonb not null default '[]';
alter table memory_episodes add column files_read jsonb not null default '[]';
`;

/**
 * Migration 6: who stored a pattern that no episode made (docs/memory.md, Patterns an agent
 * stores): an agent call of a run, or a person through `vigil mcp` (schemas/memory-agent.ts
 * StoredBy). Consolidation keeps such items as it keeps imported ones.
 */
export const STORED_BY_MIGRATION = `
alter table memory_patterns add column stored_by jsonb;
`;

/** Migration 7: an agent call's token economics (docs/memory.md, Token economics), on its trace. */
export const ECONOMICS_MIGRATION = `
alter table memory_traces add column economics jsonb;
`;

/** Migration 8: the original's eight link relations (rules/memory-links.ts), where three were allowed. */
export const LINK_RELATIONS_MIGRATION = `
alter table memory_links drop constraint if exists memory_links_relation_check;
alter table memory_links add constraint memory_links_relation_check check (relation in
  ('derived_from', 'related_to', 'contradicts', 'elaborates', 'example_of', 'supersedes', 'superseded_by', 'supports'));
`;
