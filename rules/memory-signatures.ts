/**
 * A failure's signature, as the lasting memory keys its episodes and patterns
 * (`tests:<test>:<reason>`, `gate:<gate>:<reason>`, `exit:<code>:<reason>`, `council:<reason>`), read
 * back into its parts. Pure.
 */

/** The parts of a signature: its topic (`tests`, the gate, `agent`, `council`), its subject and its detail. */
export function signatureParts(sig: string): { topic: string; subject: string; detail: string } {
  const [head, ...rest] = sig.split(':');
  if (head === 'tests') return { topic: 'tests', subject: rest[0] ?? '', detail: rest.slice(1).join(':') };
  if (head === 'gate') return { topic: rest[0] ?? 'gate', subject: rest[0] ?? '', detail: rest.slice(1).join(':') };
  if (head === 'exit') return { topic: 'agent', subject: `exit ${rest[0] ?? '?'}`, detail: rest.slice(1).join(':') };
  return { topic: head ?? 'other', subject: head ?? '', detail: rest.join(':') };
}
