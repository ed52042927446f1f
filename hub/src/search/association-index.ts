// The term associations of a palace's mined code (search/expand.ts), two ways:
// - in memory (AssociationIndex): built again when the mined-files list changes, from the code chunks
//   read by id from the mined-files manifest. Memory uses it when it has no persistent counts (the
//   retrieval bench, tests that build a Memory by hand); a search that expands waits for it.
// - on disk (search/association-store.ts), which a hub's memory keeps up to date at every mine. A
//   palace mined before those counts existed gets them here once (backfillAssociations), file by file,
//   in slices that hand the event loop back, persisted as it goes (a restart resumes).
// Neither holds the event loop for long: chunks are read SCAN_BATCH at a time and the loop is handed
// back every SLICE_MS of counting.

import type { StoredDrawer, VectorStore } from '../vector/vector-store.js';
import type { AssociationStore, FileUnits } from './association-store.js';
import { TermAssociations } from './expand.js';
import type { MinedFile } from './path-scan.js';

/** Ids read per store scan. */
const SCAN_BATCH = 2000;
/** Indexing time between two yields to the event loop. */
const SLICE_MS = 8;
/** Chunks read per scan by the backfill (its rows cross the LanceDB process's channel in one message), and counted per transaction. */
const BACKFILL_SCAN = 500;
const BACKFILL_TXN = 100;

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Yields to the event loop once `sliceMs` have passed since the last yield. */
function slicer(sliceMs: number): () => Promise<void> {
  let slice = performance.now();
  return async () => {
    if (performance.now() - slice < sliceMs) return;
    await yieldToLoop();
    slice = performance.now();
  };
}

export class AssociationIndex {
  private files: readonly MinedFile[] | undefined;
  private built: Promise<TermAssociations> | undefined;

  constructor(
    private readonly store: Pick<VectorStore, 'scan'>,
    private readonly minedFiles: () => readonly MinedFile[],
    private readonly chunkId: (sourceFile: string, index: number) => string,
    /** Indexing time between two yields to the event loop (tests: 0, a yield after every chunk). */
    private readonly sliceMs: number = SLICE_MS,
  ) {}

  /** The associations for the current mined files (built once per list). */
  current(): Promise<TermAssociations> {
    const files = this.minedFiles();
    if (this.built && this.files === files) return this.built;
    this.files = files;
    this.built = this.build(files).catch((err: unknown) => {
      this.built = undefined;
      throw err;
    });
    return this.built;
  }

  /** Starts building for the current mined files, off the request path; a failure is retried by the next search. */
  warm(onError: (err: unknown) => void): void {
    this.current().catch(onError);
  }

  private async build(files: readonly MinedFile[]): Promise<TermAssociations> {
    const index = new TermAssociations();
    const pause = slicer(this.sliceMs);
    const ids: string[] = [];
    for (const f of files) {
      for (let i = 0; i < f.drawers; i++) ids.push(this.chunkId(f.source_file, i));
      await pause();
    }
    for (let at = 0; at < ids.length; at += SCAN_BATCH) {
      const rows: StoredDrawer[] = await this.store.scan({ ids: ids.slice(at, at + SCAN_BATCH) }, { columns: ['id', 'content', 'metadata', 'filed_at'] });
      for (const d of rows) {
        index.add(d);
        await pause();
      }
    }
    return index;
  }
}

export interface BackfillOptions {
  /** Counting time between two yields to the event loop. */
  sliceMs?: number;
  /** Stops between two batches (memory closing). */
  stopped?: () => boolean;
}

/**
 * Counts every mined file the persistent store does not hold yet, SCAN_BATCH chunks at a time, then
 * marks the counts complete. A file the mine wrote meanwhile is left as the mine counted it.
 * Returns the files counted here.
 */
export async function backfillAssociations(
  counts: AssociationStore,
  store: Pick<VectorStore, 'scan'>,
  minedFiles: () => readonly MinedFile[],
  chunkId: (sourceFile: string, index: number) => string,
  options: BackfillOptions = {},
): Promise<number> {
  if (counts.complete()) return 0;
  const pause = slicer(options.sliceMs ?? SLICE_MS);
  const files = minedFiles();
  let done = 0;
  let batch: MinedFile[] = [];
  let batchIds = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    counts.takeTouched();
    const ids = batch.flatMap((f) => Array.from({ length: f.drawers }, (_, i) => chunkId(f.source_file, i)));
    const rows = await store.scan({ ids }, { columns: ['id', 'content', 'metadata', 'source_file', 'chunk_index'] });
    const touched = counts.takeTouched();
    const bySource = new Map<string, StoredDrawer[]>();
    for (const d of rows) {
      if (!d.source_file) continue;
      const own = bySource.get(d.source_file);
      if (own) own.push(d);
      else bySource.set(d.source_file, [d]);
    }
    const todo = batch.filter((f) => !touched.has(f.source_file) && !counts.hasFile(f.source_file));
    // About BACKFILL_TXN chunks per transaction, so no single write holds the loop for long.
    for (let i = 0; i < todo.length; ) {
      if (options.stopped?.()) return;
      const group: FileUnits[] = [];
      let chunks = 0;
      for (; i < todo.length && (group.length === 0 || chunks < BACKFILL_TXN); i++) {
        const f = todo[i] as MinedFile;
        const drawers = (bySource.get(f.source_file) ?? []).sort((a, b) => a.chunk_index - b.chunk_index);
        group.push({ source_file: f.source_file, drawers });
        chunks += drawers.length;
      }
      counts.replaceFiles(group, { fromBackfill: true });
      done += group.length;
      await yieldToLoop();
    }
    batch = [];
    batchIds = 0;
  };
  for (const f of files) {
    if (options.stopped?.()) return done;
    if (!counts.hasFile(f.source_file)) {
      batch.push(f);
      batchIds += f.drawers;
      if (batchIds >= BACKFILL_SCAN) await flush();
    }
    await pause();
  }
  await flush();
  if (!options.stopped?.()) counts.markComplete();
  return done;
}
