// The hub's lease sweeper: appends `claim.expired` (from the hub's own identity, agent `hub`) when a
// claim's lease lapses, so the task is open again. Only claims whose event originated on this replica
// are expired here: exactly one hub expires any claim, whatever the mesh. Clock injected for tests.
// It starts from the task projection (the claimed tasks, a page per pass) and the log's tip, so a
// year-old log is not read from its first event while the hub answers its first requests. On a log
// file, a running hub reads that projection on a worker thread (lease-seed.ts): cold pages block the
// thread that reads them.

import type { Logger } from '../log.js';
import { readClaimedLeasesOffThread, type ClaimedLease } from './lease-seed.js';
import type { Logstream } from './logstream.js';

/** The agent name the hub writes its own coordination events under. */
export const HUB_AGENT = 'hub';

const PAGES_PER_PASS = 10;
/**
 * Claimed tasks read from the projection per pass while the sweeper starts. On the scale palace
 * (40k claimed tasks, a 1.1 GB log just opened) a pass of 1,000 read cold pages for up to 62 ms
 * (quiet) and 40-190 ms under load, each one a /healthz stall; a pass of 250 stays under ~15 ms.
 */
const SEED_PER_PASS = 250;
/**
 * Pause between two such passes (a few ms each): a hub that has just started answers its
 * first requests in between; a lease that lapsed while the hub was down is expired a moment later.
 */
const SEED_PAUSE_MS = 25;

export interface LeaseSweeperOptions {
  now?: () => Date;
  /** Longest pause between checks (each reads only the events appended since the last). Default 1000. */
  maxIntervalMs?: number;
  log?: Logger;
  /** Don't start the timer (tests call tick() themselves). */
  manual?: boolean;
  /**
   * Read the claimed tasks at the start on a worker thread instead of a page per tick. Default: on
   * for a log file unless `manual`; `:memory:` logs always read in ticks.
   */
  offThread?: boolean;
  /**
   * Off the main thread, the read of each page (and the worker's start) waits for this: a hub holds
   * it while a memory open runs (background-gate.ts). Default: read at once.
   */
  beforeSeedPage?: () => PromiseLike<unknown>;
}

export interface LeaseSweeper {
  /** One pass: reads what changed, expires every lapsed lease this replica owns; returns the expiries. */
  tick(): string[];
  /** Resolves once the claimed tasks at the start are all known (at once when reading them in ticks). */
  readonly seeded: Promise<void>;
  stop(): void;
}

export function startLeaseSweeper(logstream: Logstream, options: LeaseSweeperOptions = {}): LeaseSweeper {
  const now = options.now ?? ((): Date => logstream.clock());
  const maxInterval = options.maxIntervalMs ?? 1_000;
  /** Claimed tasks: correlation id -> lease end (ms) and the claim's origin replica. */
  const leases = new Map<string, { end: number; origin: string }>();
  let cursor: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const refresh = (ids: Iterable<string>): void => {
    for (const id of ids) {
      const task = logstream.task(id);
      const claim = task.claim_event_id ? logstream.store.getEvent(task.claim_event_id) : undefined;
      if (task.status === 'claimed' && task.lease_expires_at && claim)
        leases.set(id, { end: Date.parse(task.lease_expires_at), origin: claim.origin_replica });
      else leases.delete(id);
    }
  };

  /**
   * At the start, with a complete projection: the first_seq of the last claimed task read from it
   * (undefined once all are read). The log is then followed from the tip taken at the start; a task
   * that changed since is refreshed from the projection either way (the projection is current).
   */
  let seeding: number | undefined;
  const complete = logstream.store.tasks.ready();
  if (complete) {
    cursor = logstream.tipId() ?? undefined;
    seeding = 0;
  }
  const learn = (page: readonly ClaimedLease[]): void => {
    for (const t of page)
      if (t.lease_expires_at !== null && t.origin_replica !== null && !leases.has(t.correlation_id))
        leases.set(t.correlation_id, { end: Date.parse(t.lease_expires_at), origin: t.origin_replica });
  };
  const seed = (): void => {
    if (seeding === undefined) return;
    const page = logstream.store.tasks.claimedLeases(seeding, SEED_PER_PASS);
    learn(page);
    seeding = page.length < SEED_PER_PASS ? undefined : page.at(-1)?.first_seq;
  };

  /**
   * Off the main thread: the worker's pages come from a snapshot that may predate events this sweeper
   * has read since, so a task any such event touched is read again from the projection (current)
   * instead of taken from the page. Until the worker is done, ticks read no projection pages.
   */
  const path = logstream.store.path;
  // A log with no claimed task (every new palace, every test hub) starts no worker (~55 ms of CPU):
  // one row read through the status index tells.
  const notInTicks = complete && path !== ':memory:' && (options.offThread ?? !options.manual);
  if (notInTicks) seeding = undefined;
  const offThread = notInTicks && logstream.store.tasks.claimedLeases(0, 1).length > 0;
  let touchedWhileSeeding: Set<string> | undefined;
  const stopSeed = new AbortController();
  let seeded: Promise<void> = Promise.resolve();
  if (offThread) {
    const touched = (touchedWhileSeeding = new Set());
    seeded = readClaimedLeasesOffThread(
      path,
      (page) => {
        if (stopped) return;
        const again = page.filter((t) => touched.has(t.correlation_id)).map((t) => t.correlation_id);
        learn(page.filter((t) => !touched.has(t.correlation_id)));
        refresh(again);
        schedule();
      },
      stopSeed.signal,
      options.beforeSeedPage,
    ).then(
      () => {
        touchedWhileSeeding = undefined;
      },
      (err: unknown) => {
        // The worker could not read them: read them in ticks instead, as on a :memory: log.
        options.log?.warn('could not read the leases off the main thread; reading them in passes', { error: (err as Error).message });
        touchedWhileSeeding = undefined;
        if (!stopped) {
          seeding = 0;
          schedule();
        }
      },
    );
  }

  /** Events still unread after the last pass (a big log is read a few pages per pass, not at once). */
  let behind = false;
  const readNew = (): void => {
    const touched = new Set<string>();
    behind = false;
    for (let pages = 0; ; pages++) {
      if (pages === PAGES_PER_PASS) {
        behind = true;
        break;
      }
      const page = logstream.list({ since_event_id: cursor, limit: 500 });
      // Only a claim or a renewal makes a task claimed; any event may end a claim we track.
      for (const e of page.events) {
        if (e.correlation_id) touchedWhileSeeding?.add(e.correlation_id);
        if (e.correlation_id && ((e.type === 'event.ack' && e.status === 'claimed') || e.type === 'claim.renewed' || leases.has(e.correlation_id)))
          touched.add(e.correlation_id);
      }
      cursor = page.cursor ?? cursor;
      if (!page.has_more) break;
    }
    refresh(touched);
  };

  const tick = (): string[] => {
    readNew();
    seed();
    const expired: string[] = [];
    const at = now().getTime();
    for (const [id, lease] of leases) {
      if (lease.end > at || lease.origin !== logstream.replicaId) continue;
      try {
        logstream.expireClaim(id, HUB_AGENT);
        expired.push(id);
      } catch (err) {
        options.log?.warn(`could not expire the lease on ${id}`, { error: (err as Error).message });
      }
    }
    if (expired.length > 0) refresh(expired);
    return expired;
  };

  const schedule = (): void => {
    if (stopped || options.manual) return;
    const at = now().getTime();
    let next = behind ? 0 : seeding !== undefined ? Math.min(SEED_PAUSE_MS, maxInterval) : maxInterval;
    for (const lease of leases.values()) if (lease.origin === logstream.replicaId) next = Math.min(next, Math.max(0, lease.end - at + 5));
    clearTimeout(timer);
    timer = setTimeout(run, next);
    timer.unref();
  };

  function run(): void {
    if (stopped) return;
    try {
      tick();
    } catch (err) {
      options.log?.warn('lease sweep failed', { error: (err as Error).message });
    }
    schedule();
  }

  const stop = (): void => {
    stopped = true;
    clearTimeout(timer);
    stopSeed.abort();
  };
  logstream.onClose(stop);
  if (!options.manual) setImmediate(run);
  return { tick, seeded, stop };
}
