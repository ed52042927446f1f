// A VectorStore that journals every write before applying it (see memory-journal.ts), and the replay
// of writes that were journaled but never applied. Writes go to the inner store one at a time, in
// journal order, so a replay re-applies them in the order they were accepted. Reads pass through.

import { HubError } from '../../errors.js';
import { isPidAlive } from '../../registration.js';
import type { FaultPoint } from '../../config.js';
import { ForwardingVectorStore } from '../../vector/forwarding-store.js';
import type { DrawerFilter, DrawerPatch, StoredDrawer, VectorStore } from '../../vector/vector-store.js';
import type { JournalEntry, JournalOp, MemoryJournal } from './memory-journal.js';
import { embeddingInput } from './embedding-input.js';

/** A write of a live process younger than this is in flight, not crashed (pid reuse is bounded by it). */
const IN_FLIGHT_MS = 10 * 60_000;

export interface JournaledStoreOptions {
  /** Test hook (PALACE_FAULT_INJECT): die by SIGKILL at this point of every write. */
  faultPoint?: FaultPoint | undefined;
}

export class JournaledVectorStore extends ForwardingVectorStore {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    inner: VectorStore,
    private readonly journal: MemoryJournal,
    private readonly options: JournaledStoreOptions = {},
  ) {
    super(inner);
  }

  /**
   * Journals `write`, applies it, marks it applied; the caller hears back only after all three. The
   * journal entry's fsync runs on the thread pool while the store applies the write (memory-journal.ts).
   */
  private write<T>(write: JournalOp, apply: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      const { seq, durable } = this.journal.append(write);
      durable.catch(() => undefined); // awaited below, after the store
      if (this.options.faultPoint === 'memory.after-journal') {
        await durable;
        process.kill(process.pid, 'SIGKILL');
      }
      let result: T;
      try {
        result = await apply();
      } catch (err) {
        // A store that refused the write for want of room did not apply it, and the caller hears
        // "nothing was stored": a later replay must not apply it behind their back.
        if (err instanceof HubError && err.code === 'store.full') this.settle(seq);
        await durable.catch(() => undefined);
        throw err;
      }
      await durable;
      this.journal.markApplied(seq);
      return result;
    };
    const next = this.chain.then(run, run);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Drops a journal entry; best effort (on a full disk even that may fail, and replay then applies it). */
  private settle(seq: number): void {
    try {
      this.journal.markApplied(seq);
    } catch {
      // left pending
    }
  }

  override upsert(drawers: readonly StoredDrawer[]): Promise<void> {
    if (drawers.length === 0) return Promise.resolve();
    return this.write({ op: 'upsert', drawers: [...drawers] }, () => this.inner.upsert(drawers));
  }

  override patch(filter: DrawerFilter, patch: DrawerPatch): Promise<number> {
    return this.write({ op: 'patch', filter, patch }, () => this.inner.patch(filter, patch));
  }

  override delete(filter: DrawerFilter): Promise<number> {
    return this.write({ op: 'delete', filter }, () => this.inner.delete(filter));
  }

  override async close(): Promise<void> {
    await this.chain;
    await this.inner.close();
    this.journal.close();
  }
}

/** What one replay did (or, dry, would do). */
export interface ReplayReport {
  journal: string;
  pending: number;
  replayed: number;
  /** Entries of a live process still applying them: left alone. */
  in_flight: number;
  entries: Array<{ seq: number; op: JournalOp['op']; written_at: string; pid: number; drawer_ids?: string[]; filter?: DrawerFilter; reembedded?: number }>;
  dry_run: boolean;
}

export interface ReplayOptions {
  dryRun?: boolean;
  /** Vectors for drawers whose journaled vector is missing or of another size (re-embedding). */
  embed?: (texts: string[]) => Promise<Float32Array[]>;
  /** The store's vector size; a journaled vector of another size is re-embedded. */
  dimensions?: number;
  /** The embedder key re-embedded drawers are stamped with. */
  embedderKey?: string;
  now?: () => number;
}

function isInFlight(entry: JournalEntry, now: number): boolean {
  if (entry.pid === process.pid) return false;
  return isPidAlive(entry.pid) && now - Date.parse(entry.written_at) < IN_FLIGHT_MS;
}

/**
 * Re-applies journaled writes that were never applied (their process died between journal and
 * index). Idempotent: upserts are by id, deletes and patches by filter, in journal order.
 */
export async function replayJournal(journal: MemoryJournal, store: VectorStore | undefined, options: ReplayOptions = {}): Promise<ReplayReport> {
  const now = (options.now ?? Date.now)();
  const pending = journal.pending();
  const report: ReplayReport = { journal: journal.path, pending: pending.length, replayed: 0, in_flight: 0, entries: [], dry_run: options.dryRun === true };
  for (const entry of pending) {
    // Writes after an in-flight one wait for it too, so the order of writes is kept.
    if (report.in_flight > 0 || isInFlight(entry, now)) {
      report.in_flight++;
      continue;
    }
    const w = entry.write;
    const line: ReplayReport['entries'][number] = { seq: entry.seq, op: w.op, written_at: entry.written_at, pid: entry.pid };
    if (w.op === 'upsert') line.drawer_ids = w.drawers.map((d) => d.id);
    else line.filter = w.filter;
    if (!options.dryRun) {
      if (!store) throw new Error('replayJournal needs a vector store unless it is a dry run');
      if (w.op === 'upsert') {
        const stale = w.drawers.filter((d) => d.vector.length === 0 || (options.dimensions !== undefined && d.vector.length !== options.dimensions));
        if (stale.length > 0 && options.embed) {
          const vectors = await options.embed(stale.map((d) => embeddingInput(d.content, d.metadata)));
          stale.forEach((d, i) => {
            d.vector = vectors[i] ?? new Float32Array(0);
            if (options.embedderKey) d.embedder = options.embedderKey;
          });
          line.reembedded = stale.length;
        }
        await store.upsert(w.drawers);
      } else if (w.op === 'delete') await store.delete(w.filter);
      else await store.patch(w.filter, w.patch);
      journal.markApplied(entry.seq);
    }
    report.replayed++;
    report.entries.push(line);
  }
  return report;
}
