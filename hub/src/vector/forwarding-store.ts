// A VectorStore that hands every call to the store it wraps: the base of the wrappers that add work
// to writes (the memory journal, replication capture) and leave reads as they are.

import { fullTextScores, nearestEach, type DrawerFilter, type DrawerPatch, type FullTextOptions, type NearestRow, type PlacementSummary, type ScanOptions, type StoredDrawer, type VectorStore } from './vector-store.js';

export class ForwardingVectorStore implements VectorStore {
  constructor(protected readonly inner: VectorStore) {}

  upsert(drawers: readonly StoredDrawer[]): Promise<void> {
    return this.inner.upsert(drawers);
  }

  patch(filter: DrawerFilter, patch: DrawerPatch): Promise<number> {
    return this.inner.patch(filter, patch);
  }

  delete(filter: DrawerFilter): Promise<number> {
    return this.inner.delete(filter);
  }

  scan(filter: DrawerFilter, options?: ScanOptions): Promise<StoredDrawer[]> {
    return this.inner.scan(filter, options);
  }

  placementSummary(rooms: readonly string[]): Promise<PlacementSummary | undefined> {
    return this.inner.placementSummary?.(rooms) ?? Promise.resolve(undefined);
  }

  search(vector: Float32Array, filter: DrawerFilter, limit: number): Promise<Array<{ drawer: StoredDrawer; distance: number }>> {
    return this.inner.search(vector, filter, limit);
  }

  nearestEach(vectors: readonly Float32Array[]): Promise<Array<NearestRow | undefined>> {
    return nearestEach(this.inner, vectors);
  }

  fullText(query: string, filter: DrawerFilter, limit: number, options?: FullTextOptions): Promise<Array<{ drawer: StoredDrawer; score: number }>> {
    return this.inner.fullText(query, filter, limit, options);
  }

  fullTextScores(query: string, filter: DrawerFilter, limit: number, options?: FullTextOptions): Promise<Array<{ id: string; score: number }>> {
    return fullTextScores(this.inner, query, filter, limit, options);
  }

  count(filter?: DrawerFilter): Promise<number> {
    return this.inner.count(filter);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
