// Who wrote something: the spec's field is `created_by`; `added_by` (MemPalace's name) and a tool's
// own field (the diary's `agent_name`) are aliases of it. One identity per call: fields naming
// different agents are refused, and an identity field a tool does not record is refused, never dropped.

import { HubError, invalid } from '../../errors.js';

/** Every argument name that names the writer, in any tool. */
export const IDENTITY_FIELDS: ReadonlySet<string> = new Set(['created_by', 'added_by', 'agent_name', 'agent', 'from_agent', 'author', 'writer']);

/**
 * Checks the identity arguments of a mutating tool call against the fields the tool declares:
 * an identity field it does not declare is refused (it would be silently dropped), and declared
 * identity fields that name different agents are refused.
 */
export function checkIdentityArgs(tool: string, declared: ReadonlySet<string>, args: Record<string, unknown>): void {
  const accepted = [...declared].filter((f) => IDENTITY_FIELDS.has(f));
  for (const key of Object.keys(args)) {
    if (!IDENTITY_FIELDS.has(key) || declared.has(key)) continue;
    throw new HubError(
      'input.invalid',
      accepted.length > 0
        ? `${tool} does not take '${key}'; name yourself with ${accepted.map((f) => `'${f}'`).join(' or ')}`
        : `${tool} records no agent identity; remove '${key}' (it would be dropped)`,
      { field: key },
    );
  }
  const given = accepted.filter((f) => typeof args[f] === 'string' && (args[f] as string).trim() !== '');
  const names = new Set(given.map((f) => (args[f] as string).trim()));
  if (names.size > 1)
    throw invalid(given[1] ?? given[0] ?? 'created_by', `${given.map((f) => `${f} '${String(args[f]).trim()}'`).join(' and ')} name different agents; give one identity`);
}

/** The writer named by the first of `fields` that is set (after checkIdentityArgs, they agree). */
export function writerOf(args: Record<string, unknown>, ...fields: string[]): string | undefined {
  for (const f of fields) {
    const v = args[f];
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return undefined;
}
