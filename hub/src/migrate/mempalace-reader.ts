// Reads a Python MemPalace palace straight from its SQLite files, read-only: the Chroma
// `chroma.sqlite3` drawers (collection `mempalace_drawers`, document = metadata key `chroma:document`),
// `knowledge_graph.sqlite3` and `logstream.sqlite3`. Never writes to them; knows nothing of our stores.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';

import { formatHlc } from '../core/hlc.js';
import { REPLICA_ID_PATTERN } from '../core/ids.js';
import type { ReplicatedArtifact, ReplicatedEvent } from '../core/replication.js';
import { HubError } from '../errors.js';
import type { ForeignEntity, ForeignTriple } from '../kg/kg-import.js';

export const CHROMA_COLLECTION = 'mempalace_drawers';

/** One Chroma row: its drawer id, the verbatim document, and the rest of its metadata. */
export interface ChromaDrawer {
  row: number;
  id: string;
  document: string | null;
  metadata: Record<string, string | number | boolean | null>;
}

/** The files found in a MemPalace palace directory. */
export interface MemPalaceFiles {
  dir: string;
  chroma: string | null;
  kg: string | null;
  logstream: string | null;
}

function openRead(path: string): Database.Database {
  try {
    return new Database(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new HubError('store.failed', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** Locates the palace's files; the KG may sit beside the palace (older MemPalace keeps it in ~/.mempalace). */
export function findMemPalaceFiles(dir: string): MemPalaceFiles {
  if (!existsSync(dir)) throw new HubError('input.invalid', `${dir} does not exist`, { field: '--from-mempalace' });
  const at = (p: string): string | null => (existsSync(p) ? p : null);
  const files = {
    dir,
    chroma: at(join(dir, 'chroma.sqlite3')),
    kg: at(join(dir, 'knowledge_graph.sqlite3')) ?? at(join(dirname(dir), 'knowledge_graph.sqlite3')),
    logstream: at(join(dir, 'logstream.sqlite3')),
  };
  if (!files.chroma && !files.kg && !files.logstream)
    throw new HubError('input.invalid', `${dir} holds no chroma.sqlite3, knowledge_graph.sqlite3 or logstream.sqlite3: not a MemPalace palace`, {
      field: '--from-mempalace',
    });
  return files;
}

/** Reads the drawers of a Chroma file in row order, a page at a time. */
export class ChromaDrawerReader {
  private readonly db: Database.Database;
  private readonly segment: string;

  constructor(path: string) {
    this.db = openRead(path);
    try {
      const collection = this.db.prepare('SELECT id FROM collections WHERE name = ?').get(CHROMA_COLLECTION) as { id: string } | undefined;
      if (!collection) throw new HubError('input.invalid', `${path} has no '${CHROMA_COLLECTION}' collection`, { field: '--from-mempalace' });
      const segment = this.db.prepare(`SELECT id FROM segments WHERE collection = ? AND scope = 'METADATA'`).get(collection.id) as { id: string } | undefined;
      if (!segment) throw new HubError('input.invalid', `${path}: the '${CHROMA_COLLECTION}' collection has no metadata segment`, { field: '--from-mempalace' });
      this.segment = segment.id;
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  count(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM embeddings WHERE segment_id = ?').get(this.segment) as { n: number }).n;
  }

  /** How many drawers have a row number above `after`. */
  countAfter(after: number): number {
    return (this.db.prepare('SELECT count(*) AS n FROM embeddings WHERE segment_id = ? AND id > ?').get(this.segment, after) as { n: number }).n;
  }

  /** Up to `limit` drawers with a row number above `after`, in row order. */
  page(after: number, limit: number): ChromaDrawer[] {
    const rows = this.db
      .prepare('SELECT id, embedding_id FROM embeddings WHERE segment_id = ? AND id > ? ORDER BY id LIMIT ?')
      .all(this.segment, after, limit) as Array<{ id: number; embedding_id: string }>;
    if (rows.length === 0) return [];
    const meta = this.db
      .prepare(
        `SELECT id, key, string_value, int_value, float_value, bool_value FROM embedding_metadata WHERE id IN (${rows.map(() => '?').join(',')})`,
      )
      .all(...rows.map((r) => r.id)) as Array<{ id: number; key: string; string_value: string | null; int_value: number | null; float_value: number | null; bool_value: number | null }>;
    const byRow = new Map<number, ChromaDrawer>(rows.map((r) => [r.id, { row: r.id, id: r.embedding_id, document: null, metadata: {} }]));
    for (const m of meta) {
      const d = byRow.get(m.id);
      if (!d) continue;
      const value = m.string_value ?? m.int_value ?? m.float_value ?? (m.bool_value === null ? null : m.bool_value === 1);
      if (m.key === 'chroma:document') d.document = typeof value === 'string' ? value : null;
      else d.metadata[m.key] = value;
    }
    return [...byRow.values()];
  }

  close(): void {
    this.db.close();
  }
}

function hasColumn(db: Database.Database, table: string, column: string): boolean {
  return (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).some((c) => c.name === column);
}

/** The entities and triples of a MemPalace knowledge graph. */
export function readMemPalaceKg(path: string): { entities: ForeignEntity[]; triples: ForeignTriple[] } {
  const db = openRead(path);
  try {
    const col = (table: string, name: string, fallback = 'NULL'): string => (hasColumn(db, table, name) ? name : `${fallback} AS ${name}`);
    const entities = db.prepare(`SELECT id, ${col('entities', 'name', 'id')}, ${col('entities', 'type')}, ${col('entities', 'created_at')} FROM entities ORDER BY rowid`).all() as ForeignEntity[];
    const triples = db
      .prepare(
        `SELECT id, subject, predicate, object, ${col('triples', 'valid_from')}, ${col('triples', 'valid_to')}, ${col('triples', 'confidence')},
                ${col('triples', 'source_file')}, ${col('triples', 'source_drawer_id')}, ${col('triples', 'adapter_name')}, ${col('triples', 'extracted_at')}
         FROM triples ORDER BY rowid`,
      )
      .all() as Array<Omit<ForeignTriple, 'added_by' | 'created_at'> & { adapter_name: string | null; extracted_at: string | null }>;
    return {
      entities,
      triples: triples.map(({ adapter_name, extracted_at, ...t }) => ({ ...t, id: String(t.id), added_by: adapter_name, created_at: extracted_at })),
    };
  } finally {
    db.close();
  }
}

interface LegacyEventRow {
  rowid: number;
  id: string;
  type: string;
  stream: string;
  room: string;
  topic: string | null;
  from_agent: string;
  to_agent: string | null;
  correlation_id: string | null;
  branch: string | null;
  base_commit: string | null;
  status: string | null;
  body: string | null;
  created_at: string;
  metadata_json: string | null;
  origin_replica: string | null;
  origin_seq: number | null;
  hlc: string | null;
}

/**
 * The replica a MemPalace log's own events are stamped with when it predates replication: its
 * `replica.json` id when there is one, else one derived from the file's path (stable across runs).
 */
function fallbackReplica(path: string): string {
  try {
    const r = JSON.parse(readFileSync(join(dirname(path), 'replica.json'), 'utf8')) as { replica_id?: unknown };
    if (typeof r.replica_id === 'string' && REPLICA_ID_PATTERN.test(r.replica_id)) return r.replica_id;
  } catch {
    // no replica.json
  }
  return `rep_${createHash('sha256').update(`mempalace:${realpathSync(path)}`).digest('hex').slice(0, 12)}`;
}

function parseMetadata(text: string | null): Record<string, unknown> {
  try {
    const v = JSON.parse(text ?? '{}') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The events (per origin, ascending origin_seq) and artifacts of a MemPalace logstream. */
export function readMemPalaceLog(path: string): { events: ReplicatedEvent[]; artifacts: ReplicatedArtifact[] } {
  const db = openRead(path);
  try {
    const replica = fallbackReplica(path);
    const col = (table: string, name: string): string => (hasColumn(db, table, name) ? name : `NULL AS ${name}`);
    const rows = db
      .prepare(
        `SELECT rowid, id, type, stream, room, ${col('events', 'topic')}, from_agent, to_agent, correlation_id, branch, base_commit, status, body, created_at,
                metadata_json, ${col('events', 'origin_replica')}, ${col('events', 'origin_seq')}, ${col('events', 'hlc')}
         FROM events ORDER BY rowid`,
      )
      .all() as LegacyEventRow[];
    const links = db.prepare('SELECT event_id, artifact_id FROM event_artifacts ORDER BY event_id, artifact_id').all() as Array<{ event_id: string; artifact_id: string }>;
    const artifactsOf = new Map<string, string[]>();
    for (const l of links) artifactsOf.set(l.event_id, [...(artifactsOf.get(l.event_id) ?? []), l.artifact_id]);
    const events: ReplicatedEvent[] = rows.map((r) => {
      const origin = r.origin_replica && REPLICA_ID_PATTERN.test(r.origin_replica) ? r.origin_replica : replica;
      const originSeq = r.origin_replica && r.origin_seq ? r.origin_seq : r.rowid;
      const metadata = parseMetadata(r.metadata_json);
      // Our events have no topic column: a MemPalace topic travels in metadata.
      if (r.topic && metadata.topic === undefined) metadata.topic = r.topic;
      return {
        id: r.id,
        type: r.type,
        stream: r.stream,
        room: r.room,
        from_agent: r.from_agent,
        to_agent: r.to_agent,
        correlation_id: r.correlation_id,
        branch: r.branch,
        base_commit: r.base_commit,
        status: r.status,
        artifact_ids: artifactsOf.get(r.id) ?? [],
        body: r.body ?? '',
        metadata,
        created_at: r.created_at,
        origin_replica: origin,
        origin_seq: originSeq,
        hlc: r.hlc ?? formatHlc({ ms: Date.parse(r.created_at) || 0, counter: Math.min(r.rowid, 0xffffff) }, origin),
      } as ReplicatedEvent;
    });
    events.sort((a, b) => a.origin_replica.localeCompare(b.origin_replica) || a.origin_seq - b.origin_seq);
    const artifacts = (
      db.prepare(`SELECT id, kind, sha256, size_bytes, content, created_by, created_at, metadata_json, ${col('artifacts', 'origin_replica')} FROM artifacts ORDER BY rowid`).all() as Array<{
        id: string;
        kind: string;
        sha256: string;
        size_bytes: number;
        content: string;
        created_by: string;
        created_at: string;
        metadata_json: string | null;
        origin_replica: string | null;
      }>
    ).map((a) => ({
      id: a.id,
      kind: a.kind,
      sha256: a.sha256,
      size_bytes: a.size_bytes,
      content: a.content,
      created_by: a.created_by,
      created_at: a.created_at,
      metadata: parseMetadata(a.metadata_json),
      origin_replica: a.origin_replica && REPLICA_ID_PATTERN.test(a.origin_replica) ? a.origin_replica : replica,
    })) as ReplicatedArtifact[];
    return { events, artifacts };
  } finally {
    db.close();
  }
}
