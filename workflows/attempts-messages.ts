/** The messages of the `vigilAttempts` workflow (workflows/attempts-workflow.ts). */
import { defineQuery } from '@temporalio/workflow';
import type { AttemptsStatus } from '../schemas/attempts.js';

/** The attempts' rows, the winner and why (`vigil status <run>` of a run with attempts). */
export const attemptsQuery = defineQuery<AttemptsStatus>('attempts');

export const ATTEMPTS_WORKFLOW_TYPE = 'vigilAttempts';
