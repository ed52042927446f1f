// Hallways join two rooms of one wing that talk about the same things: shared entities (proper
// terms, tags, KG entity names; not those most rooms of the wing share) counted at least min_count
// times. Derived from the drawers on each read (id from wing + sorted room pair); only deletions are
// stored, in <palace>/hallways.json, so a deleted hallway is never inferred again. Never edits drawers.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { writeFileAtomic } from '../../atomic-file.js';
import { isoSeconds } from '../../core/ids.js';
import { HubError, invalid } from '../../errors.js';
import { optionalPlace } from '../drawers/drawer-input.js';
import type { Memory } from '../drawers/memory.js';
import { boundedInt } from './palace-views.js';
import { roomProfiles, sharedTerms, type Profiles, type RoomProfile } from './room-profiles.js';

export const HALLWAY_DEFAULTS = { minCount: 2, limit: 100, maxLimit: 500, labelTerms: 5 } as const;

export interface Hallway {
  hallway_id: string;
  wing: string;
  /** The two rooms, sorted. */
  rooms: [string, string];
  /** The strongest shared terms, joined: what the hallway is about. */
  label: string;
  shared: string[];
  /** Sum over shared terms of the smaller per-room drawer count. */
  strength: number;
}

interface Deleted {
  hallway_id: string;
  wing: string;
  rooms: [string, string];
  label: string;
  deleted_at: string;
}

function file(palacePath: string): string {
  return join(palacePath, 'hallways.json');
}

export function hallwayId(wing: string, roomA: string, roomB: string): string {
  const [x, y] = [roomA, roomB].sort();
  return `hallway_${createHash('sha256').update(['hallway', wing, x ?? '', y ?? ''].join('\u0000')).digest('hex').slice(0, 16)}`;
}

function readDeleted(palacePath: string): Deleted[] {
  try {
    const value = JSON.parse(readFileSync(file(palacePath), 'utf8')) as { deleted?: unknown };
    if (Array.isArray(value.deleted)) return value.deleted as Deleted[];
  } catch {
    // absent or unreadable: nothing deleted
  }
  return [];
}

function writeDeleted(palacePath: string, deleted: readonly Deleted[]): void {
  const sorted = [...deleted].sort((a, b) => a.hallway_id.localeCompare(b.hallway_id));
  writeFileAtomic(file(palacePath), JSON.stringify({ deleted: sorted }, null, 2) + '\n');
}

/**
 * Terms that more than half of a wing's rooms mention (in a wing of four rooms or more): they join
 * everything to everything (`HubError`, `JSON` across a code base), so they say nothing about a pair.
 */
function ubiquitousTerms(rooms: readonly RoomProfile[]): Set<string> {
  const common = new Set<string>();
  if (rooms.length < 4) return common;
  const roomsWith = new Map<string, number>();
  for (const r of rooms) for (const key of r.terms.keys()) roomsWith.set(key, (roomsWith.get(key) ?? 0) + 1);
  for (const [key, n] of roomsWith) if (n > rooms.length / 2) common.add(key);
  return common;
}

/** Every live hallway of the profiled wings, strongest first (deleted ones left out). */
export function inferHallways(profiles: Profiles, palacePath: string, minCount: number = HALLWAY_DEFAULTS.minCount): Hallway[] {
  const deleted = new Set(readDeleted(palacePath).map((d) => d.hallway_id));
  const out: Hallway[] = [];
  for (const [wing, rooms] of profiles) {
    const list = [...rooms.values()].sort((a, b) => a.room.localeCompare(b.room));
    const common = ubiquitousTerms(list);
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i];
        const b = list[j];
        if (!a || !b) continue;
        const shared = sharedTerms(a, b).filter((t) => !common.has(t.key));
        const strength = shared.reduce((n, t) => n + t.weight, 0);
        const id = hallwayId(wing, a.room, b.room);
        if (strength < minCount || deleted.has(id)) continue;
        const top = shared.slice(0, HALLWAY_DEFAULTS.labelTerms).map((t) => t.display);
        out.push({ hallway_id: id, wing, rooms: [a.room, b.room], label: top.join(', '), shared: shared.map((t) => t.display), strength });
      }
  }
  return out.sort((a, b) => b.strength - a.strength || a.wing.localeCompare(b.wing) || a.rooms.join('/').localeCompare(b.rooms.join('/')));
}

function minCountOf(raw: unknown): number {
  return boundedInt('min_count', raw, HALLWAY_DEFAULTS.minCount, 1, 1000);
}

export async function listHallways(
  memory: Memory,
  palacePath: string,
  entityNames: readonly string[],
  raw: { wing?: unknown; limit?: unknown; offset?: unknown; min_count?: unknown },
) {
  const wing = optionalPlace('wing', raw.wing);
  const limit = boundedInt('limit', raw.limit, HALLWAY_DEFAULTS.limit, 1, HALLWAY_DEFAULTS.maxLimit);
  const offset = boundedInt('offset', raw.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  const all = inferHallways(await roomProfiles(memory, entityNames, wing ? { wing } : {}), palacePath, minCountOf(raw.min_count));
  const hallways = all.slice(offset, offset + limit);
  return { hallways, total: all.length, count: hallways.length, offset, limit, wing: wing ?? null };
}

/** Deletes a live hallway and remembers it, so it is not inferred again. */
export async function deleteHallway(memory: Memory, palacePath: string, entityNames: readonly string[], raw: { hallway_id?: unknown }, now: Date = new Date()) {
  if (typeof raw.hallway_id !== 'string' || !/^hallway_[0-9a-f]{16}$/.test(raw.hallway_id.trim()))
    throw invalid('hallway_id', 'hallway_id must be a hallway id (hallway_<16 hex>)');
  const id = raw.hallway_id.trim();
  // Any min_count: a hallway shown with --min-count 1 can be deleted too.
  const hallway = inferHallways(await roomProfiles(memory, entityNames), palacePath, 1).find((h) => h.hallway_id === id);
  if (!hallway) throw new HubError('memory.not_found', `no hallway '${id}' (already deleted, or its rooms no longer share anything)`, { field: 'hallway_id' });
  writeDeleted(palacePath, [...readDeleted(palacePath), { hallway_id: id, wing: hallway.wing, rooms: hallway.rooms, label: hallway.label, deleted_at: isoSeconds(now) }]);
  return { success: true, deleted: true, hallway_id: id, hallway };
}
