// Memory replication (issue 34, docs/memory-replication.md): the canonical bytes of a memory feed.
// Each origin hub keeps one feed per shared wing: records (a drawer row put, deleted, or moved out of
// the wing) numbered 1, 2, 3 … and hash-chained like the event log; checkpoints over the chain are
// signed by the origin's key. A record's body is a JSON string carried verbatim, so every hub hashes
// the same bytes. Pure: hashing and signatures live in logstream/signatures.ts.

/** What a record does to one drawer row. `leave`: the row moved to another wing (delete here unless a put wins). */
export type FeedRecordKind = 'put' | 'del' | 'leave' | 'fact';

/** The feed facts of the knowledge graph travel in (not a wing: wing names may not start with '#'). */
export const KG_FEED = '#kg';

/** A drawer row as a feed carries it (the vector as base64 of little-endian float32, or null). */
export interface FeedRow {
  wing: string;
  room: string;
  tags: string[];
  content: string;
  source_file: string | null;
  chunk_index: number;
  parent_id: string | null;
  filed_at: string;
  added_by: string;
  useful: boolean | null;
  metadata: Record<string, unknown>;
  embedder: string;
  vector: string | null;
}

export interface FeedRecordBody {
  k: FeedRecordKind;
  id: string;
  row?: FeedRow;
  /** A knowledge-graph fact as stated or closed (kind `fact`, feed KG_FEED). */
  fact?: Record<string, unknown>;
}

/** A record as it travels: its position in the (origin, wing) feed, its clock stamp and its body text. */
export interface FeedRecord {
  seq: number;
  hlc: string;
  body: string;
}

/** A signed point of one (origin, wing) feed: after record `seq`, the chain is `chain`. */
export interface FeedCheckpoint {
  origin: string;
  wing: string;
  seq: number;
  chain: string;
  sig: string;
}

export function feedRecordBytes(origin: string, wing: string, r: FeedRecord): Buffer {
  return Buffer.from(JSON.stringify(['palace-memfeed-record-v1', origin, wing, r.seq, r.hlc, r.body]), 'utf8');
}

/**
 * What a puller signs to ask a hub for memory (docs/memory-replication.md): who asks, which hub is
 * asked, the route and its parameters (empty ones left out) and the time, so a signature serves for
 * that one request only (not another wing, another hub, or much later).
 */
export function memoryRequestBytes(puller: string, server: string, path: string, params: Readonly<Record<string, string | undefined>>, at: string): Buffer {
  const entries = Object.entries(params)
    .filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')
    .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  return Buffer.from(JSON.stringify(['palace-memfeed-request-v1', puller, server, path, entries, at]), 'utf8');
}

export function feedCheckpointBytes(c: Omit<FeedCheckpoint, 'sig'>): Buffer {
  return Buffer.from(JSON.stringify(['palace-memfeed-checkpoint-v1', c.origin, c.wing, c.seq, c.chain]), 'utf8');
}

/** Rank of a kind when two records carry the same stamp (a move writes `leave` and `put` together). */
export function kindRank(kind: FeedRecordKind): number {
  return kind === 'fact' ? 3 : kind === 'put' ? 2 : kind === 'del' ? 1 : 0;
}

/** Orders two (stamp, kind) versions of a row: last writer wins by hybrid clock, then by kind. */
export function compareVersions(a: { hlc: string; kind: FeedRecordKind }, b: { hlc: string; kind: FeedRecordKind }): number {
  if (a.hlc !== b.hlc) return a.hlc < b.hlc ? -1 : 1;
  return kindRank(a.kind) - kindRank(b.kind);
}

export function encodeVector(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

export function decodeVector(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  const copy = new Uint8Array(bytes.length - (bytes.length % 4));
  copy.set(bytes.subarray(0, copy.length));
  return new Float32Array(copy.buffer);
}
