/**
 * Hosts: a run's repository lives on one machine, so its repository-bound activities go to that
 * machine's task queue, `<task queue>@<host>`, which only the workers started there (`vigil worker
 * --host NAME`, default this machine's name) poll; everything else stays on the shared queue.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { HOST_NAME, HOST_NAME_MAX } from './host-names.js';

export { HOST_NAME_MAX, HOST_NAME_RULE, hostTaskQueue, parseHostName } from './host-names.js';

export const HostNameSchema = z
  .string()
  .max(HOST_NAME_MAX)
  .regex(HOST_NAME, 'a host name is letters, digits, ".", "_" or "-", starting and ending with a letter or digit');
