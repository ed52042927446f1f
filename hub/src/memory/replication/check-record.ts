// The checks a remote memory-feed record passes before it is stored (docs/memory-replication.md):
// its clock stamp names its origin and is within the skew bound, its body is a well-formed record
// of the feed's own wing, its row passes the local rules for a drawer (id, wing, room, tags, verbatim
// content within the size limit and never a credential). Throws `sync.bad_message` / `sync.clock_skew`.

import { parseHlc } from '../../core/hlc.js';
import { isReplicaId } from '../../core/replication.js';
import { KG_FEED, type FeedRecord, type FeedRecordBody, type FeedRow } from '../../core/memory-feed.js';
import { HubError } from '../../errors.js';
import { drawerContent, drawerId, placeName, tagList } from '../drawers/drawer-input.js';

const KINDS = new Set(['put', 'del', 'leave', 'fact']);

export function checkFeedRecord(origin: string, wing: string, r: FeedRecord, nowMs: number, maxSkewMs: number): FeedRecordBody {
  const bad = (message: string): HubError =>
    new HubError('sync.bad_message', `memory feed ${origin}/${wing} record ${r.seq}: ${message}`, { data: { origin, wing } });
  const stamp = parseHlc(r.hlc);
  if (!stamp) throw bad(`hlc '${r.hlc.slice(0, 80)}' is not a clock stamp`);
  if (stamp.replica !== origin) throw bad(`hlc '${r.hlc}' was not stamped by its origin ${origin}: a forged origin`);
  if (stamp.ms > nowMs + maxSkewMs)
    throw new HubError(
      'sync.clock_skew',
      `memory feed ${origin}/${wing} record ${r.seq}: hlc ${r.hlc} is ${Math.round((stamp.ms - nowMs) / 1000)} s ahead of this hub's clock (the bound is ${Math.round(maxSkewMs / 1000)} s, PALACE_SYNC_MAX_SKEW_MS); refused`,
      { data: { origin, wing } },
    );
  let body: unknown;
  try {
    body = JSON.parse(r.body);
  } catch {
    throw bad('the body is not JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw bad('the body is not an object');
  const b = body as { k?: unknown; id?: unknown; row?: unknown };
  if (typeof b.k !== 'string' || !KINDS.has(b.k)) throw bad(`kind '${String(b.k).slice(0, 40)}' is not put, del, leave or fact`);
  if ((b.k === 'fact') !== (wing === KG_FEED)) throw bad(wing === KG_FEED ? 'the knowledge-graph feed carries only facts' : 'a fact travels only in the knowledge-graph feed');
  if (b.k === 'fact') {
    const f = (body as { fact?: unknown }).fact as Record<string, unknown> | undefined;
    if (!f || typeof f !== 'object' || Array.isArray(f)) throw bad('a fact record carries no fact');
    if (typeof f.triple_id !== 'string' || !/^t_[A-Za-z0-9_-]{1,128}$/.test(f.triple_id) || f.triple_id !== b.id) throw bad('the fact\'s triple_id is not the record\'s id');
    for (const k of ['subject', 'predicate', 'object'] as const)
      if (typeof f[k] !== 'string' || (f[k] as string).trim() === '' || (f[k] as string).length > 512) throw bad(`the fact's ${k} must be a name`);
    if (f.origin !== undefined && (typeof f.origin !== 'string' || !isReplicaId(f.origin))) throw bad("the fact's origin must be a replica id");
    for (const k of ['valid_from', 'valid_to'] as const) if (f[k] !== null && f[k] !== undefined && (typeof f[k] !== 'string' || (f[k] as string).length > 64)) throw bad(`the fact's ${k} must be a date or null`);
    return { k: 'fact', id: b.id as string, fact: f };
  }
  if (b.k !== 'fact')
    try {
      drawerId(b.id);
    } catch (err) {
      throw bad((err as Error).message);
    }
  if (b.k !== 'put') return { k: b.k as FeedRecordBody['k'], id: b.id as string };
  const row = b.row as Partial<FeedRow> | undefined;
  if (!row || typeof row !== 'object') throw bad('a put carries no row');
  try {
    if (placeName('wing', row.wing) !== wing)
      throw new Error(`the row is in wing '${String(row.wing).slice(0, 128)}', not the feed's wing '${wing}': a record may only file into its own feed's wing`);
    placeName('room', row.room);
    if (!Array.isArray(row.tags) || tagList(row.tags).length !== row.tags.length) throw new Error('tags must be a list of distinct lowercase tags');
    drawerContent(row.content);
    if (row.source_file !== null && typeof row.source_file !== 'string') throw new Error('source_file must be a string or null');
    if (typeof row.chunk_index !== 'number' || !Number.isInteger(row.chunk_index) || row.chunk_index < 0) throw new Error('chunk_index must be a whole number');
    if (row.parent_id !== null && (typeof row.parent_id !== 'string' || row.parent_id.length > 256)) throw new Error('parent_id must be a drawer id or null');
    if (typeof row.filed_at !== 'string' || Number.isNaN(Date.parse(row.filed_at))) throw new Error('filed_at must be a timestamp');
    if (typeof row.added_by !== 'string' || row.added_by.length > 256) throw new Error('added_by must be a name');
    if (row.useful !== null && typeof row.useful !== 'boolean') throw new Error('useful must be true, false or null');
    if (!row.metadata || typeof row.metadata !== 'object' || Array.isArray(row.metadata)) throw new Error('metadata must be an object');
    if (typeof row.embedder !== 'string' || row.embedder.length > 256) throw new Error('embedder must be a name');
    if (row.vector !== null && (typeof row.vector !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(row.vector) || row.vector.length > 65_536))
      throw new Error('vector must be base64 float32 or null');
  } catch (err) {
    throw bad(err instanceof HubError ? err.message : (err as Error).message);
  }
  return { k: 'put', id: b.id as string, row: row as FeedRow };
}
