/** `vigil status`'s line for each task of a run split into parallel streams (cli/status.ts). */
import { expect, it } from 'vitest';
import { streamLine } from '../../cli/status.js';

const task = { task: 'api', title: 'The API', state: 'pending' as const, dependsOn: [], attempts: 0, childId: null, branch: null, merged: false, spendUsd: 0, outcome: null, deadLetter: null };

it('says where each task stands: waiting, running in its child run, merged, or dead-lettered and why', () => {
  expect(streamLine({ ...task, dependsOn: ['db'] })).toBe('api (The API) · pending · after db');
  expect(streamLine({ ...task, state: 'in_progress', attempts: 1, childId: 'run-1--api', branch: 'vigil/run-1/api' })).toBe('api (The API) · in progress · run run-1--api · vigil/run-1/api');
  expect(streamLine({ ...task, state: 'done', attempts: 1, childId: 'run-1--api', branch: 'vigil/run-1/api', merged: true, spendUsd: 0.4213, outcome: 'council_approved' })).toBe(
    'api (The API) · done · run run-1--api · vigil/run-1/api, merged · $0.42 · council_approved',
  );
  expect(streamLine({ ...task, state: 'dead_letter', attempts: 2, outcome: 'max_iterations_reached', deadLetter: 'failed twice' })).toBe('api (The API) · dead letter · attempt 2 · max_iterations_reached · dead letter: failed twice');
});
