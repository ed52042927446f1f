// Tunnels link a room of one wing to a room of another. Explicit tunnels are declared by an agent or
// a person and kept in <palace>/tunnels.json (written atomically, id from the canonical endpoint
// pair); inferred (passive) tunnels are derived from room names shared by wings and never stored.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { writeFileAtomic } from '../../atomic-file.js';
import { isoSeconds } from '../../core/ids.js';
import { HubError, invalid } from '../../errors.js';
import { optionalPlace, placeName } from '../drawers/drawer-input.js';
import type { Memory } from '../drawers/memory.js';
import { palaceShape } from './palace-graph.js';
import { taxonomy } from './rooms.js';

export interface RoomRef {
  wing: string;
  room: string;
}

export interface ExplicitTunnel {
  tunnel_id: string;
  kind: 'explicit';
  source: RoomRef;
  target: RoomRef;
  label: string;
  created_at: string;
  created_by: string | null;
}

export interface InferredTunnel {
  tunnel_id: string;
  kind: 'inferred';
  /** The room name the wings share. */
  room: string;
  wings: string[];
  /** Drawers in that room across those wings. */
  count: number;
}

export type Tunnel = ExplicitTunnel | InferredTunnel;

const LABEL_MAX = 200;

function file(palacePath: string): string {
  return join(palacePath, 'tunnels.json');
}

function hash16(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 16);
}

/** The id of the tunnel between two rooms: the same whichever end is named first. */
export function explicitTunnelId(a: RoomRef, b: RoomRef): string {
  const [x, y] = [`${a.wing}\u0000${a.room}`, `${b.wing}\u0000${b.room}`].sort();
  return `tunnel_${hash16('explicit', x ?? '', y ?? '')}`;
}

/** The id of the inferred tunnel carried by a room name shared across wings. */
export function inferredTunnelId(room: string): string {
  return `tunnel_${hash16('inferred', room)}`;
}

export function readExplicitTunnels(palacePath: string): ExplicitTunnel[] {
  try {
    const value = JSON.parse(readFileSync(file(palacePath), 'utf8')) as { tunnels?: unknown };
    if (Array.isArray(value.tunnels)) return value.tunnels as ExplicitTunnel[];
  } catch {
    // absent or unreadable: no explicit tunnels
  }
  return [];
}

function writeExplicitTunnels(palacePath: string, tunnels: readonly ExplicitTunnel[]): void {
  const sorted = [...tunnels].sort((a, b) => a.tunnel_id.localeCompare(b.tunnel_id));
  writeFileAtomic(file(palacePath), JSON.stringify({ tunnels: sorted }, null, 2) + '\n');
}

/** Inferred tunnels, most-connected first (the same list palace_graph_stats counts). */
export async function inferredTunnels(memory: Memory): Promise<InferredTunnel[]> {
  return (await palaceShape(memory)).tunnels.map((t) => ({ tunnel_id: inferredTunnelId(t.room), kind: 'inferred', ...t }));
}

/** Explicit tunnels (first) and inferred ones; `kind` narrows, `wing` keeps those touching it. */
export async function listTunnels(memory: Memory, palacePath: string, raw: { wing?: unknown; kind?: unknown }) {
  const wing = optionalPlace('wing', raw.wing);
  const kind = raw.kind ?? 'all';
  if (kind !== 'all' && kind !== 'explicit' && kind !== 'inferred') throw invalid('kind', "kind must be 'all', 'explicit' or 'inferred'");
  const explicit = kind === 'inferred' ? [] : readExplicitTunnels(palacePath).filter((t) => !wing || t.source.wing === wing || t.target.wing === wing);
  const inferred = kind === 'explicit' ? [] : (await inferredTunnels(memory)).filter((t) => !wing || t.wings.includes(wing));
  const tunnels: Tunnel[] = [...explicit, ...inferred];
  return { tunnels, count: tunnels.length, explicit: explicit.length, inferred: inferred.length };
}

/** Declares a tunnel between rooms of two different wings; declaring it again updates only its label. */
export async function createTunnel(
  memory: Memory,
  palacePath: string,
  raw: { source_wing?: unknown; source_room?: unknown; target_wing?: unknown; target_room?: unknown; label?: unknown; created_by?: unknown },
  now: Date = new Date(),
) {
  const source = { wing: placeName('wing', raw.source_wing), room: placeName('room', raw.source_room) };
  const target = { wing: placeName('wing', raw.target_wing), room: placeName('room', raw.target_room) };
  if (source.wing === target.wing)
    throw invalid('target_wing', `a tunnel joins two different wings; rooms of one wing ('${source.wing}') are joined by hallways`);
  if (raw.label !== undefined && typeof raw.label !== 'string') throw invalid('label', 'label must be a string');
  const label = typeof raw.label === 'string' ? raw.label.trim().slice(0, LABEL_MAX) : '';
  const tax = await taxonomy(memory, palacePath);
  for (const [field, end] of [['source_room', source], ['target_room', target]] as const)
    if (tax[end.wing]?.[end.room] === undefined)
      throw new HubError('memory.not_found', `no room '${end.room}' in wing '${end.wing}' (file a drawer there or declare it with palace rooms add)`, { field });
  const tunnel_id = explicitTunnelId(source, target);
  const tunnels = readExplicitTunnels(palacePath);
  const existing = tunnels.find((t) => t.tunnel_id === tunnel_id);
  if (existing) {
    if (typeof raw.label === 'string' && label !== existing.label) {
      existing.label = label;
      writeExplicitTunnels(palacePath, tunnels);
    }
    return { success: true, created: false, tunnel: existing };
  }
  const createdBy = typeof raw.created_by === 'string' && raw.created_by.trim() ? raw.created_by.trim().slice(0, 128) : null;
  const tunnel: ExplicitTunnel = { tunnel_id, kind: 'explicit', source, target, label, created_at: isoSeconds(now), created_by: createdBy };
  writeExplicitTunnels(palacePath, [...tunnels, tunnel]);
  return { success: true, created: true, tunnel };
}

export function deleteTunnel(palacePath: string, raw: { tunnel_id?: unknown }) {
  if (typeof raw.tunnel_id !== 'string' || !/^tunnel_[0-9a-f]{16}$/.test(raw.tunnel_id.trim()))
    throw invalid('tunnel_id', 'tunnel_id must be a tunnel id (tunnel_<16 hex>)');
  const id = raw.tunnel_id.trim();
  const tunnels = readExplicitTunnels(palacePath);
  const gone = tunnels.find((t) => t.tunnel_id === id);
  if (!gone)
    throw new HubError('memory.not_found', `no explicit tunnel '${id}' (inferred tunnels follow the room names; rename a room to remove one)`, {
      field: 'tunnel_id',
    });
  writeExplicitTunnels(palacePath, tunnels.filter((t) => t.tunnel_id !== id));
  return { success: true, tunnel_id: id, deleted: true, tunnel: gone };
}
