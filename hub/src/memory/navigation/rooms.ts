// Rooms: a room exists when drawers sit in it or when it was declared (kept in <palace>/rooms.json,
// written atomically). Renaming a room moves its drawers; removing one refuses while drawers remain.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { writeFileAtomic } from '../../atomic-file.js';
import { dict, type Dict } from '../../core/dict.js';
import { HubError, invalid } from '../../errors.js';
import { optionalPlace, placeName } from '../drawers/drawer-input.js';
import type { Memory } from '../drawers/memory.js';
import { palaceShape } from './palace-graph.js';

type Declared = Dict<string[]>;

function file(palacePath: string): string {
  return join(palacePath, 'rooms.json');
}

/** wing → its declared rooms; entries that are not lists of names are ignored. */
function readDeclared(palacePath: string): Declared {
  const declared = dict<string[]>();
  try {
    const value = JSON.parse(readFileSync(file(palacePath), 'utf8')) as { rooms?: unknown };
    if (value.rooms && typeof value.rooms === 'object')
      for (const [wing, rooms] of Object.entries(value.rooms))
        if (Array.isArray(rooms)) declared[wing] = rooms.filter((r): r is string => typeof r === 'string');
  } catch {
    // absent or unreadable: no declared rooms
  }
  return declared;
}

function writeDeclared(palacePath: string, rooms: Declared): void {
  writeFileAtomic(file(palacePath), JSON.stringify({ rooms }, null, 2) + '\n');
}

/** wing → room → drawer count, declared empty rooms included with 0. */
export async function taxonomy(memory: Memory, palacePath: string): Promise<Record<string, Record<string, number>>> {
  const shape = await palaceShape(memory);
  const out = shape.taxonomy;
  for (const [wing, rooms] of Object.entries(readDeclared(palacePath))) for (const room of rooms) (out[wing] ??= dict<number>())[room] ??= 0;
  return out;
}

export async function listRooms(memory: Memory, palacePath: string, rawWing: unknown) {
  const wing = optionalPlace('wing', rawWing);
  const tax = await taxonomy(memory, palacePath);
  const declared = readDeclared(palacePath);
  const rooms = Object.entries(tax)
    .filter(([w]) => !wing || w === wing)
    .flatMap(([w, rs]) => Object.entries(rs).map(([room, drawers]) => ({ wing: w, room, drawers, declared: (declared[w] ?? []).includes(room) })))
    .sort((a, b) => a.wing.localeCompare(b.wing) || a.room.localeCompare(b.room));
  return { wing: wing ?? null, rooms, count: rooms.length };
}

export function addRoom(palacePath: string, raw: { wing?: unknown; room?: unknown }) {
  const wing = placeName('wing', raw.wing);
  const room = placeName('room', raw.room);
  const declared = readDeclared(palacePath);
  const rooms = declared[wing] ?? [];
  const created = !rooms.includes(room);
  if (created) writeDeclared(palacePath, { ...declared, [wing]: [...rooms, room].sort() });
  return { success: true, wing, room, created };
}

export async function renameRoom(memory: Memory, palacePath: string, raw: { wing?: unknown; room?: unknown; new_room?: unknown }) {
  const wing = placeName('wing', raw.wing);
  const room = placeName('room', raw.room);
  const newRoom = placeName('room', raw.new_room);
  if (room === newRoom) throw invalid('new_room', 'new_room is the same as room');
  const declared = readDeclared(palacePath);
  const wasDeclared = (declared[wing] ?? []).includes(room);
  const moved = await memory.patchDrawers({ wing, room }, { room: newRoom }, 'rooms rename');
  if (moved === 0 && !wasDeclared) throw new HubError('memory.not_found', `no room '${room}' in wing '${wing}'`, { field: 'room' });
  if (wasDeclared) writeDeclared(palacePath, { ...declared, [wing]: [...new Set([...(declared[wing] ?? []).filter((r) => r !== room), newRoom])].sort() });
  return { success: true, wing, room, new_room: newRoom, moved_drawers: moved };
}

export async function removeRoom(memory: Memory, palacePath: string, raw: { wing?: unknown; room?: unknown }) {
  const wing = placeName('wing', raw.wing);
  const room = placeName('room', raw.room);
  const drawers = await memory.countDrawers({ wing, room });
  if (drawers > 0)
    throw new HubError('input.invalid', `room '${wing}/${room}' still holds ${drawers} drawers; move or delete them first (drawers are never dropped with a room)`, {
      field: 'room',
      data: { drawers },
    });
  const declared = readDeclared(palacePath);
  if (!(declared[wing] ?? []).includes(room)) throw new HubError('memory.not_found', `no room '${room}' in wing '${wing}'`, { field: 'room' });
  const rest = (declared[wing] ?? []).filter((r) => r !== room);
  const { [wing]: _gone, ...others } = declared;
  writeDeclared(palacePath, rest.length ? { ...others, [wing]: rest } : others);
  return { success: true, wing, room, removed: true };
}

/** Moves a wing's declared rooms to another wing (merged with any it already has); returns them. */
export function moveDeclaredWing(palacePath: string, from: string, to: string, dryRun = false): string[] {
  const declared = readDeclared(palacePath);
  const rooms = declared[from] ?? [];
  if (rooms.length === 0 || dryRun) return rooms;
  const { [from]: _gone, ...others } = declared;
  writeDeclared(palacePath, { ...others, [to]: [...new Set([...(declared[to] ?? []), ...rooms])].sort() });
  return rooms;
}
