// The term associations of a palace's mined code (search/expand.ts), built again when the mined-files
// list changes (a mine or re-mine); the code chunks are read by id from the mined-files manifest, at
// most MAX_UNITS of them. A long-running hub starts the build when memory opens (`warm`); a search
// that expands waits for it, so every search of one mined-files list sees the same index (results
// never depend on timing). The build never holds the event loop for long: it reads SCAN_BATCH chunks
// at a time (their content and metadata only) and hands the loop back every SLICE_MS of indexing
// (a 100k-chunk palace takes seconds of CPU; /healthz and other requests are served meanwhile).

import type { StoredDrawer, VectorStore } from '../vector/vector-store.js';
import { MAX_UNITS, TermAssociations } from './expand.js';
import type { MinedFile } from './path-scan.js';

/** Ids read per store scan. */
const SCAN_BATCH = 2000;
/** Indexing time between two yields to the event loop. */
const SLICE_MS = 8;

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

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
    const ids: string[] = [];
    for (const f of files) for (let i = 0; i < f.drawers && ids.length < MAX_UNITS; i++) ids.push(this.chunkId(f.source_file, i));
    const index = new TermAssociations();
    let slice = performance.now();
    for (let at = 0; at < ids.length; at += SCAN_BATCH) {
      const rows: StoredDrawer[] = await this.store.scan({ ids: ids.slice(at, at + SCAN_BATCH) }, { columns: ['id', 'content', 'metadata', 'filed_at'] });
      for (const d of rows) {
        index.add(d);
        if (performance.now() - slice >= this.sliceMs) {
          await yieldToLoop();
          slice = performance.now();
        }
      }
    }
    return index;
  }
}
