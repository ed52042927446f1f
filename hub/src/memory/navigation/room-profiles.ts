// What each room talks about: per (wing, room) the entities its drawers mention (proper terms of the
// verbatim text, tags, known KG entity names) with how many drawers mention each. Reads only.

import { mentions, properTerms, termKey } from '../../core/terms.js';
import type { DrawerFilter } from '../../vector/vector-store.js';
import type { Memory } from '../drawers/memory.js';

export interface TermCount {
  /** How the term is shown (first spelling seen; tags as `#tag`). */
  display: string;
  /** Drawers of the room that mention it. */
  drawers: number;
}

export interface RoomProfile {
  wing: string;
  room: string;
  drawers: number;
  /** Term key → count. Tag keys start with `#`. */
  terms: Map<string, TermCount>;
}

/** wing → room → profile. */
export type Profiles = Map<string, Map<string, RoomProfile>>;

export async function roomProfiles(memory: Memory, entityNames: readonly string[], filter: DrawerFilter = {}): Promise<Profiles> {
  const rows = await memory.scanDrawers(filter, { columns: ['wing', 'room', 'tags', 'content'] });
  const profiles: Profiles = new Map();
  for (const d of rows) {
    const rooms = profiles.get(d.wing) ?? new Map<string, RoomProfile>();
    profiles.set(d.wing, rooms);
    const profile = rooms.get(d.room) ?? { wing: d.wing, room: d.room, drawers: 0, terms: new Map<string, TermCount>() };
    rooms.set(d.room, profile);
    profile.drawers++;
    const seen = new Map<string, string>(properTerms(d.content));
    for (const key of mentions(d.content, entityNames)) if (!seen.has(key)) seen.set(key, entityNames.find((n) => termKey(n) === key) ?? key);
    for (const tag of d.tags) seen.set(`#${tag}`, `#${tag}`);
    for (const [key, display] of seen) {
      const t = profile.terms.get(key);
      if (t) t.drawers++;
      else profile.terms.set(key, { display, drawers: 1 });
    }
  }
  return profiles;
}

/** Terms both rooms mention, strongest first; weight = the smaller of the two drawer counts. */
export function sharedTerms(a: RoomProfile, b: RoomProfile): Array<{ key: string; display: string; weight: number }> {
  const out: Array<{ key: string; display: string; weight: number }> = [];
  for (const [key, ta] of a.terms) {
    const tb = b.terms.get(key);
    if (tb) out.push({ key, display: ta.display, weight: Math.min(ta.drawers, tb.drawers) });
  }
  return out.sort((x, y) => y.weight - x.weight || x.key.localeCompare(y.key));
}
