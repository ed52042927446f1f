// Opens a palace's memory lazily: the embedder (in a worker thread) and the vector store are
// loaded on first use, so a hub starts fast and small and coordination never waits for a model.

import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { PalaceConfig } from '../../config.js';
import { HubError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { chooseEmbedder, readEmbedderRecord, writeEmbedderRecord } from '../../embed/select.js';
import { createWorkerEmbedder, embedPoolOptions } from '../../embed/worker-embedder.js';
import { embedderKey } from '../../embed/embedder.js';
import { leaseHolder } from '../../lease.js';
import { openVectorStore } from '../../vector/open-vector-store.js';
import { AssociationStore } from '../../search/association-store.js';
import { JournaledVectorStore, replayJournal, type ReplayReport } from './journaled-vector-store.js';
import { Memory } from './memory.js';
import { MemoryJournal } from './memory-journal.js';
import { CensusVectorStore } from './placement-census.js';
import { DECISIONS_ROOM, DIARY_ROOM } from './room-names.js';
import { CaptureStore, ReembedGauge, Replicator, type ReplicationContext } from '../replication/replicator.js';
import type { MinedFile } from '../../search/path-scan.js';
import type { MinedEntry } from '../../search/stale.js';

export interface MemoryHandle {
  /**
   * The memory, opened on first call; a failed open is retried on the next call. `warmEmbedder`: if
   * this call opens it, every embedding worker starts at once (a mine is about to embed), not the first.
   */
  get(options?: { warmEmbedder?: boolean }): Promise<Memory>;
  /** Whether it has been opened (status reports counts only then, to stay cheap). */
  isOpen(): boolean;
  /** The memory if it is open, without opening it (synchronous status reads). */
  peek(): Memory | undefined;
  /** The open in progress, if one is (settles when it is done, either way); undefined otherwise. */
  opening(): Promise<unknown> | undefined;
  close(): Promise<void>;
}

export interface OpenMemoryOptions {
  /** Hears what the automatic replay of the write journal did (`palace replay` reports it). */
  onReplay?: (report: ReplayReport) => void;
  /** Opened by a hub that stays up: see OpenVectorStoreOptions.longRunning. */
  longRunning?: boolean;
  /** The palace's mined project files (its mined-files manifest): search's path scan and stale hits. */
  minedFiles?: () => readonly MinedFile[];
  /** A mined file's manifest entry: search marks hits of files changed since as stale. */
  minedEntry?: (sourceFile: string) => MinedEntry | undefined;
  /** Loads the mined files (manifest and path index) without holding the event loop; search awaits it first. */
  minedFilesReady?: () => Promise<unknown>;
  /** Memory replication (docs/memory-replication.md): local writes to shared wings feed it, remote records are applied. */
  replication?: ReplicationContext;
}

export async function openMemory(
  config: Readonly<PalaceConfig>,
  palacePath: string,
  log: Logger,
  options: OpenMemoryOptions = {},
  warmEmbedder = false,
): Promise<Memory> {
  const { spec, fallback } = chooseEmbedder(config, palacePath);
  if (fallback)
    log.info(
      `no ONNX model in ${config.home}/models/all-MiniLM-L6-v2; using the bundled embedder (Universal Sentence Encoder lite, 512-d). ` +
        'Run `palace set-embedder --model all-MiniLM-L6-v2` on a new palace to use MiniLM instead',
    );
  // A palace that records its vector space opens without loading the model: the first embed starts
  // the pool and checks the model against the record (a `wings` or `drawer get` never loads it).
  const record = readEmbedderRecord(palacePath);
  const embedder = await createWorkerEmbedder(spec, {
    ...embedPoolOptions(config),
    warm: warmEmbedder,
    ...(record ? { expected: { provider: record.provider, model: record.model, dimensions: record.dimensions } } : {}),
  });
  try {
    // A recorded palace's pool checks the model it loads against the record (worker-embedder.ts `expected`).
    const info = embedder.info();
    const opened = await openVectorStore(config, palacePath, info.dimensions, log, { longRunning: options.longRunning === true }).catch((err: unknown) => {
      // Sized from the record (no model loaded yet): what disagrees with the stored vectors is the record.
      if (record && err instanceof HubError && err.code === 'memory.embedder_mismatch')
        throw new HubError(
          'memory.embedder_mismatch',
          `this palace's embedder.json records ${record.model} (${record.dimensions}-d), which does not match its stored vectors (${err.message}). ` +
            'Run `palace set-embedder --model <the model that built them> --force`, or re-embed every drawer with `palace set-embedder --model <model> --force` and then `palace repair --mode rebuild`',
        );
      throw err;
    });
    // Under the journal, so a write replayed after a crash is captured into the feeds too.
    const gauge = new ReembedGauge();
    const inner = options.replication ? new CaptureStore(opened, options.replication, gauge) : opened;
    let journal: MemoryJournal;
    try {
      journal = MemoryJournal.open(palacePath);
    } catch (err) {
      await inner.close();
      throw err;
    }
    // Writes journaled but never indexed (the process died in between) are applied before anything
    // else; never behind the back of another live process that holds the palace's lease.
    const holder = leaseHolder(palacePath);
    if (!holder || holder.pid === process.pid) {
      try {
        const report = await replayJournal(journal, inner, {
          embed: (texts) => embedder.embed(texts, 'document'),
          dimensions: info.dimensions,
          embedderKey: embedderKey(info),
        });
        if (report.replayed > 0) log.info(`replayed ${report.replayed} memory write(s) that were journaled but not indexed (${journal.path})`);
        options.onReplay?.(report);
      } catch (err) {
        await inner.close();
        journal.close();
        throw err;
      }
    }
    const store = new CensusVectorStore(new JournaledVectorStore(inner, journal, { faultPoint: config.faultInject }), new Set([DECISIONS_ROOM, DIARY_ROOM]));
    const hasRecord = record !== undefined;
    if (!hasRecord && (await store.count()) > 0) writeEmbedderRecord(palacePath, info);
    let associations: AssociationStore;
    try {
      // A palace with a mined-files manifest may hold mined code from before the counts were kept: backfilled.
      associations = AssociationStore.open(palacePath, { hasMinedFiles: () => existsSync(join(palacePath, 'mined-files.json')) });
    } catch (err) {
      await store.close();
      throw err;
    }
    const memory = new Memory({
      store,
      embedder,
      associations,
      ...(options.minedFiles ? { minedFiles: options.minedFiles } : {}),
      ...(options.minedEntry ? { minedEntry: options.minedEntry } : {}),
      ...(options.minedFilesReady ? { minedFilesReady: options.minedFilesReady } : {}),
      // The palace is bound to its embedder by its first drawer, not by merely being opened.
      onFirstWrite: hasRecord ? undefined : () => void writeEmbedderRecord(palacePath, info),
    });
    if (options.replication)
      memory.replicator = new Replicator({
        store,
        ctx: options.replication,
        embedderKey: embedderKey(info),
        dimensions: info.dimensions,
        embed: (texts) => memory.embedDocuments(texts),
        gauge,
        onReembedError: (err) => log.warn(`re-embedding replicated drawers failed (retried on the next sync round): ${(err as Error).message}`),
      });
    // Replicated rows still waiting for their vector (a restart) are taken up again at once.
    if (memory.replicator && options.replication?.feedExists?.()) memory.replicator.kickReembed();
    if (options.longRunning) memory.warmSearch((err) => log.warn(`search term associations not built: ${(err as Error).message}`));
    return memory;
  } catch (err) {
    await embedder.close();
    throw err;
  }
}

export function createMemoryHandle(config: Readonly<PalaceConfig>, palacePath: string, log: Logger, options: OpenMemoryOptions = {}): MemoryHandle {
  let opening: Promise<Memory> | undefined;
  let opened: Memory | undefined;
  return {
    get(getOptions = {}) {
      opening ??= openMemory(config, palacePath, log, options, getOptions.warmEmbedder === true).then(
        (m) => {
          opened = m;
          return m;
        },
        (err: unknown) => {
          opening = undefined;
          throw err;
        },
      );
      return opening;
    },
    isOpen: () => opened !== undefined,
    peek: () => opened,
    opening: () => (opened === undefined ? opening : undefined),
    async close() {
      if (opening) await (await opening.catch(() => undefined))?.close();
      opening = undefined;
      opened = undefined;
    },
  };
}
