// Shapes the dashboard reads from the hub beyond the logstream types: /statusz, /sync/peers and the
// memory tools and palace_tasks. Loose where the hub may add fields; every reader tolerates missing ones.

import type { TaskState } from '../../../hub/src/core/task-state.js';

export interface StatusPayload {
  ok?: boolean;
  server?: {
    name?: string;
    version?: string;
    transport?: string;
    scheme?: string;
    host?: string;
    port?: number;
    pid?: number;
    started_at?: string;
    uptime_seconds?: number;
  };
  palace?: {
    path?: string;
    backend?: string;
    sqlite_integrity?: string;
    /** The absolute command that runs palace (node and bin/palace.js) for the stdio client configs. */
    stdio_command?: { command: string; args: string[]; env?: Record<string, string> };
  };
  writer?: { mode?: string; lease?: { path?: string; pid?: number } | null };
  requests?: { total?: number; mcp?: number; by_status?: Record<string, number>; lock_pending?: number };
  logstream?: { replica_id?: string; events?: number; sse_clients?: number };
  clients?: { recent?: StatusClient[] };
  [block: string]: unknown;
}

export interface StatusClient {
  client_id: string;
  name: string | null;
  version: string | null;
  user_agent: string | null;
  remote: string | null;
  first_seen: string;
  last_seen: string;
  requests: number;
  last_method: string | null;
}

export type VersionVector = Record<string, number>;

export interface PeerEntry {
  name: string;
  url: string;
  replica_id: string | null;
  /** null: not tried yet. */
  reachable: boolean | null;
  in_flight: boolean;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  remote_version_vector: VersionVector | null;
  pulled_events_total: number | null;
  /** The peer's key fingerprint (SHA256:…), null when not seen yet. */
  public_key_fingerprint: string | null;
  /** 'pinned' (key in peers.json), 'tofu' (trusted on first use), null when unknown. */
  trust: 'pinned' | 'tofu' | null;
  /** Pages this hub refused from the peer, newest first. */
  rejected_pages: Array<{ at: string | null; origin: string | null; code: string; reason: string }>;
  /** Wings whose memory replicates with this peer (empty: none). */
  memory_wings: string[];
  /** The knowledge graph's facts replicate with this peer. */
  memory_kg: boolean;
}

export interface PeersPayload {
  self: {
    replica_id: string;
    name: string;
    version_vector: VersionVector;
    public_key_fingerprint: string | null;
    /** Events of other origins held from before signed sync, not yet covered by their signature. */
    unverified_events: VersionVector;
  };
  peers: PeerEntry[];
  /** Origins proven to have signed two chains at one position: no longer accepted (issue 29). */
  equivocations: Array<{ origin: string; pos: number | null; ours_chain: string; theirs_chain: string; via_peer: string | null; detected_at: string | null; public_key_fingerprint: string | null }>;
  /** Events an impostor gave under a replica id whose real key was pinned later: kept aside, never served. */
  quarantined: Array<{ origin: string; held_as: string; events: number | null; public_key_fingerprint: string | null; reason: string; quarantined_at: string | null }>;
  /** Replicas known only through gossip (no entry of their own in peers.json). */
  unnamed_origins: string[];
  sync_interval_s: number | null;
  sync_enabled: boolean | null;
  peers_file: { path: string | null; error: string | null } | null;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

function vector(v: unknown): VersionVector {
  const out: VersionVector = {};
  for (const [k, n] of Object.entries(obj(v))) if (typeof n === 'number') out[k] = n;
  return out;
}

/** /sync/peers as the dashboard reads it, whatever optional fields this hub's version sends. */
export function normalizePeers(raw: unknown): PeersPayload {
  const r = obj(raw);
  const self = obj(r.self);
  const file = r.peers_file === undefined ? null : obj(r.peers_file);
  return {
    self: {
      replica_id: str(self.replica_id) ?? '?',
      name: str(self.name) ?? '?',
      version_vector: vector(self.version_vector),
      public_key_fingerprint: str(self.public_key_fingerprint),
      unverified_events: vector(self.unverified_events),
    },
    peers: (Array.isArray(r.peers) ? r.peers : []).map((p) => {
      const e = obj(p);
      return {
        name: str(e.name) ?? '?',
        url: str(e.url) ?? '',
        replica_id: str(e.replica_id),
        reachable: typeof e.reachable === 'boolean' ? e.reachable : null,
        in_flight: e.in_flight === true,
        last_attempt_at: str(e.last_attempt_at),
        last_success_at: str(e.last_success_at),
        last_error: str(e.last_error),
        last_error_at: str(e.last_error_at),
        remote_version_vector: e.remote_version_vector ? vector(e.remote_version_vector) : null,
        pulled_events_total: num(e.pulled_events_total),
        public_key_fingerprint: str(e.public_key_fingerprint),
        trust: e.trust === 'pinned' || e.trust === 'tofu' ? e.trust : null,
        rejected_pages: (Array.isArray(e.rejected_pages) ? e.rejected_pages : []).map((x) => {
          const j = obj(x);
          return { at: str(j.at), origin: str(j.origin), code: str(j.code) ?? '?', reason: str(j.reason) ?? '' };
        }),
        memory_wings: (Array.isArray(e.memory_wings) ? e.memory_wings : []).filter((w): w is string => typeof w === 'string'),
        memory_kg: e.memory_kg === true,
      };
    }),
    equivocations: (Array.isArray(r.equivocations) ? r.equivocations : []).map((x) => {
      const j = obj(x);
      return {
        origin: str(j.origin) ?? '?',
        pos: num(j.pos),
        ours_chain: str(j.ours_chain) ?? '',
        theirs_chain: str(j.theirs_chain) ?? '',
        via_peer: str(j.via_peer),
        detected_at: str(j.detected_at),
        public_key_fingerprint: str(j.public_key_fingerprint),
      };
    }),
    quarantined: (Array.isArray(r.quarantined) ? r.quarantined : []).map((x) => {
      const j = obj(x);
      return {
        origin: str(j.origin) ?? '?',
        held_as: str(j.held_as) ?? '?',
        events: num(j.events),
        public_key_fingerprint: str(j.public_key_fingerprint),
        reason: str(j.reason) ?? '',
        quarantined_at: str(j.quarantined_at),
      };
    }),
    unnamed_origins: (Array.isArray(r.unnamed_origins)
      ? r.unnamed_origins
      : Array.isArray(r.gossip_origins)
        ? r.gossip_origins
        : []
    ).filter((o): o is string => typeof o === 'string'),
    sync_interval_s: num(r.sync_interval_s),
    sync_enabled: typeof r.sync_enabled === 'boolean' ? r.sync_enabled : null,
    peers_file: file ? { path: str(file.path), error: str(file.error) } : null,
  };
}

export interface SearchHit {
  drawer_id?: string;
  wing?: string;
  room?: string;
  content?: string;
  text?: string;
  source_file?: string | null;
  /** The fused score the list is sorted by (never increases down the list). */
  score?: number;
  similarity?: number | null;
  /** The ranked lists that found the hit: 'vector', 'text'. */
  matched?: string[];
  location?: HitLocation | null;
  snippet?: HitSnippet | null;
  /** For a hit from a mined file: its content hash when mined, and when. */
  mined?: { sha256: string; at: string } | null;
  /** The mined file changed since it was mined (re-mining refreshes it). */
  stale?: boolean;
}

export interface Drawer {
  drawer_id?: string;
  id?: string;
  wing?: string;
  room?: string;
  content?: string;
  text?: string;
  source_file?: string | null;
  metadata?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface KgFact {
  subject: string;
  predicate: string;
  object: string;
  valid_from?: string | null;
  valid_to?: string | null;
  current?: boolean;
  direction?: string;
}

/** A value loaded from the hub, with why it is missing when it is. */
export type Loadable<T> =
  | { state: 'idle' }
  | { state: 'loading' }
  | { state: 'ready'; data: T; at: number }
  | { state: 'unavailable'; message: string }
  | { state: 'error'; message: string };

/** Task counts palace_tasks returns: every task matching its filters (status aside), by status. */
export interface TaskCountsPayload {
  all: number;
  active: number;
  done: number;
  by_status: Record<string, number>;
}

/** One page of palace_tasks: true totals over the whole log, a cursor for the next page. */
export interface TaskPagePayload {
  tasks: TaskState[];
  count: number;
  total: number;
  counts: TaskCountsPayload;
  has_more: boolean;
  cursor: string | null;
}

/** Where a search hit sits in its source file (relative path when the hub knows the mined root). */
export interface HitLocation {
  path: string;
  line_start: number;
  line_end: number;
}

/** The best-matching lines of a hit, with [start, end) offsets of the query terms in `text`. */
export interface HitSnippet {
  text: string;
  line_start: number | null;
  marks: Array<[number, number]>;
}

/** One row of palace_list_drawers: metadata and a short preview. */
export interface DrawerRow {
  drawer_id: string;
  wing: string;
  room: string;
  source_file: string | null;
  filed_at: string;
  /** Who filed it; hubs before it sent only added_by. */
  created_by?: string;
  /** Deprecated alias of created_by. */
  added_by: string;
  preview: string;
  content_chars: number;
  metadata?: Record<string, unknown>;
}
