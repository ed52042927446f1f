// The palace's shape from drawer placement alone: wing → room → count, and implicit tunnels (a room
// name that appears in two or more wings links them). Reads the wing/room columns only; never embeds.

import { dict } from '../core/dict.js';
import { DIARY_ROOM } from './diary.js';
import type { Memory } from './memory.js';

export interface PalaceShape {
  /** wing → room → drawer rows. */
  taxonomy: Record<string, Record<string, number>>;
  drawers: number;
  wings: number;
  rooms: number;
  /** Rooms shared by several wings, most-connected first. */
  tunnels: Array<{ room: string; wings: string[]; count: number }>;
}

export async function palaceShape(memory: Memory, wing?: string): Promise<PalaceShape> {
  const rows = await memory.scanDrawers(wing ? { wing } : {}, { columns: ['wing', 'room'] });
  const taxonomy = dict<Record<string, number>>();
  const wingsOfRoom = new Map<string, Map<string, number>>();
  for (const { wing: w, room } of rows) {
    const rooms = (taxonomy[w] ??= dict<number>());
    rooms[room] = (rooms[room] ?? 0) + 1;
    const byWing = wingsOfRoom.get(room) ?? new Map<string, number>();
    byWing.set(w, (byWing.get(w) ?? 0) + 1);
    wingsOfRoom.set(room, byWing);
  }
  const tunnels = [...wingsOfRoom]
    // Every agent's diary sits in a room named `diary`; that shared name links no topics.
    .filter(([room, byWing]) => byWing.size >= 2 && room !== DIARY_ROOM)
    .map(([room, byWing]) => ({ room, wings: [...byWing.keys()].sort(), count: [...byWing.values()].reduce((a, b) => a + b, 0) }))
    .sort((a, b) => b.wings.length - a.wings.length || b.count - a.count || a.room.localeCompare(b.room));
  return {
    taxonomy,
    drawers: rows.length,
    wings: Object.keys(taxonomy).length,
    rooms: Object.values(taxonomy).reduce((n, rooms) => n + Object.keys(rooms).length, 0),
    tunnels,
  };
}
