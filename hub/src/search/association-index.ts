// The term associations of a palace's mined code (search/expand.ts), built on the first search that
// expands and again when the mined-files list changes (a mine or re-mine); the code chunks are read
// by id from the mined-files manifest, at most MAX_UNITS of them.

import type { StoredDrawer, VectorStore } from '../vector/vector-store.js';
import { MAX_UNITS, TermAssociations } from './expand.js';
import type { MinedFile } from './path-scan.js';

/** Ids read per store scan. */
const SCAN_BATCH = 2000;

export class AssociationIndex {
  private files: readonly MinedFile[] | undefined;
  private built: Promise<TermAssociations> | undefined;

  constructor(
    private readonly store: Pick<VectorStore, 'scan'>,
    private readonly minedFiles: () => readonly MinedFile[],
    private readonly chunkId: (sourceFile: string, index: number) => string,
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

  private async build(files: readonly MinedFile[]): Promise<TermAssociations> {
    const ids: string[] = [];
    for (const f of files) for (let i = 0; i < f.drawers && ids.length < MAX_UNITS; i++) ids.push(this.chunkId(f.source_file, i));
    const index = new TermAssociations();
    for (let at = 0; at < ids.length; at += SCAN_BATCH) {
      const rows: StoredDrawer[] = await this.store.scan({ ids: ids.slice(at, at + SCAN_BATCH) });
      for (const d of rows) index.add(d);
    }
    return index;
  }
}
