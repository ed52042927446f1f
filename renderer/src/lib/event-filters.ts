// Filters of the Events view, applied to the events the dashboard holds. Pure.

import type { LogEvent } from '../../../hub/src/core/types.js';

export interface EventFilters {
  agent: string;
  type: string;
  status: string;
  stream: string;
  correlation: string;
}

export const NO_FILTERS: EventFilters = { agent: '', type: '', status: '', stream: '', correlation: '' };

export function activeFilterCount(f: EventFilters): number {
  return Object.values(f).filter((v) => v.trim() !== '').length;
}

const has = (value: string | null, needle: string): boolean => (value ?? '').toLowerCase().includes(needle);

/** Whether an event passes every filter; text filters match case-insensitively anywhere in the field. */
export function matchesFilters(e: LogEvent, f: EventFilters): boolean {
  const agent = f.agent.trim().toLowerCase();
  if (agent && !has(e.from_agent, agent) && !has(e.to_agent, agent)) return false;
  const type = f.type.trim().toLowerCase();
  if (type && !has(e.type, type)) return false;
  if (f.status && e.status !== f.status) return false;
  const stream = f.stream.trim().toLowerCase();
  if (stream && !has(e.stream, stream) && !has(e.room, stream)) return false;
  const corr = f.correlation.trim().toLowerCase();
  if (corr && !has(e.correlation_id, corr)) return false;
  return true;
}
