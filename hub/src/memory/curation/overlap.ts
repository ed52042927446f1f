// What wings share: room names, tags, entities (proper terms and KG names) and, for one pair of
// wings, near-duplicate drawers (nearest vector in the other wing, cosine ≥ 0.9). Reads only.

import { HubError, invalid } from '../../errors.js';
import { optionalPlace } from '../drawers/drawer-input.js';
import { DUPLICATE_THRESHOLD, type Memory } from '../drawers/memory.js';
import { roomProfiles, type Profiles, type TermCount } from '../navigation/room-profiles.js';

/** Rows of the first wing checked for near-duplicates in the second (the first filed, when over). */
export const OVERLAP_MAX_ROWS = 500;
const LISTED = 25;

interface WingTerms {
  rooms: Map<string, number>;
  terms: Map<string, TermCount>;
}

function wingTerms(profiles: Profiles, wing: string): WingTerms {
  const rooms = new Map<string, number>();
  const terms = new Map<string, TermCount>();
  for (const p of profiles.get(wing)?.values() ?? []) {
    rooms.set(p.room, p.drawers);
    for (const [k, t] of p.terms) {
      const have = terms.get(k);
      if (have) have.drawers += t.drawers;
      else terms.set(k, { ...t });
    }
  }
  return { rooms, terms };
}

function compare(a: WingTerms, b: WingTerms) {
  const rooms = [...a.rooms.keys()].filter((r) => b.rooms.has(r)).sort();
  const shared = [...a.terms]
    .filter(([k]) => b.terms.has(k))
    .map(([k, t]) => ({ key: k, display: t.display, drawers: Math.min(t.drawers, b.terms.get(k)?.drawers ?? 0) }))
    .sort((x, y) => y.drawers - x.drawers || x.key.localeCompare(y.key));
  const tags = shared.filter((t) => t.key.startsWith('#')).map((t) => ({ tag: t.key.slice(1), drawers: t.drawers }));
  const entities = shared.filter((t) => !t.key.startsWith('#')).map((t) => ({ entity: t.display, drawers: t.drawers }));
  return { rooms, tags, entities };
}

/** Pairwise overlap of every wing (or of one wing with the others), ranked; or the full view of one pair. */
export async function wingOverlap(memory: Memory, entityNames: readonly string[], raw: { wing_a?: unknown; wing_b?: unknown }) {
  const a = optionalPlace('wing', raw.wing_a);
  const b = optionalPlace('wing', raw.wing_b);
  if (b && !a) throw invalid('wing_a', 'give wing_a when giving wing_b');
  if (a && b && a === b) throw invalid('wing_b', 'wing_b must differ from wing_a');
  const profiles = await roomProfiles(memory, entityNames);
  for (const [field, w] of [['wing_a', a], ['wing_b', b]] as const)
    if (w && !profiles.has(w)) throw new HubError('memory.not_found', `no wing '${w}'`, { field });
  if (a && b) {
    const c = compare(wingTerms(profiles, a), wingTerms(profiles, b));
    const dups = await memory.crossDuplicates({ wing: a }, { wing: b }, DUPLICATE_THRESHOLD, OVERLAP_MAX_ROWS);
    const near = dups.pairs.sort((x, y) => y.similarity - x.similarity || x.drawer_id.localeCompare(y.drawer_id));
    return {
      wings: [a, b],
      shared_rooms: c.rooms,
      shared_tags: c.tags,
      shared_entities: c.entities.slice(0, 100),
      near_duplicates: near.map((p) => ({ [a]: { drawer_id: p.drawer_id, room: p.room }, [b]: { drawer_id: p.match_id, room: p.match_room }, similarity: p.similarity })),
      drawers_checked: dups.scanned,
      score: c.rooms.length * 2 + c.tags.length + c.entities.length + near.length * 2,
    };
  }
  const wings = [...profiles.keys()].sort();
  const terms = new Map(wings.map((w) => [w, wingTerms(profiles, w)]));
  const pairs = [];
  for (let i = 0; i < wings.length; i++)
    for (let j = i + 1; j < wings.length; j++) {
      const [x, y] = [wings[i] ?? '', wings[j] ?? ''];
      if (a && x !== a && y !== a) continue;
      const c = compare(terms.get(x) as WingTerms, terms.get(y) as WingTerms);
      const score = c.rooms.length * 2 + c.tags.length + c.entities.length;
      if (score === 0) continue;
      pairs.push({
        wings: [x, y],
        shared_rooms: c.rooms,
        shared_tags: c.tags.slice(0, LISTED).map((t) => t.tag),
        shared_entities: c.entities.slice(0, LISTED).map((e) => e.entity),
        counts: { rooms: c.rooms.length, tags: c.tags.length, entities: c.entities.length },
        score,
      });
    }
  pairs.sort((p, q) => q.score - p.score || p.wings.join('/').localeCompare(q.wings.join('/')));
  return { wing: a ?? null, pairs, count: pairs.length };
}
