import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { LogEvent } from '../../hub/src/core/types.js';
import { LOGSTREAM_FILE, Logstream, type AppendInput } from '../../hub/src/logstream/logstream.js';
import { catchHubError, rejectedHubError } from '../helpers/errors.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST_LOGSTREAM = join(ROOT, 'dist', 'hub', 'src', 'logstream', 'logstream.js');

const REQUESTER = 'laptop-claude';
const WORKER = 'desktop-codex';
const PATCH = 'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n';

let dir: TmpDir;
let opened: Logstream[];

function open(): Logstream {
  const ls = Logstream.open(dir.path, { pollMs: 10 });
  opened.push(ls);
  return ls;
}

function status(overrides: AppendInput = {}): AppendInput {
  return { type: 'status', stream: 'project/palace', room: 'status', from_agent: REQUESTER, ...overrides };
}

/** Counts rows straight from the file, bypassing the service. */
function countRows(table: 'events' | 'artifacts'): number {
  const db = new Database(join(dir.path, LOGSTREAM_FILE), { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');
}

beforeEach(() => {
  dir = makeTmpDir('palace-logstream-');
  opened = [];
});

afterEach(() => {
  for (const ls of opened) ls.close();
  dir.cleanup();
});

describe('append', () => {
  it('stores a valid event with hub-assigned id and timestamp', async () => {
    const ls = open();
    const event = await ls.append(
      status({ to_agent: ' * ', body: 'hello\r\n', metadata: { b: 1, a: 2 }, correlation_id: 'task_x' }),
    );
    expect(event.id).toMatch(/^evt_\d{8}T\d{6}_[0-9a-f]{12}$/);
    expect(event.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(event).toMatchObject({
      to_agent: '*',
      body: 'hello\r\n',
      metadata: { a: 2, b: 1 },
      origin_replica: ls.replicaId,
    });
    expect(ls.list({}).events).toEqual([event]);
  });

  it.each([
    ['missing type', { type: undefined }, 'input.invalid', 'type'],
    ['bad type', { type: 'Task Request' }, 'input.invalid', 'type'],
    ['missing stream', { stream: undefined }, 'input.invalid', 'stream'],
    ['blank room', { room: '   ' }, 'input.invalid', 'room'],
    ['missing from_agent', { from_agent: '' }, 'input.invalid', 'from_agent'],
    ['control char in to_agent', { to_agent: 'bob\nalice' }, 'input.invalid', 'to_agent'],
    ['too long correlation_id', { correlation_id: 'c'.repeat(257) }, 'input.invalid', 'correlation_id'],
    ['unknown status', { status: 'done' }, 'input.invalid', 'status'],
    ['NUL in body', { body: 'a\u0000b' }, 'input.invalid', 'body'],
    ['body over 256 KiB', { body: 'x'.repeat(256 * 1024 + 1) }, 'input.too_large', 'body'],
    ['array metadata', { metadata: ['x'] }, 'input.invalid', 'metadata'],
    ['metadata over 64 KiB', { metadata: { k: 'x'.repeat(64 * 1024) } }, 'input.too_large', 'metadata'],
    ['non-list artifact_ids', { artifact_ids: 42 }, 'input.invalid', 'artifact_ids'],
    [
      'unknown artifact',
      { artifact_ids: ['art_20260131T120000_ffffffffffff'] },
      'artifact.unknown_ref',
      'artifact_ids',
    ],
  ] as const)('rejects %s and stores nothing', async (_name, patch, code, field) => {
    const ls = open();
    await ls.append(status({ body: 'existing' }));
    const before = ls.store.countEvents();
    const input = status(patch as AppendInput);

    const asyncErr = await rejectedHubError(ls.append(input));
    expect(asyncErr.code).toBe(code);
    expect(asyncErr.field).toBe(field);
    const syncErr = catchHubError(() => ls.appendNow(input));
    expect(syncErr.code).toBe(code);
    expect(syncErr.field).toBe(field);

    expect(ls.store.countEvents()).toBe(before);
    expect(countRows('events')).toBe(before);
  });

  it('reports validation failures as a rejected promise, never a synchronous throw', async () => {
    const ls = open();
    let promise: Promise<LogEvent> | undefined;
    expect(() => {
      promise = ls.append({});
    }).not.toThrow();
    expect((await rejectedHubError(promise ?? Promise.resolve())).field).toBe('type');
  });

  it('group-commits appends issued together: all resolve with distinct, ordered seqs', async () => {
    const ls = open();
    const promises = Array.from({ length: 40 }, (_, i) => ls.append(status({ body: `n${i}` })));
    // Nothing is committed until the batch is flushed.
    expect(ls.store.countEvents()).toBe(0);
    const events = await Promise.all(promises);
    expect(events.map((e) => e.body)).toEqual(Array.from({ length: 40 }, (_, i) => `n${i}`));
    const seqs = events.map((e) => e.seq);
    expect(new Set(seqs).size).toBe(40);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(events.map((e) => e.id)).size).toBe(40);
    expect(ls.store.countEvents()).toBe(40);
  });

  it('fails one bad event in a group commit without failing the others', async () => {
    const ls = open();
    const results = await Promise.allSettled([
      ls.append(status({ body: 'a' })),
      ls.append(status({ body: 'b', artifact_ids: ['art_20260131T120000_ffffffffffff'] })),
      ls.append(status({ body: 'c' })),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const rejected = results[1] as PromiseRejectedResult;
    expect((rejected.reason as { code: string }).code).toBe('artifact.unknown_ref');
    expect(ls.list({}).events.map((e) => e.body)).toEqual(['a', 'c']);
  });

  it('commits pending appends when closed', async () => {
    const ls = Logstream.open(dir.path);
    const pending = ls.append(status({ body: 'flushed on close' }));
    ls.close();
    const event = await pending;
    const reopened = open();
    expect(reopened.list({}).events).toEqual([event]);
  });
});

describe('list', () => {
  it('validates the query and maps unknown cursors to log.unknown_cursor', () => {
    const ls = open();
    ls.appendNow(status());
    expect(catchHubError(() => ls.list({ limit: 0 })).field).toBe('limit');
    expect(catchHubError(() => ls.list({ limit: 501 })).field).toBe('limit');
    expect(catchHubError(() => ls.list({ since_event_id: 'evt_20990101T000000_000000000000' })).code).toBe(
      'log.unknown_cursor',
    );
  });

  it('runs an inbox sweep: to_agent with broadcasts, since_event_id, preview', () => {
    const ls = open();
    const old = ls.appendNow(status({ to_agent: 'bob' }));
    const direct = ls.appendNow(status({ to_agent: 'bob', body: 'b'.repeat(300) }));
    ls.appendNow(status({ to_agent: 'carol' }));
    const broadcast = ls.appendNow(status({ to_agent: '*' }));
    const page = ls.list({ to_agent: 'bob', since_event_id: old.id, preview: true });
    expect(page.events.map((e) => e.id)).toEqual([direct.id, broadcast.id]);
    expect(page.events[0]).toMatchObject({ body_truncated: true, body_length: 300 });
    expect(page.events[0]?.body).toHaveLength(200);
    expect(page.cursor).toBe(broadcast.id);
  });
});

describe('wait', () => {
  it('returns at once when matching events already exist', async () => {
    const ls = open();
    const event = ls.appendNow(status({ to_agent: 'bob' }));
    // A 300 s timeout: if wait did not return at once the test would time out.
    const result = await ls.wait({ to_agent: 'bob', timeout_ms: 300_000 });
    expect(result.timed_out).toBe(false);
    expect(result.events).toEqual([event]);
  });

  it('wakes on an append made in this process, skipping non-matching events', async () => {
    const ls = open();
    const tip = ls.appendNow(status());
    const waiting = ls.wait({ to_agent: 'bob', since_event_id: tip.id, timeout_ms: 300_000 });
    const noise = await ls.append(status({ to_agent: 'carol' }));
    const wanted = await ls.append(status({ to_agent: 'bob', body: 'for bob' }));
    const result = await waiting;
    expect(result.timed_out).toBe(false);
    expect(result.events).toEqual([wanted]);
    expect(result.events.map((e) => e.id)).not.toContain(noise.id);
  });

  it('wakes on appendNow as well as on append', async () => {
    const ls = open();
    const tip = ls.appendNow(status());
    const waiting = ls.wait({ type: 'task.request', since_event_id: tip.id, timeout_ms: 300_000 });
    const request = ls.appendNow(status({ type: 'task.request', status: 'open', to_agent: WORKER }));
    const result = await waiting;
    expect(result.events.map((e) => e.id)).toEqual([request.id]);
  });

  it('times out with timed_out true, no events and the tip as cursor', async () => {
    const ls = open();
    const tip = ls.appendNow(status());
    const result = await ls.wait({ to_agent: 'nobody', since_event_id: tip.id, timeout_ms: 20 });
    expect(result).toEqual({ events: [], count: 0, has_more: false, cursor: tip.id, timed_out: true });
    const noSince = await ls.wait({ to_agent: 'nobody', timeout_ms: 1 });
    expect(noSince.timed_out).toBe(true);
    expect(noSince.events).toEqual([]);
    expect(noSince.cursor).toBe(tip.id);
  });

  it('returns at once with timed_out true for timeout_ms 0 and nothing matching', async () => {
    const ls = open();
    const tip = ls.appendNow(status());
    const result = await ls.wait({ to_agent: 'nobody', timeout_ms: 0 });
    expect(result).toMatchObject({ timed_out: true, events: [], cursor: tip.id });
  });

  it('advances the cursor past non-matching events seen while waiting', async () => {
    const ls = open();
    const tip = ls.appendNow(status());
    const controller = new AbortController();
    const waiting = ls.wait(
      { to_agent: 'nobody', since_event_id: tip.id, timeout_ms: 300_000 },
      { signal: controller.signal },
    );
    const noise = await ls.append(status({ to_agent: 'carol' }));
    controller.abort();
    const result = await waiting;
    expect(result.timed_out).toBe(true);
    expect(result.events).toEqual([]);
    expect(result.cursor).toBe(noise.id);
  });

  it('rejects bad filters before waiting', async () => {
    const ls = open();
    ls.appendNow(status());
    expect((await rejectedHubError(ls.wait({ timeout_ms: 300_001 }))).field).toBe('timeout_ms');
    expect((await rejectedHubError(ls.wait({ limit: 0, timeout_ms: 10 }))).field).toBe('limit');
    expect((await rejectedHubError(ls.wait({ type: 'NOPE', timeout_ms: 10 }))).field).toBe('type');
    const unknown = await rejectedHubError(
      ls.wait({ since_event_id: 'evt_20990101T000000_000000000000', timeout_ms: 10 }),
    );
    expect(unknown.code).toBe('log.unknown_cursor');
  });

  it('is woken by an append through a second Logstream on the same palace (another connection)', async () => {
    const waiter = open();
    const writer = open();
    const tip = waiter.appendNow(status());
    const waiting = waiter.wait({ to_agent: 'bob', since_event_id: tip.id, timeout_ms: 20_000 });
    writer.appendNow(status({ to_agent: 'carol' }));
    const wanted = writer.appendNow(status({ to_agent: 'bob', from_agent: 'other-agent' }));
    const result = await waiting;
    expect(result.timed_out).toBe(false);
    expect(result.events).toEqual([wanted]);
    expect(writer.replicaId).toBe(waiter.replicaId);
  });

  it('is woken by an append from a separate node process', async () => {
    expect(
      existsSync(DIST_LOGSTREAM),
      `missing ${DIST_LOGSTREAM}: the globalSetup build must run first`,
    ).toBe(true);
    const ls = open();
    const tip = ls.appendNow(status());
    const waiting = ls.wait({ to_agent: 'parent-agent', since_event_id: tip.id, timeout_ms: 25_000 });

    const script = `
      const { Logstream } = await import(process.env.PALACE_TEST_MODULE);
      const ls = Logstream.open(process.env.PALACE_TEST_DIR);
      const event = ls.appendNow({
        type: 'status', stream: 'project/palace', room: 'status',
        from_agent: 'child-agent', to_agent: 'parent-agent', body: 'from the child process',
      });
      ls.close();
      process.stdout.write(JSON.stringify({ id: event.id, seq: event.seq }));
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: {
        ...process.env,
        PALACE_TEST_MODULE: pathToFileURL(DIST_LOGSTREAM).href,
        PALACE_TEST_DIR: dir.path,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(exitCode, stderr).toBe(0);
    const written = JSON.parse(stdout) as { id: string; seq: number };

    const result = await waiting;
    expect(result.timed_out).toBe(false);
    expect(result.events.map((e) => e.id)).toEqual([written.id]);
    expect(result.events[0]).toMatchObject({
      from_agent: 'child-agent',
      body: 'from the child process',
      seq: written.seq,
    });
  });
});

describe('ack', () => {
  function delegate(ls: Logstream): LogEvent {
    return ls.appendNow({
      type: 'task.request',
      stream: 'project/palace',
      room: 'delegation',
      from_agent: REQUESTER,
      to_agent: WORKER,
      correlation_id: 'task_ack_1',
      branch: 'fix/ack',
      base_commit: 'abc1234',
      status: 'open',
      body: 'Goal:\nack things',
    });
  }

  it("appends an event.ack addressed to the target's writer, with ack_of, and never mutates the target", () => {
    const ls = open();
    const target = delegate(ls);
    const before = ls.store.getEvent(target.id);
    const ack = ls.ack({
      event_id: target.id,
      from_agent: WORKER,
      status: 'claimed',
      body: 'on it',
      metadata: { eta: '1h', ack_of: 'forged' },
    });
    expect(ack).toMatchObject({
      type: 'event.ack',
      stream: 'project/palace',
      room: 'delegation',
      from_agent: WORKER,
      to_agent: REQUESTER,
      correlation_id: 'task_ack_1',
      branch: 'fix/ack',
      base_commit: 'abc1234',
      status: 'claimed',
      body: 'on it',
      metadata: { eta: '1h', ack_of: target.id },
    });
    expect(ls.store.getEvent(target.id)).toEqual(before);
    expect(ls.store.getEvent(target.id)).toEqual(target);
    expect(ls.list({}).events.map((e) => e.id)).toEqual([target.id, ack.id]);
  });

  it("uses the target's id as correlation when the target has none", () => {
    const ls = open();
    const note = ls.appendNow(status({ from_agent: 'someone' }));
    const ack = ls.ack({ event_id: note.id, from_agent: WORKER });
    expect(ack.correlation_id).toBe(note.id);
    expect(ack.to_agent).toBe('someone');
    expect(ack.status).toBeNull();
    expect(ack.metadata).toEqual({ ack_of: note.id });
  });

  it('fails log.event_not_found for an unknown event and stores nothing', () => {
    const ls = open();
    delegate(ls);
    const err = catchHubError(() =>
      ls.ack({ event_id: 'evt_20990101T000000_000000000000', from_agent: WORKER, status: 'claimed' }),
    );
    expect(err.code).toBe('log.event_not_found');
    expect(err.field).toBe('event_id');
    expect(ls.store.countEvents()).toBe(1);
  });

  it.each([
    ['a non-ack status', { status: 'ready' }, 'status'],
    ['superseded as an ack status', { status: 'superseded' }, 'status'],
    ['no from_agent', { from_agent: undefined }, 'from_agent'],
    ['no event_id', { event_id: undefined }, 'event_id'],
    ['array metadata', { metadata: [1] }, 'metadata'],
    ['a NUL in the body', { body: '\u0000' }, 'body'],
  ])('rejects %s and stores nothing', (_name, patch, field) => {
    const ls = open();
    const target = delegate(ls);
    const err = catchHubError(() =>
      ls.ack({ event_id: target.id, from_agent: WORKER, status: 'claimed', ...patch }),
    );
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe(field);
    expect(ls.store.countEvents()).toBe(1);
  });
});

describe('artifacts', () => {
  it.each([
    ['a clean patch', PATCH],
    ['CRLF text', 'one\r\ntwo\r\n'],
    ['multi-byte UTF-8 without final newline', 'naïve café — 日本語 😀'],
  ])('stores %s with sha256 and size of its UTF-8 bytes, byte-exact on read', (_name, content) => {
    const ls = open();
    const meta = ls.putArtifact({ kind: 'file', created_by: WORKER, content, metadata: { path: 'a.txt' } });
    expect(meta.id).toMatch(/^art_\d{8}T\d{6}_[0-9a-f]{12}$/);
    expect(meta.sha256).toBe(sha256(content));
    expect(meta.size_bytes).toBe(Buffer.byteLength(content, 'utf8'));
    expect(meta).not.toHaveProperty('warnings');
    const got = ls.getArtifact(meta.id);
    expect(got.content).toBe(content);
    expect(sha256(got.content)).toBe(meta.sha256);
    expect(got).toMatchObject({ kind: 'file', created_by: WORKER, metadata: { path: 'a.txt' } });
  });

  it('warns on a patch without its final newline or with CRLF, storing it unchanged', () => {
    const ls = open();
    const noNewline = ls.putArtifact({ kind: 'patch', created_by: WORKER, content: PATCH.slice(0, -1) });
    expect(noNewline.warnings).toHaveLength(1);
    expect(ls.getArtifact(noNewline.id).content).toBe(PATCH.slice(0, -1));
    const crlf = ls.putArtifact({
      kind: 'patch',
      created_by: WORKER,
      content: PATCH.replaceAll('\n', '\r\n'),
    });
    expect(crlf.warnings).toHaveLength(1);
    expect(crlf.warnings?.[0]).toMatch(/CRLF|carriage/);
    expect(ls.getArtifact(crlf.id).content).toBe(PATCH.replaceAll('\n', '\r\n'));
  });

  it('stores a 4 MiB artifact and refuses one byte more', () => {
    const ls = open();
    const content = 'a'.repeat(4 * 1024 * 1024 - 1) + '\n';
    const meta = ls.putArtifact({ kind: 'log', created_by: WORKER, content });
    expect(meta.size_bytes).toBe(4 * 1024 * 1024);
    expect(ls.getArtifact(meta.id).content).toBe(content);
    const err = catchHubError(() =>
      ls.putArtifact({ kind: 'log', created_by: WORKER, content: content + 'x' }),
    );
    expect(err.code).toBe('input.too_large');
    expect(countRows('artifacts')).toBe(1);
  });

  it.each([
    ['a malformed kind', { kind: 'Diff' }, 'kind'],
    ['no created_by', { created_by: undefined }, 'created_by'],
    ['empty content', { content: '' }, 'content'],
    ['NUL in content', { content: 'a\u0000' }, 'content'],
    ['a lone surrogate', { content: 'a\uD800\n' }, 'content'],
    ['array metadata', { metadata: [] }, 'metadata'],
  ])('rejects %s and stores nothing', (_name, patch, field) => {
    const ls = open();
    const err = catchHubError(() =>
      ls.putArtifact({ kind: 'patch', created_by: WORKER, content: PATCH, ...patch }),
    );
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe(field);
    expect(countRows('artifacts')).toBe(0);
  });

  it('fails artifact.not_found for an unknown id and input.invalid for a missing one', () => {
    const ls = open();
    const missing = catchHubError(() => ls.getArtifact('art_20990101T000000_000000000000'));
    expect(missing.code).toBe('artifact.not_found');
    expect(missing.field).toBe('artifact_id');
    expect(catchHubError(() => ls.getArtifact('')).code).toBe('input.invalid');
  });
});

describe('submitPatch', () => {
  function delegate(ls: Logstream, correlationId = 'task_patch_1'): LogEvent {
    return ls.appendNow({
      type: 'task.request',
      stream: 'project/palace',
      room: 'delegation',
      from_agent: REQUESTER,
      to_agent: WORKER,
      correlation_id: correlationId,
      branch: 'fix/patch',
      base_commit: 'deadbeef',
      status: 'open',
      body: 'Goal:\npatch things',
    });
  }

  it('stores the artifact and a patch.ready event defaulted from the task.request', () => {
    const ls = open();
    delegate(ls);
    const { artifact, event } = ls.submitPatch({
      from_agent: WORKER,
      correlation_id: 'task_patch_1',
      content: PATCH,
      body: 'tests pass',
    });
    expect(artifact).toMatchObject({ kind: 'patch', created_by: WORKER, sha256: sha256(PATCH) });
    expect(artifact).not.toHaveProperty('warnings');
    expect(event).toMatchObject({
      type: 'patch.ready',
      status: 'ready',
      stream: 'project/palace',
      room: 'patches',
      from_agent: WORKER,
      to_agent: REQUESTER,
      correlation_id: 'task_patch_1',
      branch: 'fix/patch',
      base_commit: 'deadbeef',
      artifact_ids: [artifact.id],
      body: 'tests pass',
    });
    expect(ls.getArtifact(artifact.id).content).toBe(PATCH);
    expect(ls.store.getEvent(event.id)?.artifact_ids).toEqual([artifact.id]);
  });

  it('lets explicit fields override the defaults', () => {
    const ls = open();
    delegate(ls);
    const { event } = ls.submitPatch({
      from_agent: WORKER,
      correlation_id: 'task_patch_1',
      content: PATCH,
      stream: 'project/other',
      room: 'reviews',
      to_agent: 'reviewer-agent',
      branch: 'other-branch',
    });
    expect(event).toMatchObject({
      stream: 'project/other',
      room: 'reviews',
      to_agent: 'reviewer-agent',
      branch: 'other-branch',
      base_commit: 'deadbeef',
    });
  });

  it('takes the defaults from the request with the same correlation id only', () => {
    const ls = open();
    delegate(ls, 'task_other');
    const { event } = ls.submitPatch({
      from_agent: WORKER,
      correlation_id: 'task_unmatched',
      content: PATCH,
      stream: 'project/solo',
      to_agent: 'pi-gemini',
    });
    expect(event).toMatchObject({ stream: 'project/solo', to_agent: 'pi-gemini', branch: null, base_commit: null });
    // With no request to take the recipient from, a patch.ready must name one: nothing is stored.
    const artifacts = countRows('artifacts');
    const err = catchHubError(() => ls.submitPatch({ from_agent: WORKER, correlation_id: 'task_unmatched', content: PATCH, stream: 'project/solo' }));
    expect(err).toMatchObject({ code: 'input.invalid', field: 'to_agent' });
    expect(countRows('artifacts')).toBe(artifacts);
  });

  it('returns the patch warnings with the stored artifact', () => {
    const ls = open();
    delegate(ls);
    const { artifact } = ls.submitPatch({
      from_agent: WORKER,
      correlation_id: 'task_patch_1',
      content: 'x\r\ny',
    });
    expect(artifact.warnings).toHaveLength(2);
    expect(ls.getArtifact(artifact.id).content).toBe('x\r\ny');
  });

  it.each([
    ['no from_agent', { from_agent: undefined }, 'input.invalid', 'from_agent'],
    ['empty content', { content: '' }, 'input.invalid', 'content'],
    ['missing content', { content: undefined }, 'input.invalid', 'content'],
    ['NUL in content', { content: 'diff\u0000\n' }, 'input.invalid', 'content'],
    ['content over 4 MiB', { content: 'x'.repeat(4 * 1024 * 1024 + 1) }, 'input.too_large', 'content'],
    ['body over 256 KiB', { body: 'b'.repeat(256 * 1024 + 1) }, 'input.too_large', 'body'],
    ['bad to_agent', { to_agent: 'a\tb' }, 'input.invalid', 'to_agent'],
    ['array metadata', { metadata: ['m'] }, 'input.invalid', 'metadata'],
    [
      'no stream and no request to default from',
      { correlation_id: 'task_nobody' },
      'input.invalid',
      'stream',
    ],
  ] as const)('rejects %s and stores nothing (no orphan artifact)', (_name, patch, code, field) => {
    const ls = open();
    delegate(ls);
    const err = catchHubError(() =>
      ls.submitPatch({ from_agent: WORKER, correlation_id: 'task_patch_1', content: PATCH, ...patch }),
    );
    expect(err.code).toBe(code);
    expect(err.field).toBe(field);
    expect(countRows('artifacts')).toBe(0);
    expect(countRows('events')).toBe(1);
  });
});

describe('task projection', () => {
  it('follows a full delegation open → claimed → ready → applied', () => {
    const ls = open();
    const request = ls.appendNow({
      type: 'task.request',
      stream: 'project/palace',
      room: 'delegation',
      from_agent: REQUESTER,
      to_agent: WORKER,
      correlation_id: 'task_full',
      branch: 'fix/full',
      base_commit: 'abc1234',
      status: 'open',
      body: 'Goal:\nfull',
    });
    ls.appendNow(status({ to_agent: '*', correlation_id: 'task_full', body: 'watching task_full' }));
    const claim = ls.ack({ event_id: request.id, from_agent: WORKER, status: 'claimed' });
    const { artifact, event: ready } = ls.submitPatch({
      from_agent: WORKER,
      correlation_id: 'task_full',
      content: PATCH,
    });
    const applied = ls.ack({
      event_id: ready.id,
      from_agent: REQUESTER,
      status: 'applied',
      body: 'tests pass',
    });

    const task = ls.task('task_full');
    expect(task).toMatchObject({
      correlation_id: 'task_full',
      status: 'applied',
      done: true,
      request_event_id: request.id,
      requester: REQUESTER,
      worker: WORKER,
      artifact_ids: [artifact.id],
      event_count: 5,
      last_event_id: applied.id,
    });
    expect(task.history.map((h) => [h.from, h.to, h.expected, h.event_id])).toEqual([
      [null, 'open', true, request.id],
      ['open', 'claimed', true, claim.id],
      ['claimed', 'ready', true, ready.id],
      ['ready', 'applied', true, applied.id],
    ]);
  });

  it('lists every task in order of first appearance', () => {
    const ls = open();
    const a = ls.appendNow(
      status({
        type: 'task.request',
        status: 'open',
        correlation_id: 'task_a',
        to_agent: WORKER,
        room: 'delegation',
      }),
    );
    ls.appendNow(status({ body: 'no correlation' }));
    ls.appendNow(
      status({
        type: 'task.request',
        status: 'open',
        correlation_id: 'task_b',
        to_agent: 'pi-gemini',
        room: 'delegation',
      }),
    );
    ls.ack({ event_id: a.id, from_agent: WORKER, status: 'claimed' });
    ls.appendNow(
      status({ type: 'task.reply', status: 'blocked', correlation_id: 'task_b', from_agent: 'pi-gemini' }),
    );

    const tasks = ls.tasks();
    expect(tasks.map((t) => [t.correlation_id, t.status, t.worker, t.done])).toEqual([
      ['task_a', 'claimed', WORKER, false],
      ['task_b', 'blocked', 'pi-gemini', true],
    ]);
    expect(ls.tasks({ stream: 'project/elsewhere' })).toEqual([]);
  });

  it('fails log.event_not_found for a correlation id with no events', () => {
    const ls = open();
    const err = catchHubError(() => ls.task('task_missing'));
    expect(err.code).toBe('log.event_not_found');
    expect(err.field).toBe('correlation_id');
    expect(catchHubError(() => ls.task('')).code).toBe('input.invalid');
  });

  it('projects tasks over more than one page of events', async () => {
    const ls = open();
    ls.appendNow(
      status({ type: 'task.request', status: 'open', correlation_id: 'task_long', to_agent: WORKER }),
    );
    await Promise.all(
      Array.from({ length: 520 }, (_, i) =>
        ls.append(status({ correlation_id: `task_n${i}`, type: 'task.request', to_agent: '*' })),
      ),
    );
    ls.appendNow(
      status({ type: 'task.reply', status: 'failed', correlation_id: 'task_long', from_agent: WORKER }), // to the requester
    );

    const tasks = ls.tasks();
    expect(tasks).toHaveLength(521);
    expect(tasks[0]).toMatchObject({ correlation_id: 'task_long', status: 'failed', event_count: 2 });
    expect(ls.task('task_long').status).toBe('failed');
  });

  it('projects in append order whatever order the query asks for', async () => {
    const ls = open();
    const request = ls.appendNow(
      status({ type: 'task.request', correlation_id: 'task_o', to_agent: WORKER }),
    );
    await Promise.all(Array.from({ length: 510 }, () => ls.append(status({ body: 'filler' }))));
    ls.ack({ event_id: request.id, from_agent: WORKER, status: 'claimed' });
    const [task] = ls.tasks({ order: 'desc' });
    expect(task?.status).toBe('claimed');
    expect(task?.history.map((h) => h.to)).toEqual(['open', 'claimed']);
  });

  it('answers one task from its own events while a cold projection is unbuilt, and builds it in slices for a page', async () => {
    const ls = Logstream.open(dir.path, { pollMs: 10, sliceRows: 2 });
    opened.push(ls);
    const request = ls.appendNow(status({ type: 'task.request', correlation_id: 'task_cold', to_agent: WORKER }));
    ls.ack({ event_id: request.id, from_agent: WORKER, status: 'claimed' });
    for (let i = 0; i < 5; i++) ls.appendNow(status({ type: 'task.request', correlation_id: `task_c${i}`, to_agent: WORKER }));
    ls.store.tasks.reset();
    expect(ls.store.tasks.ready()).toBe(false);
    expect(ls.task('task_cold')).toMatchObject({ status: 'claimed', worker: WORKER, event_count: 2 });
    expect(ls.store.tasks.ready()).toBe(false);
    const page = await ls.taskPage({ limit: 2 });
    expect(ls.store.tasks.ready()).toBe(true);
    expect(page).toMatchObject({ count: 2, total: 6, has_more: true, counts: { all: 6, active: 6, done: 0 } });
    expect(page.tasks.map((t) => t.correlation_id)).toEqual(['task_cold', 'task_c0']);
  });

  it('honours since_event_id when projecting tasks', () => {
    const ls = open();
    ls.appendNow(status({ type: 'task.request', correlation_id: 'task_old', to_agent: WORKER }));
    const mark = ls.appendNow(status());
    ls.appendNow(status({ type: 'task.request', correlation_id: 'task_new', to_agent: WORKER }));
    expect(ls.tasks({ since_event_id: mark.id }).map((t) => t.correlation_id)).toEqual(['task_new']);
  });
});
