// Scaffolding shared by the projection property tests (task table, coordination reads): throw-away
// stores closed after each test, the whole log read straight from a store, the command generator both
// use (appends on either of two stores, pull rounds, raw imports, plus one of the test's own), one
// pull round, and a real writer process SIGKILLed in the middle of its batches.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import fc from 'fast-check';
import { afterEach, expect } from 'vitest';

import type { LogEvent } from '../../hub/src/core/types.js';
import { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { pullFromPeer } from '../../hub/src/sync/pull-round.js';
import { nextHex } from './fixtures.js';
import { REPO_ROOT, sleep } from './hub.js';
import { inProcessTransport, pinnedPeer } from './sync.js';

export interface PropertyStores {
  /** Opens (creating) a store at `path` (or ':memory:'), closed after the test. */
  openStore(path: string): SqliteEventStore;
  /** A new temporary directory, removed after the test. */
  tempDir(prefix: string): string;
}

/** Stores and directories for one test file; call at the file's top level (registers an afterEach). */
export function propertyStores(): PropertyStores {
  const dirs: string[] = [];
  const opened: SqliteEventStore[] = [];
  afterEach(() => {
    for (const s of opened.splice(0)) s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    openStore(path) {
      const store = new SqliteEventStore(path, { mintReplicaId: () => `rep_${nextHex()}` });
      opened.push(store);
      return store;
    },
    tempDir(prefix) {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
  };
}

/** Every event of the log in append order, read straight from the events table. */
export function allEvents(store: SqliteEventStore): LogEvent[] {
  const out: LogEvent[] = [];
  let since: string | null = null;
  for (;;) {
    const page = store.query({
      to_agent: [], exclude_from_agent: [], from_agent: [], type: [], status: [], correlation_id: [], stream: [], room: [],
      since_event_id: since, before_event_id: null, since_created_at: null, limit: 500, order: 'asc', preview: false,
    });
    out.push(...page.events);
    if (!page.has_more) return out;
    since = page.events.at(-1)?.id ?? null;
  }
}

/** The commands both tests run: a batch appended on store 0 or 1, a pull round of 0 from 1, a raw import. */
export type SyncCommand<S> = { kind: 'append'; at: 0 | 1; events: S[] } | { kind: 'pull'; pageLimit: number } | { kind: 'import' };

/**
 * Appends (of 1-5 events from `spec`, at `appendWeight`), pulls and imports (weight 1 each), then the
 * test's own command `extra` (weight 1), in that order.
 */
export function syncCommands<S, X>(spec: fc.Arbitrary<S>, appendWeight: number, extra: fc.Arbitrary<X>): fc.Arbitrary<SyncCommand<S> | X> {
  return fc.oneof(
    { weight: appendWeight, arbitrary: fc.record({ kind: fc.constant('append' as const), at: fc.constantFrom(0 as const, 1 as const), events: fc.array(spec, { minLength: 1, maxLength: 5 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('pull' as const), pageLimit: fc.integer({ min: 1, max: 4 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('import' as const) }) },
    { weight: 1, arbitrary: extra },
  );
}

/** One pull round of `into` from `from` (pinned, in process); it must report no errors. */
export async function pullRound(into: SqliteEventStore, from: SqliteEventStore, pageLimit: number): Promise<void> {
  const report = await pullFromPeer(into.replica, inProcessTransport(from.replica), { pageLimit, peer: pinnedPeer(from.replica) });
  expect(report.errors.map((e) => e.message)).toEqual([]);
}

/**
 * Runs a real writer process on the palace `dir` (the built dist/ Logstream as `ls`, a counter `n`)
 * and SIGKILLs it in the middle of its batches: `prelude` runs once, then `batch` forever (it appends
 * one batch and advances `n` by its size); the kill comes soon after `n` reaches 2000.
 */
export async function killWriterMidBatch(dir: string, code: { prelude?: string; batch: string }): Promise<void> {
  const script = `
    import { Logstream } from ${JSON.stringify(join(REPO_ROOT, 'dist/hub/src/logstream/logstream.js'))};
    const ls = Logstream.open(${JSON.stringify(dir)});
    let n = 0;
    let told = false;
    ${code.prelude ?? ''}
    for (;;) {
      ${code.batch}
      if (!told && n >= 2000) {
        told = true;
        process.stdout.write('ready\\n');
      }
    }
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`writer exited early (${code})`)));
  });
  await sleep(50);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('close', resolve));
}
