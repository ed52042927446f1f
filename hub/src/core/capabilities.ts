// The capabilities an agent may be registered with and a task.request may require (docs/identity.md). Pure.

import { invalid } from '../errors.js';

/** The capabilities an agent may declare (`palace agent add --can ...`) and a task.request may require. */
export const CAPABILITIES = ['write', 'bash', 'review', 'read-only'] as const;
export type Capability = (typeof CAPABILITIES)[number];
/** Validates a capability list (`write,bash`), naming what is unknown. */
export function capabilityList(field: string, value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  const list = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(list)) throw invalid(field, `${field} must be a list of capabilities (${CAPABILITIES.join(', ')})`);
  const out = [...new Set(list.map((v) => (typeof v === 'string' ? v.trim() : '')).filter(Boolean))];
  const unknown = out.filter((c) => !(CAPABILITIES as readonly string[]).includes(c));
  if (unknown.length > 0) throw invalid(field, `unknown capabilit${unknown.length > 1 ? 'ies' : 'y'} ${unknown.join(', ')}; known: ${CAPABILITIES.join(', ')}`);
  return out;
}

