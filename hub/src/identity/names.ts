// Names no client may write under (the hub's own, replica ids), the desk's default name, and the
// event types only the hub or a tool with checks appends. Pure: no I/O.

import { HubError } from '../errors.js';

/** The name the hub writes under (the lease sweeper's claim.expired, an agent's retirement). */
export const HUB_NAME = 'hub';
/** The name a human at the dashboard writes under by default (renderer/src/lib/desk.ts). */
export const DESK_NAME = 'human';

const RESERVED = new Set([HUB_NAME, 'palace', 'system', 'root', '*']);

/** A name only the hub may write under: hub, palace, system, root, `*`, `hub:...`, or a replica id (`rep_...`). */
export function isReservedName(name: string): boolean {
  const n = name.trim().toLowerCase();
  return RESERVED.has(n) || n.startsWith('hub:') || /^rep_[0-9a-f]+$/.test(n);
}

/** Refuses a name that cannot be registered (reserved, the desk's, or not a plain `<machine>-<harness>` token). */
export function checkRegistrableName(name: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name))
    throw new HubError('input.invalid', `agent name '${name}' must be 1-64 letters, digits, '.', '_' or '-' (e.g. laptop-codex)`, { field: 'name' });
  if (isReservedName(name) || name === DESK_NAME)
    throw new HubError('identity.reserved', `'${name}' is reserved (the hub's or the desk's name); choose <machine>-<harness>`, { field: 'name' });
}

/**
 * Event types palace_event_append refuses: the hub appends them (claim.expired by the sweeper,
 * agent.retired) or a tool appends them after its checks (claim.renewed: palace_task_renew; the
 * release of a claim: palace_task_release; event.ack: palace_event_ack with its lease; file
 * reservations: palace_reserve / palace_release with their conflict checks).
 */
export const HUB_ONLY_TYPES: ReadonlyMap<string, string> = new Map([
  ['claim.expired', 'palace_task_release (or the hub when a lease lapses)'],
  ['claim.renewed', 'palace_task_renew'],
  ['event.ack', 'palace_event_ack'],
  ['file.reserved', 'palace_reserve'],
  ['file.released', 'palace_release'],
  ['agent.retired', 'palace agent retire'],
]);

/** Refuses a raw append of a hub-only event type, naming the tool to use instead. */
export function checkAppendType(type: unknown): void {
  if (typeof type !== 'string') return;
  const road = HUB_ONLY_TYPES.get(type.trim());
  if (road)
    throw new HubError('event.hub_only', `${type} is not appended raw: use ${road}; nothing was appended`, { field: 'type', data: { use: road } });
}
