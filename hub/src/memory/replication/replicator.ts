// Memory replication's two ends inside the memory (docs/memory-replication.md):
// - CaptureStore, a VectorStore wrapper under the write journal: every local write touching a shared
//   wing appends records to this hub's feed of that wing (a put per row written, a del per row
//   deleted, a leave when a row moves out of the wing). Writes made while applying remote records run
//   in `asRemote` and are not captured (they already belong to their origin's feed).
// - Replicator: seeds the feed of a newly shared wing with its drawers, and applies verified remote
//   records to the memory by last-writer-wins on each row (hybrid clock, then kind), tombstones kept
//   in the version register so a re-delivered put never resurrects a deleted row.
// - Re-embedding in the background: a row that arrives without a vector this hub can use (another
//   embedder) is stored at once (its text searchable) under a placeholder vector, queued in the feed
//   store, and re-embedded through the embedding pool batch by batch; until then vector search skips it.

import { AsyncLocalStorage } from 'node:async_hooks';

import { decodeVector, encodeVector, compareVersions, type FeedRecordBody, type FeedRecordKind, type FeedRow } from '../../core/memory-feed.js';
import { ForwardingVectorStore } from '../../vector/forwarding-store.js';
import type { DrawerFilter, DrawerPatch, StoredDrawer, VectorStore } from '../../vector/vector-store.js';
import { embeddingInput } from '../drawers/embedding-input.js';
import { PLACEMENT_HISTORY_KEY, PLACEMENT_HISTORY_MAX, type PlacementRecord } from '../drawers/memory.js';
import type { FeedStore, PendingRecord } from './feed-store.js';

/** Metadata key naming the hub whose version of a replicated row this hub holds. */
export const REPLICATED_FROM_KEY = 'replicated_from';

/** The embedder a replicated row is stamped with until it is re-embedded here (its vector is a placeholder). */
export const PENDING_EMBEDDER = 'replication/pending-reembed';

/** Rows re-embedded per background batch. */
const REEMBED_BATCH = 64;

/** A unit vector standing in for a row's own until it is re-embedded (never returned by vector search). */
function placeholderVector(dimensions: number): Float32Array {
  return new Float32Array(dimensions).fill(1 / Math.sqrt(Math.max(1, dimensions)));
}

/** How many replicated rows wait for their vector here (shared by the replicator and the capture store's search). */
export class ReembedGauge {
  waiting = 0;
}

const remoteContext = new AsyncLocalStorage<boolean>();

/** Runs `fn` as the application of remote records: its writes are not captured into this hub's feeds. */
export function asRemote<T>(fn: () => Promise<T>): Promise<T> {
  return remoteContext.run(true, fn);
}

export interface ReplicationContext {
  /** The feed store (opened on first use). */
  feed(): FeedStore;
  /** The wings this hub shares with at least one peer (peers.json "wings"). */
  sharedWings(): ReadonlySet<string>;
  /** Runs a write of replicated rows under the hub's request lock (absent: unlocked, e.g. the CLI). */
  withWriteLock?<T>(fn: () => Promise<T>): Promise<T>;
  /** Whether the feed store exists already (opening it would create it). */
  feedExists?(): boolean;
  /** Applies replicated knowledge-graph facts (each with the origin of the feed it came in); returns how many changed something. */
  applyFacts?(facts: ReadonlyArray<{ fact: Record<string, unknown>; feedOrigin: string }>): number;
}

export function feedRow(d: StoredDrawer): FeedRow {
  const { [REPLICATED_FROM_KEY]: _from, ...metadata } = d.metadata;
  void _from;
  return {
    wing: d.wing,
    room: d.room,
    tags: d.tags,
    content: d.content,
    source_file: d.source_file,
    chunk_index: d.chunk_index,
    parent_id: d.parent_id,
    filed_at: d.filed_at,
    added_by: d.added_by,
    useful: d.useful,
    metadata,
    embedder: d.embedder,
    vector: d.embedder !== PENDING_EMBEDDER && d.vector && d.vector.length > 0 ? encodeVector(d.vector) : null,
  };
}

const ID_BATCH = 500;

export class CaptureStore extends ForwardingVectorStore {
  constructor(
    inner: VectorStore,
    private readonly ctx: ReplicationContext,
    private readonly gauge: ReembedGauge = new ReembedGauge(),
  ) {
    super(inner);
  }

  /** Vector search never returns a row whose vector is still a placeholder (re-embedding pending). */
  override async search(vector: Float32Array, filter: DrawerFilter, limit: number): Promise<Array<{ drawer: StoredDrawer; distance: number }>> {
    const waiting = this.gauge.waiting;
    if (waiting === 0) return this.inner.search(vector, filter, limit);
    const hits = await this.inner.search(vector, filter, limit + Math.min(waiting, 1000));
    return hits.filter((h) => h.drawer.embedder !== PENDING_EMBEDDER).slice(0, limit);
  }

  private active(): ReadonlySet<string> | undefined {
    if (remoteContext.getStore() === true) return undefined;
    const wings = this.ctx.sharedWings();
    return wings.size > 0 ? wings : undefined;
  }

  private async wingsOf(ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (let i = 0; i < ids.length; i += ID_BATCH)
      for (const r of await this.inner.scan({ ids: ids.slice(i, i + ID_BATCH) }, { columns: ['id', 'wing'] })) out.set(r.id, r.wing);
    return out;
  }

  override async upsert(drawers: readonly StoredDrawer[]): Promise<void> {
    const shared = this.active();
    if (!shared) return this.inner.upsert(drawers);
    const before = await this.wingsOf(drawers.map((d) => d.id));
    await this.inner.upsert(drawers);
    const items: Array<{ wing: string; body: FeedRecordBody }> = [];
    for (const d of drawers) {
      const was = before.get(d.id);
      if (was !== undefined && was !== d.wing && shared.has(was)) items.push({ wing: was, body: { k: 'leave', id: d.id } });
      if (shared.has(d.wing)) items.push({ wing: d.wing, body: { k: 'put', id: d.id, row: feedRow(d) } });
    }
    this.ctx.feed().appendLocal(items);
  }

  override async patch(filter: DrawerFilter, patch: DrawerPatch): Promise<number> {
    const shared = this.active();
    if (!shared) return this.inner.patch(filter, patch);
    const before = new Map((await this.inner.scan(filter, { columns: ['id', 'wing'] })).map((r) => [r.id, r.wing]));
    const n = await this.inner.patch(filter, patch);
    const ids = [...before.keys()];
    const items: Array<{ wing: string; body: FeedRecordBody }> = [];
    for (let i = 0; i < ids.length; i += ID_BATCH)
      for (const d of await this.inner.scan({ ids: ids.slice(i, i + ID_BATCH) }, { withVectors: true })) {
        const was = before.get(d.id);
        if (was !== undefined && was !== d.wing && shared.has(was)) items.push({ wing: was, body: { k: 'leave', id: d.id } });
        if (shared.has(d.wing)) items.push({ wing: d.wing, body: { k: 'put', id: d.id, row: feedRow(d) } });
      }
    this.ctx.feed().appendLocal(items);
    return n;
  }

  override async delete(filter: DrawerFilter): Promise<number> {
    const shared = this.active();
    if (!shared) return this.inner.delete(filter);
    const gone = (await this.inner.scan(filter, { columns: ['id', 'wing'] })).filter((r) => shared.has(r.wing));
    const n = await this.inner.delete(filter);
    this.ctx.feed().appendLocal(gone.map((r) => ({ wing: r.wing, body: { k: 'del', id: r.id } })));
    return n;
  }

}

/** What applying a batch of remote records did. */
export interface ApplyReport {
  applied: number;
  /** Records that lost to the version held here (re-deliveries, older moves, puts after a delete). */
  superseded: number;
  /** Rows stored whose vector came with them. */
  vectorsShipped: number;
  /** Rows stored with their text and queued for re-embedding here in the background (another embedder). */
  reembedQueued: number;
  /** Records skipped because the row lives here in a wing that is not shared (never overwritten). */
  skipped: string[];
}

export interface ReplicatorOptions {
  /** The memory's store (the census above the capture): remote writes go through it uncaptured. */
  store: VectorStore;
  ctx: ReplicationContext;
  /** The key (`model/dimensions`) this memory embeds with, and its vector size. */
  embedderKey: string;
  dimensions: number;
  embed: (texts: string[]) => Promise<Float32Array[]>;
  now?: () => Date;
  /** Shared with the capture store under the journal (its vector search skips pending rows). */
  gauge?: ReembedGauge;
  /** Hears a background re-embedding batch that failed (it is retried on the next kick). */
  onReembedError?: (err: unknown) => void;
}

interface Parsed extends PendingRecord {
  parsed: FeedRecordBody;
}

export class Replicator {
  /** Rows re-embedded since the hub started, and those waiting (status: "re-embedding N of M"). */
  readonly progress = { reembedded: 0, waiting: 0, running: false, last_error: null as string | null };
  private chain: Promise<unknown> = Promise.resolve();
  private readonly gauge: ReembedGauge;
  private worker: Promise<void> | undefined;
  private paused = false;
  private stopped = false;

  constructor(private readonly options: ReplicatorOptions) {
    this.gauge = options.gauge ?? new ReembedGauge();
  }

  /** Runs `fn` after every apply (and re-embed write) before it: writes of remote rows never interleave. */
  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private locked<T>(fn: () => Promise<T>): Promise<T> {
    return this.ctx.withWriteLock ? this.ctx.withWriteLock(fn) : fn();
  }

  private setWaiting(n: number): void {
    this.progress.waiting = n;
    this.gauge.waiting = n;
  }

  /** Starts the background re-embedding when rows wait for it (after an apply, at open, each round). */
  kickReembed(): void {
    if (this.worker || this.stopped) return;
    const waiting = this.ctx.feed().reembedWaiting();
    this.setWaiting(waiting);
    if (waiting === 0 || this.paused) return;
    this.progress.running = true;
    this.worker = this.reembedLoop()
      .catch((err: unknown) => {
        this.progress.last_error = (err as Error).message ?? String(err);
        this.options.onReembedError?.(err);
      })
      .finally(() => {
        this.worker = undefined;
        this.progress.running = false;
      });
  }

  /** Holds the background re-embedding after its current batch (tests; a bulk job); `resumeReembedding` restarts it. */
  async pauseReembedding(): Promise<void> {
    this.paused = true;
    await this.worker;
  }

  resumeReembedding(): void {
    this.paused = false;
    this.kickReembed();
  }

  /** Stops the background re-embedding (the memory is closing); what waits stays queued for the next open. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.worker;
    await this.chain;
  }

  private async reembedLoop(): Promise<void> {
    const feed = this.ctx.feed();
    for (;;) {
      if (this.paused || this.stopped) return;
      const ids = feed.reembedBatch(REEMBED_BATCH);
      if (ids.length === 0) {
        this.setWaiting(0);
        return;
      }
      const rows = (await this.options.store.scan({ ids }, { columns: ['id', 'content', 'metadata', 'embedder'] })).filter((d) => d.embedder === PENDING_EMBEDDER);
      const inputs = rows.map((d) => embeddingInput(d.content, d.metadata));
      const vectors = rows.length > 0 ? await this.options.embed(inputs) : [];
      const embedded = new Map(rows.map((d, i) => [d.id, { input: inputs[i], vector: vectors[i] }]));
      await this.serialized(() => this.locked(async () => {
        // Written only where the row is still the one embedded (a newer put may have arrived meanwhile).
        const current = embedded.size > 0 ? await this.options.store.scan({ ids: [...embedded.keys()] }, { withVectors: true }) : [];
        const write: StoredDrawer[] = [];
        const stillPending = new Set<string>();
        for (const d of current) {
          if (d.embedder !== PENDING_EMBEDDER) continue;
          const e = embedded.get(d.id);
          if (e?.vector && e.vector.length === this.options.dimensions && e.input === embeddingInput(d.content, d.metadata))
            write.push({ ...d, embedder: this.options.embedderKey, vector: e.vector });
          else stillPending.add(d.id);
        }
        if (write.length > 0) await asRemote(() => this.options.store.upsert(write));
        feed.reembedDone(ids.filter((id) => !stillPending.has(id)));
        this.progress.reembedded += write.length;
        this.setWaiting(feed.reembedWaiting());
      }));
      // Leave room for the requests sharing the embedding pool.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  get ctx(): ReplicationContext {
    return this.options.ctx;
  }

  /** Writes this hub's drawers of newly shared wings into their feeds (once per wing; rows already in a feed are skipped). */
  async seed(): Promise<void> {
    const feed = this.ctx.feed();
    for (const wing of this.ctx.sharedWings()) {
      if (feed.isSeeded(wing)) continue;
      for (let offset = 0; ; offset += ID_BATCH) {
        const rows = await this.options.store.scan({ wing }, { withVectors: true, offset, limit: ID_BATCH });
        feed.appendLocal(rows.filter((r) => r.metadata[REPLICATED_FROM_KEY] === undefined).map((r) => ({ wing, body: { k: 'put', id: r.id, row: feedRow(r) } })), true);
        if (rows.length < ID_BATCH) break;
      }
      feed.markSeeded(wing);
    }
  }

  /** Applies the verified records stored but not yet applied (one batch at a time; serialized). */
  applyPending(): Promise<ApplyReport> {
    const run = async (): Promise<ApplyReport> => {
      const total: ApplyReport = { applied: 0, superseded: 0, vectorsShipped: 0, reembedQueued: 0, skipped: [] };
      for (;;) {
        const batch = this.ctx.feed().pending(ID_BATCH);
        if (batch.length === 0) return total;
        const r = await this.locked(() => this.applyBatch(batch));
        total.applied += r.applied;
        total.superseded += r.superseded;
        total.vectorsShipped += r.vectorsShipped;
        total.reembedQueued += r.reembedQueued;
        total.skipped.push(...r.skipped.slice(0, 20 - total.skipped.length));
      }
    };
    return this.serialized(run).then((total) => {
      if (total.reembedQueued > 0) this.kickReembed();
      return total;
    });
  }

  private async applyBatch(batch: readonly PendingRecord[]): Promise<ApplyReport> {
    const feed = this.ctx.feed();
    const shared = this.ctx.sharedWings();
    const report: ApplyReport = { applied: 0, superseded: 0, vectorsShipped: 0, reembedQueued: 0, skipped: [] };
    // Last writer wins per row, so a batch reduces to each row's best version (order does not matter).
    const best = new Map<string, Parsed>();
    const losers: Parsed[] = [];
    const facts: Array<{ fact: Record<string, unknown>; feedOrigin: string }> = [];
    for (const r of batch) {
      const parsed = JSON.parse(r.body) as FeedRecordBody;
      if (parsed.k === 'fact') {
        if (parsed.fact) facts.push({ fact: parsed.fact, feedOrigin: r.origin });
        continue;
      }
      const p: Parsed = { ...r, parsed };
      const current = best.get(parsed.id);
      if (!current || compareVersions(version(current), version(p)) < 0) {
        if (current) losers.push(current);
        best.set(parsed.id, p);
      } else losers.push(p);
    }
    const ids = [...best.keys()];
    const local = new Map<string, StoredDrawer>();
    for (let i = 0; i < ids.length; i += ID_BATCH)
      for (const d of await this.options.store.scan({ ids: ids.slice(i, i + ID_BATCH) }, { columns: ['id', 'wing', 'room', 'metadata'] })) local.set(d.id, d);
    const puts: Array<{ p: Parsed; row: FeedRow }> = [];
    const deletes: string[] = [];
    const won: Parsed[] = [];
    for (const p of best.values()) {
      const held = feed.version(p.parsed.id);
      if (held && compareVersions(held, version(p)) >= 0) {
        losers.push(p);
        continue;
      }
      const here = local.get(p.parsed.id);
      if (here && here.wing !== p.wing && !shared.has(here.wing)) {
        report.skipped.push(`drawer row ${p.parsed.id} lives here in wing '${here.wing}', which is not shared: record of ${p.origin}/${p.wing} not applied`);
        losers.push(p);
        continue;
      }
      won.push(p);
      if (p.parsed.k === 'put' && p.parsed.row) puts.push({ p, row: p.parsed.row });
      else if (here && here.wing === p.wing) deletes.push(p.parsed.id);
    }
    const rows: StoredDrawer[] = [];
    const toEmbed: string[] = [];
    const at = (this.options.now?.() ?? new Date()).toISOString().slice(0, 19) + 'Z';
    for (const { p, row } of puts) {
      const here = local.get(p.parsed.id);
      const metadata: Record<string, unknown> = { ...row.metadata, [REPLICATED_FROM_KEY]: p.origin };
      if (here && (here.wing !== row.wing || here.room !== row.room)) {
        const record: PlacementRecord = { from: { wing: here.wing, room: here.room }, to: { wing: row.wing, room: row.room }, at, via: `sync:${p.origin}` };
        metadata[PLACEMENT_HISTORY_KEY] = [...historyOf(row.metadata), record].slice(-PLACEMENT_HISTORY_MAX);
      }
      const vector = row.vector && row.embedder === this.options.embedderKey ? decodeVector(row.vector) : undefined;
      const d: StoredDrawer = {
        id: p.parsed.id,
        wing: row.wing,
        room: row.room,
        tags: row.tags,
        content: row.content,
        source_file: row.source_file,
        chunk_index: row.chunk_index,
        parent_id: row.parent_id,
        filed_at: row.filed_at,
        added_by: row.added_by,
        useful: row.useful,
        metadata,
        embedder: this.options.embedderKey,
        vector: vector && vector.length === this.options.dimensions ? vector : new Float32Array(0),
      };
      if (d.vector.length > 0) report.vectorsShipped++;
      else {
        // Stored now (its text searchable at once), its vector made in the background.
        d.embedder = PENDING_EMBEDDER;
        d.vector = placeholderVector(this.options.dimensions);
        toEmbed.push(d.id);
      }
      rows.push(d);
    }
    report.reembedQueued = toEmbed.length;
    // Losing moves stay visible in the winner's placement history.
    const lostMoves = losers.filter((l) => l.parsed.k === 'put' && l.parsed.row);
    await asRemote(async () => {
      if (rows.length > 0) await this.options.store.upsert(rows);
      if (deletes.length > 0) await this.options.store.delete({ ids: deletes });
      await this.recordLostMoves(lostMoves, rows, at);
    });
    const factChanges = facts.length > 0 ? (this.ctx.applyFacts?.(facts) ?? 0) : 0;
    feed.commitApplied(
      won.map((p) => ({ id: p.parsed.id, version: { ...version(p), wing: p.wing, origin: p.origin } })),
      batch,
      toEmbed,
    );
    report.applied = won.length + factChanges;
    report.superseded = losers.length;
    return report;
  }

  /** A put that lost (an older or concurrent move) is appended to the held row's placement history. */
  private async recordLostMoves(lost: readonly Parsed[], written: readonly StoredDrawer[], at: string): Promise<void> {
    if (lost.length === 0) return;
    const byId = new Map(written.map((d) => [d.id, d]));
    const need = [...new Set(lost.map((l) => l.parsed.id))].filter((id) => !byId.has(id));
    if (need.length > 0) for (const d of await this.options.store.scan({ ids: need }, { withVectors: true })) byId.set(d.id, d);
    const changed = new Map<string, StoredDrawer>();
    for (const l of lost) {
      const row = l.parsed.row;
      const d = changed.get(l.parsed.id) ?? byId.get(l.parsed.id);
      if (!row || !d || d.vector.length === 0 || (row.wing === d.wing && row.room === d.room)) continue;
      const history = historyOf(d.metadata);
      if (history.some((h) => h.via === `sync-lost:${l.origin}` && h.to.wing === row.wing && h.to.room === row.room)) continue;
      const record: PlacementRecord = { from: { wing: d.wing, room: d.room }, to: { wing: row.wing, room: row.room }, at, via: `sync-lost:${l.origin}` };
      changed.set(d.id, { ...d, metadata: { ...d.metadata, [PLACEMENT_HISTORY_KEY]: [...history, record].slice(-PLACEMENT_HISTORY_MAX) } });
    }
    if (changed.size > 0) await this.options.store.upsert([...changed.values()]);
  }
}

function version(p: Parsed): { hlc: string; kind: FeedRecordKind } {
  return { hlc: p.hlc, kind: p.parsed.k };
}

function historyOf(metadata: Record<string, unknown>): PlacementRecord[] {
  const h = metadata[PLACEMENT_HISTORY_KEY];
  return Array.isArray(h) ? (h as PlacementRecord[]) : [];
}
