/** `vigil status`'s line (and the UI card's) for each task of a run split into parallel streams (cli/status.ts). */
import { expect, it } from 'vitest';
import { streamLine, tasksLine } from '../../rules/ui.js';

const task = {
  task: 'api',
  title: 'The API',
  state: 'pending' as const,
  dependsOn: [],
  attempts: 0,
  childId: null,
  branch: null,
  merged: false,
  spendUsd: 0,
  outcome: null,
  deadLetter: null,
};

it('says where each task stands: waiting, running in its child run, merged, or dead-lettered and why', () => {
  expect(streamLine({ ...task, dependsOn: ['db'] })).toBe('api (The API) · pending · after db');
  expect(streamLine({ ...task, state: 'in_progress', attempts: 1, childId: 'run-1--api', branch: 'vigil/run-1/api' })).toBe(
    'api (The API) · in progress · run run-1--api · vigil/run-1/api',
  );
  expect(
    streamLine({
      ...task,
      state: 'done',
      attempts: 1,
      childId: 'run-1--api',
      branch: 'vigil/run-1/api',
      merged: true,
      spendUsd: 0.4213,
      outcome: 'council_approved',
    }),
  ).toBe('api (The API) · done · run run-1--api · vigil/run-1/api, merged · $0.42 · council_approved');
  expect(streamLine({ ...task, state: 'dead_letter', attempts: 2, outcome: 'max_iterations_reached', deadLetter: 'failed twice' })).toBe(
    'api (The API) · dead letter · attempt 2 · max_iterations_reached · dead letter: failed twice',
  );
});

it('says when a stream waits for a person, and how to resume it', () => {
  const waiting = { reason: 'escalation (dead letter): the same failure 3 times\nsee the handoff', at: '2026-11-27T09:00:00Z' };
  expect(streamLine({ ...task, state: 'in_progress', attempts: 1, childId: 'run-1--api', branch: 'vigil/run-1--api', waiting })).toBe(
    'api (The API) · in progress · run run-1--api · vigil/run-1--api · WAITS FOR A PERSON since 2026-11-27T09:00:00Z: ' +
      'escalation (dead letter): the same failure 3 times (vigil resume run-1--api, or resume this run)',
  );
});

it('says where the tasks came from, and why a plan was refused', () => {
  expect(tasksLine({ source: 'planner', count: 3, note: null })).toBe('3 from the planner');
  expect(
    tasksLine({
      source: 'checklist',
      count: 4,
      note: 'the planner answer: checklist item REQ-3 is in no task; each checklist item is a task of its own',
    }),
  ).toBe(
    '4 from the PRD checklist, one task per item (the planner answer: checklist item REQ-3 is in no task; each checklist item is a task of its own)',
  );
  expect(tasksLine({ source: 'planner', count: 0, note: 'the planner kept the work as one task ("all"): no parallel streams' })).toBe(
    'none: the run is one stream (the planner kept the work as one task ("all"): no parallel streams)',
  );
});
