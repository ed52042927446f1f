// The palace's shape from drawer placement alone: wing → room → count, and implicit tunnels (a room
// name that appears in two or more wings links them). From the memory's placement census; never embeds.

import { dict } from '../../core/dict.js';
import { DIARY_ROOM } from '../drawers/diary.js';
import type { Memory } from '../drawers/memory.js';

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
  const places = await memory.placements();
  const taxonomy = dict<Record<string, number>>();
  const wingsOfRoom = new Map<string, Map<string, number>>();
  let drawers = 0;
  for (const [w, byRoom] of places) {
    if (wing !== undefined && w !== wing) continue;
    const rooms = (taxonomy[w] ??= dict<number>());
    for (const [room, n] of byRoom) {
      rooms[room] = n;
      drawers += n;
      const byWing = wingsOfRoom.get(room) ?? new Map<string, number>();
      byWing.set(w, n);
      wingsOfRoom.set(room, byWing);
    }
  }
  const tunnels = [...wingsOfRoom]
    // Every agent's diary sits in a room named `diary`; that shared name links no topics.
    .filter(([room, byWing]) => byWing.size >= 2 && room !== DIARY_ROOM)
    .map(([room, byWing]) => ({ room, wings: [...byWing.keys()].sort(), count: [...byWing.values()].reduce((a, b) => a + b, 0) }))
    .sort((a, b) => b.wings.length - a.wings.length || b.count - a.count || a.room.localeCompare(b.room));
  return {
    taxonomy,
    drawers,
    wings: Object.keys(taxonomy).length,
    rooms: Object.values(taxonomy).reduce((n, rooms) => n + Object.keys(rooms).length, 0),
    tunnels,
  };
}
