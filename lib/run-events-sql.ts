/**
 * The event store's migration 1: the journal table `run_events` and one typed view per event
 * kind, plus `vigil_runs` (docs/event-store-and-reports.md). Kept apart from
 * lib/event-store.ts, which applies it, so that file stays about writing the journal.
 */

/** Tier levels by strength: a tier change to a higher rank is a climb. Names and ladder levels both. */
const TIER_RANK_SQL = (col: string): string =>
  `case lower(${col}) when 'fast' then 0 when 'low' then 0 when 'development' then 1 when 'medium' then 1 when 'planning' then 2 when 'high' then 2 end`;

// The view's comment, kept under the line width.
const VIGIL_RUNS_COMMENT =
  'One row per workflow id (across continue-as-new): how it started, how it ended, iterations, spend, council, ' +
  'escalations, tier climbs.';

/**
 * Migration 1: the journal table and one typed view per event kind, plus `vigil_runs` (one row per
 * workflow id). The views read only rows whose event passed RunEventSchema (an envelope whose event
 * did not is kept with kind 'invalid'), so their casts cannot fail.
 */
export const MIGRATION_1 = `
create table run_events (
  workflow_id text not null,
  run_id text not null,
  seq integer not null,
  kind text not null,
  at timestamptz,
  data jsonb not null,
  stored_at timestamptz not null default now(),
  primary key (workflow_id, run_id, seq)
);
create index run_events_kind_idx on run_events (kind, workflow_id);
comment on table run_events is 'Vigil run journal: one row per event envelope, written once (key: workflow id, Temporal run id, seq). data is the RunEvent.';

create view vigil_run_starts as
select workflow_id, run_id, seq, at,
  data->>'prdPath' as prd_path, data->>'prdTitle' as prd_title, data->>'repoPath' as repo_path,
  data->>'provider' as provider, (data->>'maxIterations')::int as max_iterations,
  (data->>'budgetUsd')::numeric as budget_usd, data->>'autonomyMode' as autonomy_mode
from run_events where kind = 'run_started';

create view vigil_iterations as
select workflow_id, run_id, seq, at,
  (data->>'iteration')::int as iteration, data->>'phase' as phase, data->>'tier' as tier,
  (data->>'exitCode')::int as exit_code, (data->>'durationMs')::int as duration_ms,
  (data->>'changed')::boolean as changed, (data->>'filesChangedSinceStart')::int as files_changed_since_start,
  (data->>'claimed')::boolean as claimed, data->>'tests' as tests,
  data->>'provider' as provider, data->>'model' as model, (data->>'costUsd')::numeric as cost_usd,
  (data->>'attempts')::int as attempts,
  ((data->>'exitCode')::int <> 0 or data->>'tests' = 'fail') as failed
from run_events where kind = 'iteration';

create view vigil_council_rounds as
select workflow_id, run_id, seq, at,
  (data->>'round')::int as round, (data->>'iteration')::int as iteration, data->>'trigger' as trigger,
  data->>'result' as result, (data->>'approve')::int as approve, (data->>'reject')::int as reject,
  (data->>'threshold')::int as threshold, upper(data->>'result') = 'APPROVED' as approved
from run_events where kind = 'council_round';

create view vigil_votes as
select e.workflow_id, e.run_id, e.seq, e.at,
  (e.data->>'round')::int as round, (e.data->>'iteration')::int as iteration, v.ordinality::int as position,
  (v.vote->>'member')::int as member, v.vote->>'recorded' as recorded,
  (v.vote->>'approves')::boolean as approves, v.vote->>'reason' as reason
from run_events e cross join lateral jsonb_array_elements(e.data->'votes') with ordinality as v(vote, ordinality)
where e.kind = 'council_round';

create view vigil_gates as
select workflow_id, run_id, seq, at,
  (data->>'iteration')::int as iteration, data->>'gate' as gate, data->>'verdict' as verdict,
  data->>'reason' as reason, (data->>'findings')::int as findings
from run_events where kind = 'gate';

create view vigil_reviews as
select workflow_id, run_id, seq, at,
  (data->>'round')::int as round, (data->>'iteration')::int as iteration, data->>'result' as result,
  (data->>'mergeability')::int as mergeability,
  jsonb_array_length(data->'reviewers') as reviewers,
  (select count(*)::int from jsonb_array_elements(data->'reviewers') r where (r->>'blocking')::boolean) as blocking
from run_events where kind = 'review';

create view vigil_reviewer_verdicts as
select e.workflow_id, e.run_id, e.seq, e.at,
  (e.data->>'round')::int as round, (e.data->>'iteration')::int as iteration,
  r.value->>'reviewer' as reviewer, r.value->>'verdict' as verdict, (r.value->>'blocking')::boolean as blocking
from run_events e cross join lateral jsonb_array_elements(e.data->'reviewers') as r
where e.kind = 'review';

create view vigil_escalations as
select workflow_id, run_id, seq, at,
  (data->>'iteration')::int as iteration, data->>'reason' as reason, data->>'detail' as detail,
  (data->>'paused')::boolean as paused
from run_events where kind = 'escalation';

create view vigil_notifications as
select workflow_id, run_id, seq, at,
  data->>'event' as event, (data->>'delivered')::int as delivered, (data->>'failed')::int as failed
from run_events where kind = 'notification';

create view vigil_messages as
select workflow_id, run_id, seq, at,
  data->>'name' as name, data->>'by' as by, data->>'summary' as summary, (data->>'accepted')::boolean as accepted
from run_events where kind = 'message';

create view vigil_tier_changes as
select workflow_id, run_id, seq, at,
  (data->>'iteration')::int as iteration, data->>'from' as from_tier, data->>'to' as to_tier,
  data->>'trigger' as trigger,
  coalesce(${TIER_RANK_SQL("data->>'to'")} > ${TIER_RANK_SQL("data->>'from'")}, false) as climb
from run_events where kind = 'tier_change';

create view vigil_spend as
select workflow_id, run_id, seq, at,
  (data->>'iteration')::int as iteration, (data->>'usd')::numeric as usd, (data->>'calls')::int as calls,
  (data->>'unpricedCalls')::int as unpriced_calls, (data->>'budgetUsd')::numeric as budget_usd
from run_events where kind = 'spend';
comment on view vigil_spend is 'Spend events are the run''s running totals at an iteration boundary: the latest one (highest seq) is what the run cost so far.';

create view vigil_outcomes as
select workflow_id, run_id, seq, at,
  data->>'status' as status, (data->>'exitCode')::int as exit_code, data->>'reason' as reason,
  (data->>'iteration')::int as iteration
from run_events where kind = 'outcome';

create view vigil_runs as
select w.workflow_id,
  coalesce(s.at, w.first_at) as started_at, s.prd_title, s.prd_path, s.repo_path as repo, s.provider,
  s.max_iterations, s.budget_usd, s.autonomy_mode,
  o.status as outcome, o.exit_code, o.reason as outcome_reason, o.at as finished_at,
  coalesce(i.iterations, 0) as iterations, coalesce(i.failed, 0) as failed_iterations,
  coalesce(sp.usd, i.cost_usd, 0) as spend_usd, coalesce(sp.unpriced_calls, 0) as unpriced_calls,
  coalesce(c.rounds, 0) as council_rounds, coalesce(c.approved, 0) as approved_rounds,
  coalesce(x.escalations, 0) as escalations, coalesce(t.climbs, 0) as tier_climbs,
  w.events, w.first_at, w.last_at
from (select workflow_id, count(*)::int as events, min(at) as first_at, max(at) as last_at from run_events group by workflow_id) w
left join lateral (select * from vigil_run_starts s where s.workflow_id = w.workflow_id order by s.seq limit 1) s on true
left join lateral (select * from vigil_outcomes o where o.workflow_id = w.workflow_id order by o.seq desc limit 1) o on true
left join lateral (select count(distinct iteration)::int as iterations, (count(distinct iteration) filter (where failed))::int as failed,
  sum(cost_usd) as cost_usd
                   from vigil_iterations i where i.workflow_id = w.workflow_id) i on true
left join lateral (select usd, unpriced_calls from vigil_spend p where p.workflow_id = w.workflow_id order by p.seq desc limit 1) sp on true
left join lateral (select count(*)::int as rounds,
  (count(*) filter (where approved))::int as approved from vigil_council_rounds c where c.workflow_id = w.workflow_id) c on true
left join lateral (select count(*)::int as escalations from vigil_escalations x where x.workflow_id = w.workflow_id) x on true
left join lateral (select (count(*) filter (where climb))::int as climbs from vigil_tier_changes t where t.workflow_id = w.workflow_id) t on true;
comment on view vigil_runs is '${VIGIL_RUNS_COMMENT}';
`;

/**
 * Migration 5: notifications a person acknowledges (`vigil notifications`, the console's inbox).
 * The view gains each notification's title and severity (null for events recorded before them);
 * an acknowledgement covers every notification of its run stored up to `acked_through`.
 */
export const NOTIFICATION_ACKS_MIGRATION = `
create or replace view vigil_notifications as
select workflow_id, run_id, seq, at,
  data->>'event' as event, (data->>'delivered')::int as delivered, (data->>'failed')::int as failed,
  data->>'title' as title, data->>'severity' as severity, stored_at
from run_events where kind = 'notification';

create table notification_acks (
  workflow_id text primary key,
  acked_through timestamptz not null,
  acked_at timestamptz not null default now(),
  acked_by text not null
);
comment on table notification_acks is 'Notifications a person acknowledged (vigil notifications ack): each of the run stored up to acked_through.';
`;
