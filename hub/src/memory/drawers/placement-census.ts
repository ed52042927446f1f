// A VectorStore wrapper that keeps the palace's census: drawer rows per wing and room, the ids rated
// useful, the filing time of the rows wake-up ranks (tracked rooms such as decisions and diaries, and
// useful rows) and, for the wings listed lately, their rows in (filed_at, id) order (/list's pages).
// Loaded by one scan on first read, then kept up to date by every write through it (the rows a write
// touches are read first); a write that fails or surprises it drops the census.

import { CENSUS_COLUMNS, fullTextScores, nearestEach, type DrawerFilter, type DrawerPatch, type FullTextOptions, type NearestRow, type ScanOptions, type StoredDrawer, type VectorStore } from '../../vector/vector-store.js';

const KEY_SEP = '\u0000';
/** Rows read per step when looking up what an upsert replaces. */
const ID_BATCH = 500;
/** Wings whose row order is kept (the most recently listed; each costs a few dozen bytes per row). */
const ORDERED_WINGS = 8;
/** Rows stamped between two yields to the event loop while the census loads. */
const STAMP_SLICE = 2_000;
/** A write touching more rows of a wing than this drops the wing's order (rebuilt by one scan when next listed). */
const ORDER_SPLICE_MAX = 256;

/** What the census keeps of a row in a tracked room or rated useful: enough to rank by recency. */
export interface RowStamp {
  id: string;
  wing: string;
  room: string;
  filed_at: string;
  chunk_index: number;
  useful: boolean;
}

interface Census {
  /** `wing\0room` → rows. */
  places: Map<string, number>;
  /** Ids of rows rated useful. */
  useful: Set<string>;
  /** Rows in a tracked room or rated useful, by id. */
  stamps: Map<string, RowStamp>;
  /** wing → its rows in (filed_at, id) order, for the wings listed lately (most recent last). */
  orders: Map<string, OrderRow[]>;
}

/** A row in a wing's order: enough to page it, by room too. */
export interface OrderRow {
  id: string;
  room: string;
  filed_at: string;
}

/** (filed_at, id) ascending, by code unit: the store's order and /list's ("newest last"). */
export function byFiledAt(a: Pick<OrderRow, 'id' | 'filed_at'>, b: Pick<OrderRow, 'id' | 'filed_at'>): number {
  if (a.filed_at !== b.filed_at) return a.filed_at < b.filed_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Where `row` is, or would go, in an order (binary search). */
function orderIndex(order: readonly OrderRow[], row: Pick<OrderRow, 'id' | 'filed_at'>): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (byFiledAt(order[mid] as OrderRow, row) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}


/** Newest first (filed_at, then id), like the store's own (filed_at, id) order reversed. */
const newestFirst = (a: RowStamp, b: RowStamp): number => b.filed_at.localeCompare(a.filed_at) || b.id.localeCompare(a.id);

/** wing → room → rows, a snapshot (safe to keep and change). */
export type PlacementCounts = Map<string, Map<string, number>>;

function key(wing: string, room: string): string {
  return `${wing}${KEY_SEP}${room}`;
}

function bump(places: Map<string, number>, wing: string, room: string, by: number): void {
  const k = key(wing, room);
  const n = (places.get(k) ?? 0) + by;
  if (n > 0) places.set(k, n);
  else places.delete(k);
}

export class CensusVectorStore implements VectorStore {
  private census: Census | undefined;
  private loading: Promise<Census> | undefined;
  /** Bumped at the start and end of every write: a load that saw it change is not kept. */
  private generation = 0;
  private chain: Promise<unknown> = Promise.resolve();

  /** `trackedRooms`: rooms whose rows' filing times are kept (wake-up's latest decisions and diaries). */
  constructor(
    private readonly inner: VectorStore,
    private readonly trackedRooms: ReadonlySet<string> = new Set(),
  ) {}

  /** Keeps (or forgets) a row's stamp after it was written as `row`. */
  private stamp(census: Census, row: Pick<StoredDrawer, 'id' | 'wing' | 'room' | 'useful' | 'filed_at' | 'chunk_index'>): void {
    if (row.useful === true || this.trackedRooms.has(row.room))
      census.stamps.set(row.id, { id: row.id, wing: row.wing, room: row.room, filed_at: row.filed_at, chunk_index: row.chunk_index, useful: row.useful === true });
    else census.stamps.delete(row.id);
  }

  /**
   * The newest rows of a tracked room (across wings unless one is given), first chunks only, newest
   * first: read from the census, so a large palace is not scanned.
   */
  async newestInRoom(room: string, wing: string | undefined, n: number): Promise<RowStamp[]> {
    if (!this.trackedRooms.has(room)) throw new Error(`room '${room}' is not tracked by the census`);
    const census = await this.load();
    const rows = [...census.stamps.values()].filter((r) => r.room === room && r.chunk_index === 0 && (wing === undefined || r.wing === wing));
    return rows.sort(newestFirst).slice(0, n);
  }

  /** The newest `n` rows rated useful (optionally in one wing), newest first. */
  async newestUseful(wing: string | undefined, n: number): Promise<RowStamp[]> {
    const census = await this.load();
    const rows = [...census.stamps.values()].filter((r) => r.useful && (wing === undefined || r.wing === wing));
    return rows.sort(newestFirst).slice(0, n);
  }

  /** Rows per wing and room (one scan the first time, then kept up to date by writes). */
  async placements(): Promise<PlacementCounts> {
    const census = await this.load();
    const out: PlacementCounts = new Map();
    for (const [k, n] of census.places) {
      const at = k.indexOf(KEY_SEP);
      const wing = k.slice(0, at);
      const rooms = out.get(wing) ?? new Map<string, number>();
      rooms.set(k.slice(at + 1), n);
      out.set(wing, rooms);
    }
    return out;
  }

  /** Ids of the rows rated useful. */
  async usefulIds(): Promise<string[]> {
    return [...(await this.load()).useful];
  }

  /**
   * One page of a wing's rows (optionally one room of it) in (filed_at, id) order, and how many there
   * are. The wing's order is read by one scan of three narrow columns the first time it is listed, then
   * kept up to date by every write, so a page costs no scan.
   */
  async orderedPage(wing: string, room: string | undefined, offset: number, limit: number): Promise<{ ids: string[]; total: number }> {
    const order = await this.wingOrder(wing);
    const rows = room === undefined ? order : order.filter((r) => r.room === room);
    return { ids: rows.slice(offset, offset + limit).map((r) => r.id), total: rows.length };
  }

  private async wingOrder(wing: string): Promise<OrderRow[]> {
    for (;;) {
      const census = await this.load();
      const kept = census.orders.get(wing);
      if (kept) {
        // Most recently listed last: the first is the one dropped when too many are kept.
        census.orders.delete(wing);
        census.orders.set(wing, kept);
        return kept;
      }
      const seen = this.generation;
      const rows = (await this.inner.scan({ wing }, { columns: ['id', 'room', 'filed_at'] })).map((r) => ({ id: r.id, room: r.room, filed_at: r.filed_at }));
      rows.sort(byFiledAt);
      // A write ran meanwhile (or the census was dropped): the scan may have missed it, so it is read again.
      if (seen !== this.generation || seen % 2 === 1 || this.census !== census) {
        await this.chain.catch(() => undefined);
        continue;
      }
      if (!census.orders.has(wing)) {
        census.orders.set(wing, rows);
        for (const w of census.orders.keys()) {
          if (census.orders.size <= ORDERED_WINGS) break;
          census.orders.delete(w);
        }
      }
      return census.orders.get(wing) ?? rows;
    }
  }

  /** Applies a write's row changes to the kept wing orders (`gone` before, `now` after). */
  private reorder(census: Census, gone: ReadonlyArray<Pick<OrderRow, 'id' | 'filed_at'> & { wing: string }>, now: ReadonlyArray<OrderRow & { wing: string }>): void {
    if (census.orders.size === 0) return;
    const touched = new Map<string, number>();
    for (const r of [...gone, ...now]) if (census.orders.has(r.wing)) touched.set(r.wing, (touched.get(r.wing) ?? 0) + 1);
    for (const [wing, n] of touched) if (n > ORDER_SPLICE_MAX) census.orders.delete(wing);
    for (const r of gone) {
      const order = census.orders.get(r.wing);
      if (!order) continue;
      const at = orderIndex(order, r);
      if (order[at]?.id === r.id) order.splice(at, 1);
    }
    for (const r of now) {
      const order = census.orders.get(r.wing);
      if (!order) continue;
      const at = orderIndex(order, r);
      if (order[at]?.id === r.id) order[at] = { id: r.id, room: r.room, filed_at: r.filed_at };
      else order.splice(at, 0, { id: r.id, room: r.room, filed_at: r.filed_at });
    }
  }

  /** Whether the census is loaded (tests and status). */
  loaded(): boolean {
    return this.census !== undefined;
  }

  private load(): Promise<Census> {
    if (this.census) return Promise.resolve(this.census);
    this.loading ??= (async () => {
      for (;;) {
        const seen = this.generation;
        const census: Census = { places: new Map(), useful: new Set(), stamps: new Map(), orders: new Map() };
        // Summed by the store where it can (one place per wing and room, and only the rows stamped);
        // otherwise every row is read here.
        const summary = await this.inner.placementSummary?.([...this.trackedRooms]);
        for (const p of summary?.places ?? []) bump(census.places, p.wing, p.room, p.rows);
        let n = 0;
        for (const r of summary?.marked ?? (await this.inner.scan({}, { columns: [...CENSUS_COLUMNS] }))) {
          if (!summary) bump(census.places, r.wing, r.room, 1);
          if (r.useful === true) census.useful.add(r.id);
          this.stamp(census, r);
          // Tens of thousands of rows at a year old: other requests are served between slices.
          if (++n % STAMP_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
        }
        // A write ran meanwhile: the scan may have missed it, so it is read again.
        if (seen !== this.generation || seen % 2 === 1) {
          await this.chain.catch(() => undefined);
          continue;
        }
        this.census = census;
        return census;
      }
    })().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  /** Runs writes one at a time; the census (if loaded) is updated from what `apply` reports. */
  private write<T>(apply: (census: Census | undefined) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      this.generation++;
      const census = this.census;
      try {
        return await apply(census);
      } catch (err) {
        this.census = undefined;
        throw err;
      } finally {
        this.generation++;
      }
    };
    const next = this.chain.then(run, run);
    this.chain = next.catch(() => undefined);
    return next;
  }

  upsert(drawers: readonly StoredDrawer[]): Promise<void> {
    return this.write(async (census) => {
      const byId = new Map(drawers.map((d) => [d.id, d]));
      const prior: StoredDrawer[] = [];
      if (census) {
        const ids = [...byId.keys()];
        for (let i = 0; i < ids.length; i += ID_BATCH)
          prior.push(...(await this.inner.scan({ ids: ids.slice(i, i + ID_BATCH) }, { columns: [...CENSUS_COLUMNS] })));
      }
      await this.inner.upsert(drawers);
      if (!census || this.census !== census) return;
      for (const r of prior) {
        bump(census.places, r.wing, r.room, -1);
        census.useful.delete(r.id);
        census.stamps.delete(r.id);
      }
      for (const d of byId.values()) {
        bump(census.places, d.wing, d.room, 1);
        if (d.useful === true) census.useful.add(d.id);
        this.stamp(census, d);
      }
      this.reorder(census, prior, [...byId.values()]);
    });
  }

  patch(filter: DrawerFilter, patch: DrawerPatch): Promise<number> {
    return this.write(async (census) => {
      const moves = patch.wing !== undefined || patch.room !== undefined;
      const rates = patch.useful !== undefined;
      const prior = census && (moves || rates) ? await this.inner.scan(filter, { columns: [...CENSUS_COLUMNS] }) : [];
      const changed = await this.inner.patch(filter, patch);
      if (!census || this.census !== census || !(moves || rates)) return changed;
      if (changed !== prior.length) {
        this.census = undefined;
        return changed;
      }
      if (moves) this.reorder(census, prior, prior.map((r) => ({ id: r.id, wing: patch.wing ?? r.wing, room: patch.room ?? r.room, filed_at: r.filed_at })));
      for (const r of prior) {
        if (moves) {
          bump(census.places, r.wing, r.room, -1);
          bump(census.places, patch.wing ?? r.wing, patch.room ?? r.room, 1);
        }
        if (patch.useful === true) census.useful.add(r.id);
        else if (rates) census.useful.delete(r.id);
        this.stamp(census, {
          ...r,
          wing: patch.wing ?? r.wing,
          room: patch.room ?? r.room,
          useful: rates ? patch.useful === true : r.useful,
        });
      }
      return changed;
    });
  }

  delete(filter: DrawerFilter): Promise<number> {
    return this.write(async (census) => {
      const prior = census ? await this.inner.scan(filter, { columns: ['id', 'wing', 'room', 'filed_at'] }) : [];
      const deleted = await this.inner.delete(filter);
      if (!census || this.census !== census) return deleted;
      if (deleted !== prior.length) {
        this.census = undefined;
        return deleted;
      }
      this.reorder(census, prior, []);
      for (const r of prior) {
        bump(census.places, r.wing, r.room, -1);
        census.useful.delete(r.id);
        census.stamps.delete(r.id);
      }
      return deleted;
    });
  }

  scan(filter: DrawerFilter, options?: ScanOptions): Promise<StoredDrawer[]> {
    return this.inner.scan(filter, options);
  }

  search(vector: Float32Array, filter: DrawerFilter, limit: number): Promise<Array<{ drawer: StoredDrawer; distance: number }>> {
    return this.inner.search(vector, filter, limit);
  }

  fullText(query: string, filter: DrawerFilter, limit: number, options?: FullTextOptions): Promise<Array<{ drawer: StoredDrawer; score: number }>> {
    return this.inner.fullText(query, filter, limit, options);
  }

  nearestEach(vectors: readonly Float32Array[]): Promise<Array<NearestRow | undefined>> {
    return nearestEach(this.inner, vectors);
  }

  fullTextScores(query: string, filter: DrawerFilter, limit: number, options?: FullTextOptions): Promise<Array<{ id: string; score: number }>> {
    return fullTextScores(this.inner, query, filter, limit, options);
  }

  count(filter: DrawerFilter = {}): Promise<number> {
    // Counts by placement alone come from the census once it is loaded; anything finer asks the store.
    const census = this.census;
    if (census && Object.keys(filter).every((k) => k === 'wing' || k === 'room')) {
      if (filter.wing !== undefined && filter.room !== undefined) return Promise.resolve(census.places.get(key(filter.wing, filter.room)) ?? 0);
      let n = 0;
      for (const [k, c] of census.places) {
        const at = k.indexOf(KEY_SEP);
        if (filter.wing !== undefined && k.slice(0, at) !== filter.wing) continue;
        if (filter.room !== undefined && k.slice(at + 1) !== filter.room) continue;
        n += c;
      }
      return Promise.resolve(n);
    }
    return this.inner.count(filter);
  }

  /** Passes through to the inner store's background maintenance, when it has any. */
  async indexesSettled(): Promise<void> {
    await (this.inner as { indexesSettled?: () => Promise<void> }).indexesSettled?.();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
