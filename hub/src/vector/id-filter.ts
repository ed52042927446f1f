// Which drawer ids a store may hold, answered without a query: a superset of the stored ids, kept as
// 30-bit hashes. "Absent" is exact (the id was never written); "maybe" is confirmed by a real lookup.
// It never forgets an id (a deleted one stays "maybe"): its only mistake is a lookup it could have skipped.

/** FNV-1a of the id, cut to 30 bits (a small integer: a Set of them stays compact). */
export function idHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h & 0x3fffffff;
}

export class IdFilter {
  private readonly hashes = new Set<number>();
  private loaded = false;
  private loading: Promise<void> | undefined;

  /**
   * Records ids about to be written. Call it before the write starts: an id written while the
   * stored ids are being read (load) is then in the filter whichever of the two it missed.
   */
  add(ids: Iterable<string>): void {
    for (const id of ids) this.hashes.add(idHash(id));
  }

  /** Reads every stored id once (`read` yields them), in the background; until it ends, nothing is "absent". */
  load(read: () => Promise<Iterable<string>>, onError: (err: unknown) => void): void {
    if (this.loaded || this.loading) return;
    this.loading = read()
      .then((ids) => {
        this.add(ids);
        this.loaded = true;
      })
      .catch(onError)
      .finally(() => (this.loading = undefined));
  }

  /** Whether the filter can answer yet (its load has finished). */
  ready(): boolean {
    return this.loaded;
  }

  /** True only when `id` is certainly not stored (the filter is loaded and never saw it). */
  absent(id: string): boolean {
    return this.loaded && !this.hashes.has(idHash(id));
  }

  /** Settles once a load in progress has ended (tests, close). */
  settled(): Promise<void> {
    return this.loading ?? Promise.resolve();
  }
}
