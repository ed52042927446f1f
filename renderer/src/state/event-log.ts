// The dashboard's window on the log: events by id, kept in append order (seq) and bounded. Pure.

import type { LogEvent } from '../../../hub/src/core/types.js';

/** At most this many events are kept; the oldest go first. */
export const EVENT_CAP = 5_000;

/** Merges `incoming` into `current` (both in any order); returns a new array in append order. */
export function mergeEvents(
  current: readonly LogEvent[],
  incoming: readonly LogEvent[],
  cap = EVENT_CAP,
): LogEvent[] {
  if (incoming.length === 0) return current as LogEvent[];
  const byId = new Map<string, LogEvent>();
  for (const e of current) byId.set(e.id, e);
  let changed = false;
  for (const e of incoming) {
    const known = byId.get(e.id);
    // A full event replaces a preview of the same event, never the other way round.
    if (!known || (known.body_truncated && !e.body_truncated)) {
      byId.set(e.id, e);
      changed = true;
    }
  }
  if (!changed) return current as LogEvent[];
  const merged = [...byId.values()].sort((a, b) => a.seq - b.seq);
  return merged.length > cap ? merged.slice(merged.length - cap) : merged;
}

/** Distinct non-empty values of one field, most frequent first (for filter suggestions). */
export function valuesOf(events: readonly LogEvent[], pick: (e: LogEvent) => (string | null)[]): string[] {
  const counts = new Map<string, number>();
  for (const e of events) for (const v of pick(e)) if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([v]) => v);
}
