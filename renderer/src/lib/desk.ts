// The human at the desk: the agent name the dashboard writes under, the notification opt-in, and
// (pure) which new events deserve a notification and which reservations a task still holds.

import type { LogEvent } from '../../../hub/src/core/types.js';

export const DEFAULT_DESK_AGENT = 'human';
const AGENT_KEY = 'palace.desk.agent';
const NOTIFY_KEY = 'palace.desk.notify';

/** The part of `Storage` the settings use (the page passes localStorage; tests a map). */
export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

type Store = KeyValueStore | undefined;

function local(): Store {
  try {
    return (globalThis as { localStorage?: KeyValueStore }).localStorage;
  } catch {
    return undefined;
  }
}

/** The configured desk agent name (default `human`); kept in this browser's localStorage. */
export function readDeskAgent(store: Store = local()): string {
  return store?.getItem(AGENT_KEY)?.trim() || DEFAULT_DESK_AGENT;
}

export function writeDeskAgent(name: string, store: Store = local()): string {
  const n = name.trim();
  if (!n || n === DEFAULT_DESK_AGENT) store?.removeItem(AGENT_KEY);
  else store?.setItem(AGENT_KEY, n);
  return n || DEFAULT_DESK_AGENT;
}

export function readNotifyOptIn(store: Store = local()): boolean {
  return store?.getItem(NOTIFY_KEY) === '1';
}

export function writeNotifyOptIn(on: boolean, store: Store = local()): void {
  if (on) store?.setItem(NOTIFY_KEY, '1');
  else store?.removeItem(NOTIFY_KEY);
}

export interface DeskNotice {
  event_id: string;
  title: string;
  body: string;
  correlation_id: string | null;
}

/**
 * What among `fresh` events is worth a notification for `agent`: a task addressed to it, or a
 * patch landing on a task it opened (`requested` = correlation ids whose request it wrote).
 */
export function deskNotices(
  fresh: readonly LogEvent[],
  agent: string,
  requested: ReadonlySet<string>,
): DeskNotice[] {
  const out: DeskNotice[] = [];
  for (const e of fresh) {
    if (e.from_agent === agent) continue;
    const line =
      e.body
        .split('\n')
        .find((l) => l.trim() !== '')
        ?.trim()
        .slice(0, 140) ?? '';
    if (e.type === 'task.request' && e.to_agent === agent)
      out.push({
        event_id: e.id,
        correlation_id: e.correlation_id,
        title: `Task for you from ${e.from_agent}`,
        body: `${e.correlation_id ?? e.id}${line ? `: ${line}` : ''}`,
      });
    else if (e.type === 'patch.ready' && e.correlation_id && requested.has(e.correlation_id))
      out.push({
        event_id: e.id,
        correlation_id: e.correlation_id,
        title: `Patch ready on ${e.correlation_id}`,
        body: `from ${e.from_agent}${line ? `: ${line}` : ''}`,
      });
  }
  return out;
}

export interface Reservation {
  event: LogEvent;
  paths: string[];
  exclusive: boolean;
  expires_at: string | null;
}

function reservedBody(e: LogEvent): {
  paths?: unknown;
  exclusive?: unknown;
  expires_at?: unknown;
  correlation_id?: unknown;
} {
  try {
    const v: unknown = JSON.parse(e.body);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The `file.reserved` events of a task not yet released (by `file.released`) nor expired at `now`. */
export function activeReservations(
  events: readonly LogEvent[],
  correlationId: string,
  now: number,
): Reservation[] {
  const released = new Set<string>();
  for (const e of events)
    if (e.type === 'file.released') {
      const id = (reservedBody(e) as { reservation_id?: unknown }).reservation_id;
      if (typeof id === 'string') released.add(id);
    }
  const out: Reservation[] = [];
  for (const e of events) {
    if (e.type !== 'file.reserved' || released.has(e.id)) continue;
    const b = reservedBody(e);
    if (e.correlation_id !== correlationId && b.correlation_id !== correlationId) continue;
    const expires = typeof b.expires_at === 'string' ? b.expires_at : null;
    if (expires && Date.parse(expires) <= now) continue;
    out.push({
      event: e,
      paths: Array.isArray(b.paths) ? b.paths.filter((p): p is string => typeof p === 'string') : [],
      exclusive: b.exclusive === true,
      expires_at: expires,
    });
  }
  return out;
}

/** A correlation id from a title: `task_` + lowercase words joined by `_` (at most 40 characters). */
export function correlationFromTitle(title: string): string {
  const slug = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 40)
    .replace(/_+$/, '');
  return slug ? `task_${slug}` : '';
}
