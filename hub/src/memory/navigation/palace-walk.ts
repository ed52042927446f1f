// Moving through the palace: rooms are nodes; hallways (within a wing), explicit tunnels and
// inferred tunnels (a room name shared by wings) are edges. Traverse lists what is reachable within
// n hops; walk returns a depth-limited tree. Reads only; never embeds.

import { HubError, invalid } from '../../errors.js';
import { optionalPlace, placeName } from '../drawers/drawer-input.js';
import { inferHallways } from './hallways.js';
import type { Memory } from '../drawers/memory.js';
import { roomProfiles } from './room-profiles.js';
import { taxonomy } from './rooms.js';
import { inferredTunnels, readExplicitTunnels } from './tunnels.js';

export const WALK_LIMITS = { maxHops: 6, maxDepth: 5, defaultHops: 2, defaultDepth: 2 } as const;

export type Follow = 'palace' | 'tunnels';

export interface Via {
  kind: 'hallway' | 'tunnel' | 'inferred_tunnel';
  id: string;
  label: string;
}

interface Edge {
  to: string;
  via: Via;
}

interface Graph {
  drawers: Map<string, number>;
  edges: Map<string, Edge[]>;
}

export interface WalkNode {
  wing: string;
  room: string;
  drawers: number;
  via?: Via;
  /** Already placed elsewhere in the tree: shown, not expanded again. */
  seen?: true;
  children: WalkNode[];
}

const key = (wing: string, room: string): string => `${wing}\u0000${room}`;
const split = (k: string): { wing: string; room: string } => {
  const at = k.indexOf('\u0000');
  return { wing: k.slice(0, at), room: k.slice(at + 1) };
};

async function buildGraph(memory: Memory, palacePath: string, entityNames: readonly string[], follow: Follow): Promise<Graph> {
  const tax = await taxonomy(memory, palacePath);
  const drawers = new Map<string, number>();
  for (const [w, rooms] of Object.entries(tax)) for (const [r, n] of Object.entries(rooms)) drawers.set(key(w, r), n);
  const edges = new Map<string, Edge[]>();
  const link = (a: string, b: string, via: Via): void => {
    // One edge per pair of rooms: the first kind linked (explicit tunnel, then inferred, then hallway) wins.
    if (!drawers.has(a) || !drawers.has(b) || a === b || edges.get(a)?.some((e) => e.to === b)) return;
    edges.set(a, [...(edges.get(a) ?? []), { to: b, via }]);
    edges.set(b, [...(edges.get(b) ?? []), { to: a, via }]);
  };
  for (const t of readExplicitTunnels(palacePath))
    link(key(t.source.wing, t.source.room), key(t.target.wing, t.target.room), { kind: 'tunnel', id: t.tunnel_id, label: t.label || `${t.source.room} ↔ ${t.target.room}` });
  for (const t of await inferredTunnels(memory))
    for (let i = 0; i < t.wings.length; i++)
      for (let j = i + 1; j < t.wings.length; j++)
        link(key(t.wings[i] ?? '', t.room), key(t.wings[j] ?? '', t.room), { kind: 'inferred_tunnel', id: t.tunnel_id, label: t.room });
  if (follow === 'palace')
    for (const h of inferHallways(await roomProfiles(memory, entityNames), palacePath))
      link(key(h.wing, h.rooms[0]), key(h.wing, h.rooms[1]), { kind: 'hallway', id: h.hallway_id, label: h.label });
  for (const list of edges.values()) list.sort((a, b) => a.to.localeCompare(b.to) || a.via.kind.localeCompare(b.via.kind));
  return { drawers, edges };
}

/** Rooms reachable from `start_room` (in every wing holding it, or one wing) within max_hops. */
export async function traverse(memory: Memory, palacePath: string, entityNames: readonly string[], raw: { start_room?: unknown; wing?: unknown; max_hops?: unknown }) {
  const room = placeName('room', raw.start_room);
  const wing = optionalPlace('wing', raw.wing);
  const maxHops = raw.max_hops ?? WALK_LIMITS.defaultHops;
  if (typeof maxHops !== 'number' || !Number.isInteger(maxHops) || maxHops < 1 || maxHops > WALK_LIMITS.maxHops)
    throw invalid('max_hops', `max_hops must be a whole number from 1 to ${WALK_LIMITS.maxHops}`);
  const graph = await buildGraph(memory, palacePath, entityNames, 'palace');
  const starts = [...graph.drawers.keys()].filter((k) => split(k).room === room && (!wing || split(k).wing === wing)).sort();
  if (starts.length === 0) throw new HubError('memory.not_found', `no room '${room}'${wing ? ` in wing '${wing}'` : ''}`, { field: 'start_room' });
  const hop = new Map(starts.map((s) => [s, 0]));
  const rooms: Array<{ wing: string; room: string; drawers: number; hop: number; connected_via: Via & { from: string } }> = [];
  let frontier = starts;
  for (let h = 1; h <= maxHops && frontier.length > 0; h++) {
    const next: string[] = [];
    for (const from of frontier)
      for (const e of graph.edges.get(from) ?? []) {
        if (hop.has(e.to)) continue;
        hop.set(e.to, h);
        next.push(e.to);
        const f = split(from);
        rooms.push({ ...split(e.to), drawers: graph.drawers.get(e.to) ?? 0, hop: h, connected_via: { ...e.via, from: `${f.wing}/${f.room}` } });
      }
    frontier = next;
  }
  return { start_room: room, wing: wing ?? null, starts: starts.map(split), max_hops: maxHops, rooms, count: rooms.length };
}

/** A depth-limited tree from a room (or every room of a wing, or a room name in every wing). */
export async function walkPalace(
  memory: Memory,
  palacePath: string,
  entityNames: readonly string[],
  raw: { wing?: unknown; room?: unknown; follow?: unknown; depth?: unknown },
) {
  const wing = optionalPlace('wing', raw.wing);
  const room = optionalPlace('room', raw.room);
  if (!wing && !room) throw invalid('room', 'give a room, a wing, or both to start the walk from');
  const follow = raw.follow ?? 'palace';
  if (follow !== 'palace' && follow !== 'tunnels') throw invalid('follow', "follow must be 'palace' (hallways and tunnels) or 'tunnels'");
  const depth = raw.depth ?? WALK_LIMITS.defaultDepth;
  if (typeof depth !== 'number' || !Number.isInteger(depth) || depth < 0 || depth > WALK_LIMITS.maxDepth)
    throw invalid('depth', `depth must be a whole number from 0 to ${WALK_LIMITS.maxDepth}`);
  const graph = await buildGraph(memory, palacePath, entityNames, follow);
  const starts = [...graph.drawers.keys()].filter((k) => (!wing || split(k).wing === wing) && (!room || split(k).room === room)).sort();
  if (starts.length === 0)
    throw new HubError('memory.not_found', `no room to start from (${[wing && `wing '${wing}'`, room && `room '${room}'`].filter(Boolean).join(', ')})`, {
      field: room ? 'room' : 'wing',
    });
  const node = (k: string, via?: Via): WalkNode => ({ ...split(k), drawers: graph.drawers.get(k) ?? 0, ...(via ? { via } : {}), children: [] });
  const placed = new Set(starts);
  const roots = starts.map((s) => node(s));
  let frontier = roots.map((n, i) => ({ n, k: starts[i] ?? '', parent: undefined as string | undefined }));
  for (let d = 1; d <= depth && frontier.length > 0; d++) {
    const next: typeof frontier = [];
    for (const { n, k, parent } of frontier)
      for (const e of graph.edges.get(k) ?? []) {
        if (e.to === parent) continue;
        if (placed.has(e.to)) {
          n.children.push({ ...node(e.to, e.via), seen: true });
          continue;
        }
        placed.add(e.to);
        const child = node(e.to, e.via);
        n.children.push(child);
        next.push({ n: child, k: e.to, parent: k });
      }
    frontier = next;
  }
  return { wing: wing ?? null, room: room ?? null, follow, depth, roots, rooms_reached: placed.size - starts.length };
}
