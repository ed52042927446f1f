// Hallway inference on hand-made room profiles: shared terms make a hallway, and terms that most
// rooms of a wing mention (HubError, JSON across a code base) never do.

import { afterEach, describe, expect, it } from 'vitest';

import { inferHallways } from '../../hub/src/memory/navigation/hallways.js';
import type { Profiles, RoomProfile } from '../../hub/src/memory/navigation/room-profiles.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

function room(name: string, terms: Record<string, number>): RoomProfile {
  return { wing: 'code', room: name, drawers: 10, terms: new Map(Object.entries(terms).map(([k, n]) => [k.toLowerCase(), { display: k, drawers: n }])) };
}

function profiles(rooms: RoomProfile[]): Profiles {
  return new Map([['code', new Map(rooms.map((r) => [r.room, r]))]]);
}

let dir: TmpDir | undefined;
afterEach(() => dir?.cleanup());

describe('inferHallways', () => {
  it('joins rooms by what they share, leaving out terms most rooms of the wing mention', () => {
    dir = makeTmpDir();
    const rooms = [
      room('memory', { HubError: 9, DrawerFilter: 5, StoredDrawer: 4 }),
      room('vector', { HubError: 8, DrawerFilter: 6, StoredDrawer: 3 }),
      room('logstream', { HubError: 7, LogEvent: 5 }),
      room('core', { HubError: 6, LogEvent: 4 }),
      room('http', { Koa: 3 }),
    ];
    const halls = inferHallways(profiles(rooms), dir.path);
    expect(halls.map((h) => [...h.rooms])).toEqual([
      ['memory', 'vector'],
      ['core', 'logstream'],
    ]);
    expect(halls[0]).toMatchObject({ label: 'DrawerFilter, StoredDrawer', strength: 8 });
    expect(halls.flatMap((h) => h.shared)).not.toContain('HubError');
  });

  it('keeps every shared term in a wing of fewer than four rooms', () => {
    dir = makeTmpDir();
    const halls = inferHallways(profiles([room('a', { HubError: 3, Koa: 1 }), room('b', { HubError: 2, Koa: 2 }), room('c', { Koa: 1 })]), dir.path);
    expect(halls[0]).toMatchObject({ rooms: ['a', 'b'], label: 'HubError, Koa', strength: 3 });
  });
});
