// Fencing reads the claim even before the task table has it (issue 30: a local append commits its
// event only; the task projection follows in batches). A claim appended on one connection and not
// yet projected must still fence another writer on a second connection over the same file (a CLI
// beside the hub): the holder's own writes pass, a non-holder's are refused or flagged stale.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { HubError } from '../../hub/src/errors.js';
import { LOGSTREAM_FILE, Logstream } from '../../hub/src/logstream/logstream.js';
import { SCHEMA_VERSION } from '../../hub/src/logstream/schema.js';
import { PROJECTED_SEQ_KEY } from '../../hub/src/logstream/task-projection.js';
import { REPO_ROOT } from '../helpers/hub.js';
import type { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';

const TASK = 'task_lag';
let dir: string;
let hub: Logstream<SqliteEventStore>;
let cli: Logstream<SqliteEventStore>;
let request: string;

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof HubError) return err.code;
    throw err;
  }
  return 'accepted';
};

/** The stored row's status, read straight from the table (no catch-up). */
const rowStatus = (ls: Logstream<SqliteEventStore>): string | undefined =>
  ls.store.db.prepare('SELECT status FROM tasks WHERE correlation_id = ?').pluck().get(TASK) as string | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'palace-lag-fence-'));
  hub = Logstream.open(dir);
  cli = Logstream.open(dir);
  request = hub.appendNow({ type: 'task.request', stream: 'project/p', room: 'coordination', from_agent: 'planner', to_agent: '*', correlation_id: TASK, status: 'open', body: 'do it' }).id;
  hub.store.tasks.catchUp(); // projected: the table holds the open task
});

afterEach(() => {
  hub.close();
  cli.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a fenced append against a claim not yet projected', () => {
  it('leaves the claim out of the task table until a batch or a read brings it in', () => {
    hub.ack({ event_id: request, from_agent: 'codex-1', status: 'claimed' });
    expect(rowStatus(hub)).toBe('open');
    expect(hub.store.tasks.page({ order: 'asc', limit: null }).tasks[0]?.status).toBe('claimed');
    expect(rowStatus(hub)).toBe('claimed');
  });

  it("refuses or flags a non-holder's writes and lets the holder's through, from another connection", () => {
    const claim = hub.ack({ event_id: request, from_agent: 'codex-1', status: 'claimed' });
    expect(claim.claim?.won).toBe(true);
    // A second claim from the other connection loses to the first (first in log order wins).
    expect(cli.ack({ event_id: request, from_agent: 'codex-2', status: 'claimed' }).claim?.won).toBe(false);
    // A release by someone who is neither claimer nor requester: refused, naming the claim it conflicts with.
    expect(codeOf(() => cli.releaseClaim({ event_id: TASK, from_agent: 'codex-2' }))).toBe('claim.not_yours');
    // Naming the live claim's attempt without holding it: refused.
    expect(codeOf(() => cli.appendNow({ type: 'task.reply', stream: 'project/p', room: 'r', from_agent: 'codex-2', correlation_id: TASK, status: 'failed', attempt: claim.id }))).toBe(
      'task.stale_attempt',
    );
    // A patch from a non-holder is kept, flagged stale, and does not move the task.
    const late = cli.appendNow({ type: 'patch.ready', stream: 'project/p', room: 'patches', from_agent: 'codex-2', correlation_id: TASK, status: 'ready', body: 'p' });
    expect(late.metadata.stale_attempt).toBeDefined();
    // The holder renews and ships its patch under its attempt, from the other connection too.
    expect(codeOf(() => cli.renew({ event_id: TASK, from_agent: 'codex-1', lease_ms: 60_000 }))).toBe('accepted');
    const mine = cli.appendNow({ type: 'patch.ready', stream: 'project/p', room: 'patches', from_agent: 'codex-1', correlation_id: TASK, status: 'ready', body: 'p', attempt: claim.id });
    expect(mine.metadata.attempt).toBe(claim.id);
    for (const ls of [hub, cli]) expect(ls.task(TASK)).toMatchObject({ status: 'ready', worker: 'codex-1', claim_event_id: claim.id });
  });

  it('checks the ack order against the unprojected claim', () => {
    hub.ack({ event_id: request, from_agent: 'codex-1', status: 'claimed' });
    hub.appendNow({ type: 'task.reply', stream: 'project/p', room: 'r', from_agent: 'codex-1', correlation_id: TASK, status: 'applied', body: 'done' });
    // The task is done: a claim on it skips the task order, on either connection.
    for (const ls of [hub, cli]) expect(codeOf(() => ls.ack({ event_id: request, from_agent: 'codex-2', status: 'claimed' }))).toBe('task.out_of_order');
  });
});

describe('schema migration 8 (the watermark)', () => {
  it('gives a schema 7 palace, whose table kept up with every append, a watermark at its last event', () => {
    hub.ack({ event_id: request, from_agent: 'codex-1', status: 'claimed' });
    hub.close();
    cli.close(); // closing projects what each left pending
    const file = join(dir, LOGSTREAM_FILE);
    const raw = new Database(file);
    const rows = (): unknown[] => raw.prepare('SELECT * FROM tasks ORDER BY first_seq').all();
    const before = rows();
    expect(raw.prepare('SELECT status FROM tasks').pluck().all()).toEqual(['claimed']);
    raw.exec(`DELETE FROM meta WHERE key = '${PROJECTED_SEQ_KEY}'; PRAGMA user_version = 7;
      DROP TABLE event_routes_agent; DROP TABLE event_routes_task;
      CREATE INDEX events_to_agent_idx ON events(to_agent, seq) WHERE to_agent IS NOT NULL;
      CREATE INDEX events_correlation_idx ON events(correlation_id, seq) WHERE correlation_id IS NOT NULL;`);
    raw.close();
    hub = Logstream.open(dir);
    cli = Logstream.open(dir);
    const check = new Database(file, { readonly: true });
    try {
      expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(SCHEMA_VERSION).toBe(9);
      expect(check.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(PROJECTED_SEQ_KEY)).toBe(String(hub.store.topSeq()));
      expect(check.prepare('SELECT * FROM tasks ORDER BY first_seq').all()).toEqual(before);
    } finally {
      check.close();
    }
    expect(hub.task(TASK)).toMatchObject({ status: 'claimed', worker: 'codex-1' });
  });
});

describe('a claim left pending by a process that died', () => {
  it('fences the writes of another process and shows in its reads', () => {
    // A real second process (the built Logstream) claims and is SIGKILLed before anything projects its claim.
    const script = `
      import { Logstream } from ${JSON.stringify(join(REPO_ROOT, 'dist/hub/src/logstream/logstream.js'))};
      const ls = Logstream.open(${JSON.stringify(dir)});
      ls.ack({ event_id: ${JSON.stringify(request)}, from_agent: 'codex-1', status: 'claimed' });
      process.kill(process.pid, 'SIGKILL');
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.signal).toBe('SIGKILL');
    expect(rowStatus(cli)).toBe('open'); // the claim is in the log, not in the table
    expect(codeOf(() => cli.releaseClaim({ event_id: TASK, from_agent: 'codex-2' }))).toBe('claim.not_yours');
    expect(cli.ack({ event_id: request, from_agent: 'codex-2', status: 'claimed' }).claim?.won).toBe(false);
    expect(cli.store.tasks.page({ order: 'asc', limit: null }).tasks[0]).toMatchObject({ status: 'claimed', worker: 'codex-1' });
    expect(rowStatus(cli)).toBe('claimed');
  });
});
