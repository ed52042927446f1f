// Read-only views of the palace shared by the daemon endpoints (/list, /graph, /stats) and their
// MCP tools, so the CLI gets the same answer from a live hub over HTTP or in-process.

import { invalid } from '../../errors.js';
import { optionalPlace } from '../drawers/drawer-input.js';
import type { KnowledgeGraph } from '../../kg/knowledge-graph.js';
import type { Memory } from '../drawers/memory.js';
import { palaceShape } from './palace-graph.js';

const PREVIEW_CHARS = 160;

/** A whole number from a query string or JSON value, within bounds, or the fallback when absent. */
export function boundedInt(name: string, raw: unknown, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === null || raw === '') return fallback;
  const n = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw invalid(name, `${name} must be a whole number from ${min} to ${max}`);
  return n;
}

/** Drawer metadata (no full content: a preview and its length), newest last, paged. */
export async function listDrawers(memory: Memory, raw: { wing?: unknown; room?: unknown; limit?: unknown; offset?: unknown }) {
  const wing = optionalPlace('wing', raw.wing);
  const room = optionalPlace('room', raw.room);
  const limit = boundedInt('limit', raw.limit, 50, 1, 1000);
  const offset = boundedInt('offset', raw.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  const filter = { ...(wing ? { wing } : {}), ...(room ? { room } : {}) };
  // A wing's order is kept by the census (no scan per page); without a wing, the order (filed_at, id)
  // is found from two narrow columns. Only the page's rows are read whole.
  const { ids, total } = wing
    ? await memory.wingPage(wing, room, offset, limit)
    : await Promise.all([memory.scanDrawers(filter, { limit, offset, columns: ['id', 'filed_at'] }), memory.countDrawers(filter)]).then(([page, n]) => ({ ids: page.map((r) => r.drawer_id), total: n }));
  const byId = new Map((ids.length === 0 ? [] : await memory.scanDrawers({ ids })).map((r) => [r.drawer_id, r]));
  const rows = ids.map((id) => byId.get(id)).filter((r) => r !== undefined);
  return {
    drawers: rows.map(({ content, embedder: _e, ...meta }) => ({
      ...meta,
      preview: content.length > PREVIEW_CHARS ? `${content.slice(0, PREVIEW_CHARS - 1)}…` : content,
      content_chars: content.length,
    })),
    total,
    limit,
    offset,
    wing: wing ?? null,
    room: room ?? null,
  };
}

/** Wing/room/tunnel counts plus a slice of the knowledge graph. */
export async function graphView(memory: Memory, kg: KnowledgeGraph, rawLimit: unknown) {
  const limit = boundedInt('limit', rawLimit, 20, 1, 200);
  const shape = await palaceShape(memory);
  return {
    counts: { wings: shape.wings, rooms: shape.rooms, drawers: shape.drawers, tunnels: shape.tunnels.length },
    wings: Object.fromEntries(
      Object.entries(shape.taxonomy).map(([w, rooms]) => [w, { rooms, drawers: Object.values(rooms).reduce((a, b) => a + b, 0) }]),
    ),
    tunnels: shape.tunnels.slice(0, limit),
    kg: { stats: kg.stats(), top_entities: kg.topEntities(limit), sample_triples: kg.recentFacts(limit) },
  };
}

/** The three-block stats envelope: kg, graph, status. */
export async function statsView(memory: Memory, kg: KnowledgeGraph, status: Record<string, unknown>) {
  const shape = await palaceShape(memory);
  return {
    kg: kg.stats(),
    graph: { wings: shape.wings, rooms: shape.rooms, drawers: shape.drawers, tunnels: shape.tunnels.length, top_tunnels: shape.tunnels.slice(0, 10) },
    status: { ...status, embedder: memory.embedderInfo() },
  };
}
