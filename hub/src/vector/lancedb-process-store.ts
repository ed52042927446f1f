// The LanceDB store of a long-running hub, run in a child process that is replaced when it grows.
//
// LanceDB's write path keeps native memory it never frees: about 100 KB per commit here, whatever
// the cache sizes, the allocator (glibc arenas, jemalloc) or closing and reopening the table
// (lance-format/lance#1983, open upstream). One drawer per call, as agents file them, grew a hub
// without bound. Only ending the process gives it back, so the hub keeps LanceDB in a child and,
// once the child's RSS has grown `recycleBytes` past what it had when it opened, lets its in-flight
// calls finish, closes it (compaction and index builds complete first) and starts a fresh one. Calls
// that arrive meanwhile wait until the new child has opened (in a 20-agent soak, once every ~1,400
// drawers at the default 256 MiB). A child that dies fails its in-flight calls with `store.failed`; the next call
// starts a new one. Writes are journaled before they reach the store (JournaledVectorStore).

import { fork, type ChildProcess } from 'node:child_process';

import { compiledScript } from '../compiled-script.js';
import { HubError } from '../errors.js';
import type { Logger } from '../log.js';
import { fromWire, type HostReply, type HostRequest, type StoreMethod } from './lancedb-host-protocol.js';
import { packableScan, unpackScan, type PackedScan } from './packed-scan.js';
import {
  unpackPlacementSummarySliced,
  type DrawerFilter,
  type DrawerPatch,
  type FullTextOptions,
  type NearestRow,
  type PackedPlacementSummary,
  type PlacementSummary,
  type ScanOptions,
  type StoredDrawer,
  type VectorStore,
} from './vector-store.js';

export interface LanceDbProcessOptions {
  palacePath: string;
  dimensions: number;
  log: Logger;
  /** Replace the child once its RSS has grown this much since it opened (PALACE_LANCEDB_RECYCLE_MB). */
  recycleBytes: number;
}

const CLOSE_GRACE_MS = 120_000;

type Answer = { value: unknown; rss: number; busy: boolean };

/** One child process holding the store. */
class Host {
  private readonly pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private idleWaiters: Array<() => void> = [];
  alive = true;
  /** Set once the host is being replaced: new calls go to its successor. */
  draining = false;
  readonly exited: Promise<void>;

  private constructor(
    readonly child: ChildProcess,
    readonly baselineRss: number,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.on('message', (reply: HostReply) => {
      if (!('id' in reply)) return;
      const waiter = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      this.settleIdle();
      if (!waiter) return;
      if (reply.ok) waiter.resolve({ value: reply.value, rss: reply.rss, busy: reply.busy });
      else waiter.reject(fromWire(reply.error));
    });
    child.once('exit', (code, signal) => {
      this.alive = false;
      const err = new HubError('store.failed', `the LanceDB process exited (${signal ?? `code ${code}`}) during the call; retry it`);
      for (const waiter of this.pending.values()) waiter.reject(err);
      this.pending.clear();
      this.settleIdle();
    });
  }

  static async start(options: LanceDbProcessOptions): Promise<Host> {
    const script = compiledScript(import.meta.url, './lancedb-host.js', 'hub/src/vector/lancedb-host.js', 'store.failed');
    const child = fork(script, [options.palacePath, String(options.dimensions)], {
      execArgv: [],
      serialization: 'advanced', // Float32Array vectors cross as they are
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const first = await new Promise<HostReply>((resolve, reject) => {
      child.once('message', resolve);
      child.once('error', reject);
      child.once('exit', (code, signal) => reject(new HubError('store.failed', `the LanceDB process exited while opening (${signal ?? `code ${code}`})`)));
    });
    if ('type' in first && first.type === 'ready') {
      const host = new Host(child, first.rss);
      host.unrefWhenIdle();
      return host;
    }
    child.kill('SIGKILL');
    throw 'type' in first && first.type === 'open_failed' ? fromWire(first.error) : new HubError('store.failed', 'the LanceDB process sent an unexpected first message');
  }

  request(method: StoreMethod | 'close', args: unknown[]): Promise<Answer> {
    if (!this.alive) return Promise.reject(new HubError('store.failed', 'the LanceDB process is gone; retry the call'));
    const id = this.nextId++;
    return new Promise<Answer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.ref();
      (this.child.channel as { ref?: () => void } | undefined)?.ref?.();
      this.child.send({ id, method, args } satisfies HostRequest);
    });
  }

  /** Resolves once no call is in flight. */
  idle(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private settleIdle(): void {
    if (this.pending.size > 0) return;
    this.unrefWhenIdle();
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  /** An idle child never keeps the hub's process alive. */
  private unrefWhenIdle(): void {
    this.child.unref();
    (this.child.channel as { unref?: () => void } | undefined)?.unref?.();
  }

  /** Lets the store finish (maintenance included), then the child exits; killed if it hangs. */
  async close(): Promise<void> {
    if (!this.alive) return;
    await this.request('close', []).catch(() => undefined);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), CLOSE_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }
}

export class LanceDbProcessStore implements VectorStore {
  private host: Host | undefined;
  private starting: Promise<Host> | undefined;
  private retiring: Promise<void> | undefined;
  private closed = false;
  /** Children replaced so far for having grown (status and tests). */
  recycles = 0;

  private constructor(private readonly options: LanceDbProcessOptions) {}

  static async open(options: LanceDbProcessOptions): Promise<LanceDbProcessStore> {
    const store = new LanceDbProcessStore(options);
    await store.current();
    return store;
  }

  /** The child's process id (tests). */
  get pid(): number | undefined {
    return this.host?.child.pid;
  }

  private async current(): Promise<Host> {
    for (;;) {
      if (this.closed) throw new HubError('store.failed', 'the vector store is closed');
      if (this.retiring) {
        await this.retiring;
        continue;
      }
      if (this.host?.alive && !this.host.draining) return this.host;
      this.starting ??= Host.start(this.options).finally(() => {
        this.starting = undefined;
      });
      this.host = await this.starting;
    }
  }

  private async call<T>(method: StoreMethod, args: unknown[]): Promise<T> {
    const host = await this.current();
    // Replacement may have begun between the lookup and here: go to the successor.
    if (host.draining) return this.call<T>(method, args);
    const answer = await host.request(method, args);
    if (!answer.busy && !host.draining && answer.rss - host.baselineRss > this.options.recycleBytes) this.retire(host, answer.rss);
    return answer.value as T;
  }

  private retire(host: Host, rss: number): void {
    host.draining = true;
    this.retiring = (async () => {
      await host.idle();
      await host.close();
      this.recycles += 1;
      this.options.log.info('replaced the LanceDB process to give back memory its writes kept', {
        rss_mb: Math.round(rss / 1e6),
        opened_at_mb: Math.round(host.baselineRss / 1e6),
      });
    })().finally(() => {
      this.retiring = undefined;
    });
  }

  upsert(drawers: readonly StoredDrawer[]): Promise<void> {
    return this.call('upsert', [drawers]);
  }

  patch(filter: DrawerFilter, patch: DrawerPatch): Promise<number> {
    return this.call('patch', [filter, patch]);
  }

  delete(filter: DrawerFilter): Promise<number> {
    return this.call('delete', [filter]);
  }

  async scan(filter: DrawerFilter, options?: ScanOptions): Promise<StoredDrawer[]> {
    // A few string columns (a wing's order) cross as one string per column, not an object per row.
    if (packableScan(options)) return unpackScan(await this.call<PackedScan>('scanPacked', [filter, options]));
    return this.call('scan', [filter, options]);
  }

  search(vector: Float32Array, filter: DrawerFilter, limit: number): Promise<Array<{ drawer: StoredDrawer; distance: number }>> {
    return this.call('search', [vector, filter, limit]);
  }

  nearestEach(vectors: readonly Float32Array[]): Promise<Array<NearestRow | undefined>> {
    return this.call('nearestEach', [vectors]);
  }

  fullText(query: string, filter: DrawerFilter, limit: number, options?: FullTextOptions): Promise<Array<{ drawer: StoredDrawer; score: number }>> {
    return this.call('fullText', [query, filter, limit, options ?? {}]);
  }

  fullTextScores(query: string, filter: DrawerFilter, limit: number, options?: FullTextOptions): Promise<Array<{ id: string; score: number }>> {
    return this.call('fullTextScores', [query, filter, limit, options ?? {}]);
  }

  count(filter?: DrawerFilter): Promise<number> {
    return this.call('count', [filter]);
  }

  /** Summed in the child: a few hundred places and the marked rows cross, not every row. */
  async placementSummary(rooms: readonly string[]): Promise<PlacementSummary | undefined> {
    // Packed by the child: a few strings cross the channel, not ~24k drawer objects at 200k drawers.
    const packed = await this.call<PackedPlacementSummary | undefined>('placementSummaryPacked', [rooms]);
    return packed && unpackPlacementSummarySliced(packed);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.retiring;
    await this.starting?.catch(() => undefined);
    await this.host?.close();
    this.host = undefined;
  }
}
