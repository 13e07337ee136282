/** The messages of the `vigilAttempts` workflow (workflows/attempts-workflow.ts). */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { AttemptsStatus, PickPayload } from '../schemas/attempts.js';

/** The attempts' rows, the winner and why (`vigil status <run>` of a run with attempts). */
export const attemptsQuery = defineQuery<AttemptsStatus>('attempts');

export const ATTEMPTS_WORKFLOW_TYPE = 'vigilAttempts';

/**
 * A person's pick of the winner (`vigil pick <run> <attempt>`), taken while a supervised run whose
 * council split waits for one; refused (the validator's reason) otherwise. Answers the line said.
 */
export const pickUpdate = defineUpdate<string, [PickPayload]>('pick');
