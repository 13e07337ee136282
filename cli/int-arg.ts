/** Commander's parser of an integer option within bounds (`--port`, ...). Moved out of cli/main.ts. */
import { InvalidArgumentError } from 'commander';

export function intArg(name: string, min: number, max: number) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw.trim())) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got ${n}`);
    return n;
  };
}
