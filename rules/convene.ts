/**
 * When the completion council convenes (spec §2.3), checked after a successful agent iteration:
 * never below the minimum-iteration floor (not even for a claim); otherwise when the circuit
 * breaker tripped, when completion was claimed, every `checkInterval` iterations, or early when
 * the tests are affirmatively green. A human's forced review ignores the floor.
 */
import type { CONVENE_TRIGGERS } from '../schemas/rounds.js';

export type ConveneTrigger = (typeof CONVENE_TRIGGERS)[number];

export interface ConveneFacts {
  iteration: number;
  forced: boolean;
  circuitTripped: boolean;
  claimed: boolean;
  /** The latest test run passed on the current tree (null: no test command or not run). */
  testsGreen: boolean | null;
}

export interface ConveneKnobs {
  councilEnabled: boolean;
  councilMinIterations: number;
  councilCheckInterval: number;
  councilEarlyCheck: boolean;
}

export function shouldConvene(f: ConveneFacts, k: ConveneKnobs): ConveneTrigger | null {
  if (!k.councilEnabled) return null;
  if (f.forced) return 'forced';
  if (f.iteration < k.councilMinIterations) return null;
  if (f.circuitTripped) return 'circuit_breaker';
  if (f.claimed) return 'claim';
  if (k.councilCheckInterval > 0 && f.iteration % k.councilCheckInterval === 0) return 'interval';
  if (k.councilEarlyCheck && f.testsGreen === true) return 'tests_green';
  return null;
}
