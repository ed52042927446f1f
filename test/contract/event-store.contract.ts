// The EventStore acceptance suite: every adapter (and any test double) must pass it unchanged.
// Each test gets a fresh, empty store from `setup` and hands it back through `cleanup`.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { parseHlc } from '../../hub/src/core/hlc.js';
import type { LogEvent, NewEvent } from '../../hub/src/core/types.js';
import { HubError } from '../../hub/src/errors.js';
import type { EventStore } from '../../hub/src/logstream/event-store.js';
import { catchHubError } from '../helpers/errors.js';
import { eventQueryOf, newArtifact, newEvent } from '../helpers/fixtures.js';

export interface EventStoreFixture {
  store: EventStore;
  cleanup: () => void;
}

/** Appends events one batch at a time and returns them, failing the test if any slot failed. */
function appendAll(store: EventStore, events: readonly NewEvent[]): LogEvent[] {
  return store.append(events).map((result) => {
    if (result instanceof HubError) throw result;
    return result;
  });
}

function appendOne(store: EventStore, overrides: Partial<NewEvent> = {}): LogEvent {
  const [event] = appendAll(store, [newEvent(overrides)]);
  if (!event) throw new Error('append returned no event');
  return event;
}

export function runEventStoreContract(name: string, setup: () => EventStoreFixture): void {
  describe(`EventStore contract: ${name}`, () => {
    let fixture: EventStoreFixture;
    let store: EventStore;

    beforeEach(() => {
      fixture = setup();
      store = fixture.store;
    });

    afterEach(() => {
      fixture.cleanup();
    });

    describe('append', () => {
      it('returns the stored event with seq, origin and clock assigned', () => {
        const input = newEvent({
          type: 'task.request',
          to_agent: 'box-codex',
          correlation_id: 'task_x',
          branch: 'fix/x',
          base_commit: 'abc1234',
          status: 'open',
          body: 'Goal:\nfix x\r\n',
          metadata_json: '{"a":1}',
        });
        const [event] = appendAll(store, [input]);
        expect(event).toMatchObject({
          id: input.id,
          type: 'task.request',
          stream: input.stream,
          room: input.room,
          from_agent: input.from_agent,
          to_agent: 'box-codex',
          correlation_id: 'task_x',
          branch: 'fix/x',
          base_commit: 'abc1234',
          status: 'open',
          artifact_ids: [],
          body: 'Goal:\nfix x\r\n',
          metadata: { a: 1 },
          created_at: input.created_at,
          origin_replica: store.replicaId,
        });
        expect(event?.seq).toBeGreaterThan(0);
        expect(event?.origin_seq).toBe(event?.seq);
        expect(parseHlc(event?.hlc ?? '')).toMatchObject({ replica: store.replicaId });
      });

      it('stores exactly what it returned (getEvent and query agree with append)', () => {
        const [a, b] = appendAll(store, [
          newEvent({ body: 'one' }),
          newEvent({ body: 'two', to_agent: '*' }),
        ]);
        expect(store.getEvent(a?.id ?? '')).toEqual(a);
        expect(store.getEvent(b?.id ?? '')).toEqual(b);
        expect(store.query(eventQueryOf()).events).toEqual([a, b]);
      });

      it('assigns strictly increasing seq across and within batches', () => {
        const first = appendAll(store, [newEvent(), newEvent(), newEvent()]);
        const second = appendAll(store, [newEvent()]);
        const third = appendAll(store, [newEvent(), newEvent()]);
        const seqs = [...first, ...second, ...third].map((e) => e.seq);
        for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] ?? Infinity);
        expect(new Set(seqs).size).toBe(seqs.length);
      });

      it('stamps strictly increasing HLCs in append order', () => {
        const events = [
          ...appendAll(
            store,
            Array.from({ length: 20 }, () => newEvent()),
          ),
          ...appendAll(store, [newEvent()]),
          appendOne(store),
        ];
        for (let i = 1; i < events.length; i++)
          expect((events[i]?.hlc ?? '') > (events[i - 1]?.hlc ?? '')).toBe(true);
        for (const e of events) expect(parseHlc(e.hlc)?.replica).toBe(store.replicaId);
      });

      it('gives each origin_seq once for its own replica', () => {
        const events = appendAll(store, [newEvent(), newEvent(), newEvent()]);
        expect(new Set(events.map((e) => `${e.origin_replica}/${e.origin_seq}`)).size).toBe(3);
      });

      it('returns an empty result for an empty batch', () => {
        expect(store.append([])).toEqual([]);
        expect(store.query(eventQueryOf()).events).toEqual([]);
      });

      it('isolates a failing event: an unknown artifact ref fails only its own slot', () => {
        const good1 = newEvent({ body: 'good 1' });
        const bad = newEvent({ body: 'bad', artifact_ids: ['art_20260131T120000_ffffffffffff'] });
        const good2 = newEvent({ body: 'good 2' });
        const results = store.append([good1, bad, good2]);

        expect(results).toHaveLength(3);
        const [r1, r2, r3] = results;
        expect(r1).not.toBeInstanceOf(HubError);
        expect(r3).not.toBeInstanceOf(HubError);
        expect(r2).toBeInstanceOf(HubError);
        expect((r2 as HubError).code).toBe('artifact.unknown_ref');
        expect((r2 as HubError).field).toBe('artifact_ids');

        expect(store.getEvent(bad.id)).toBeUndefined();
        const stored = store.query(eventQueryOf()).events;
        expect(stored.map((e) => e.body)).toEqual(['good 1', 'good 2']);
        expect((r3 as LogEvent).seq).toBeGreaterThan((r1 as LogEvent).seq);
      });

      it('rejects a duplicate event id in its slot only', () => {
        const original = appendOne(store, { body: 'first' });
        const results = store.append([
          newEvent({ id: original.id, body: 'dupe' }),
          newEvent({ body: 'fine' }),
        ]);
        expect(results[0]).toBeInstanceOf(HubError);
        expect(results[1]).not.toBeInstanceOf(HubError);
        expect(store.getEvent(original.id)?.body).toBe('first');
        // The failed slot takes no seq: the next event follows the original directly.
        expect((results[1] as LogEvent).seq).toBe(original.seq + 1);
        expect(appendOne(store, { body: 'after' }).seq).toBe(original.seq + 2);
      });

      it('links known artifacts in the caller’s order', () => {
        const a = store.putArtifact(newArtifact('a\n'));
        const b = store.putArtifact(newArtifact('b\n'));
        const event = appendOne(store, { type: 'patch.ready', artifact_ids: [b.id, a.id] });
        expect(event.artifact_ids).toEqual([b.id, a.id]);
        expect(store.getEvent(event.id)?.artifact_ids).toEqual([b.id, a.id]);
        expect(store.query(eventQueryOf()).events[0]?.artifact_ids).toEqual([b.id, a.id]);
      });

      it('sees an artifact stored just before the append', () => {
        const art = store.putArtifact(newArtifact('x\n'));
        const [result] = store.append([newEvent({ artifact_ids: [art.id] })]);
        expect(result).not.toBeInstanceOf(HubError);
      });

      it('moves the change token on every local commit', () => {
        const t0 = store.changeToken();
        appendOne(store);
        const t1 = store.changeToken();
        store.putArtifact(newArtifact('c\n'));
        const t2 = store.changeToken();
        expect(t1).not.toBe(t0);
        expect(t2).not.toBe(t1);
        expect(store.changeToken()).toBe(t2);
      });
    });

    describe('query filters', () => {
      it('matches to_agent against the named agent and against * broadcasts', () => {
        const toA = appendOne(store, { to_agent: 'agent-a' });
        appendOne(store, { to_agent: 'agent-b' });
        const broadcast = appendOne(store, { to_agent: '*' });
        appendOne(store, { to_agent: null });
        expect(store.query(eventQueryOf({ to_agent: ['agent-a'] })).events.map((e) => e.id)).toEqual([
          toA.id,
          broadcast.id,
        ]);
        expect(store.query(eventQueryOf({ to_agent: ['*'] })).events.map((e) => e.id)).toEqual([
          broadcast.id,
        ]);
      });

      it('excludes writers with exclude_from_agent, winning over a positive match', () => {
        appendOne(store, { from_agent: 'me', to_agent: '*' });
        const other = appendOne(store, { from_agent: 'other', to_agent: '*' });
        expect(store.query(eventQueryOf({ exclude_from_agent: ['me'] })).events.map((e) => e.id)).toEqual([
          other.id,
        ]);
        expect(store.query(eventQueryOf({ from_agent: ['me'], exclude_from_agent: ['me'] })).events).toEqual(
          [],
        );
        expect(store.query(eventQueryOf({ exclude_from_agent: ['me', 'other'] })).events).toEqual([]);
      });

      it('treats repeated values of one filter as OR and different filters as AND', () => {
        const req = appendOne(store, {
          type: 'task.request',
          stream: 's1',
          room: 'delegation',
          status: 'open',
        });
        const reply = appendOne(store, {
          type: 'task.reply',
          stream: 's2',
          room: 'delegation',
          status: 'blocked',
        });
        const ready = appendOne(store, {
          type: 'patch.ready',
          stream: 's1',
          room: 'patches',
          status: 'ready',
        });
        const ids = (q: Parameters<typeof eventQueryOf>[0]): string[] =>
          store.query(eventQueryOf(q)).events.map((e) => e.id);

        expect(ids({ type: ['task.request', 'patch.ready'] })).toEqual([req.id, ready.id]);
        expect(ids({ type: ['task.request', 'patch.ready'], stream: ['s1'], room: ['patches'] })).toEqual([
          ready.id,
        ]);
        expect(ids({ status: ['open', 'blocked'] })).toEqual([req.id, reply.id]);
        expect(ids({ stream: ['s1', 's2'] })).toEqual([req.id, reply.id, ready.id]);
        expect(ids({ room: ['delegation'], status: ['ready'] })).toEqual([]);
      });

      it('filters by from_agent and correlation_id', () => {
        const a = appendOne(store, { from_agent: 'x', correlation_id: 'task_1' });
        const b = appendOne(store, { from_agent: 'y', correlation_id: 'task_2' });
        appendOne(store, { from_agent: 'z', correlation_id: null });
        expect(store.query(eventQueryOf({ from_agent: ['x', 'y'] })).events.map((e) => e.id)).toEqual([
          a.id,
          b.id,
        ]);
        expect(store.query(eventQueryOf({ correlation_id: ['task_2'] })).events.map((e) => e.id)).toEqual([
          b.id,
        ]);
        expect(store.query(eventQueryOf({ correlation_id: ['task_1', 'task_2'] })).count).toBe(2);
      });

      it('returns events strictly after since_event_id', () => {
        const [a, b, c] = appendAll(store, [newEvent(), newEvent(), newEvent()]);
        expect(store.query(eventQueryOf({ since_event_id: a?.id ?? null })).events.map((e) => e.id)).toEqual([
          b?.id,
          c?.id,
        ]);
        expect(store.query(eventQueryOf({ since_event_id: c?.id ?? null })).events).toEqual([]);
      });

      it('returns events strictly before before_event_id', () => {
        const [a, b, c] = appendAll(store, [newEvent(), newEvent(), newEvent()]);
        expect(store.query(eventQueryOf({ before_event_id: c?.id ?? null })).events.map((e) => e.id)).toEqual(
          [a?.id, b?.id],
        );
        expect(
          store
            .query(eventQueryOf({ since_event_id: a?.id ?? null, before_event_id: c?.id ?? null }))
            .events.map((e) => e.id),
        ).toEqual([b?.id]);
      });

      it('fails an unknown cursor with log.unknown_cursor naming the field', () => {
        appendOne(store);
        const since = catchHubError(() =>
          store.query(eventQueryOf({ since_event_id: 'evt_20990101T000000_000000000000' })),
        );
        expect(since.code).toBe('log.unknown_cursor');
        expect(since.field).toBe('since_event_id');
        const before = catchHubError(() =>
          store.query(eventQueryOf({ before_event_id: 'evt_20990101T000000_000000000000' })),
        );
        expect(before.code).toBe('log.unknown_cursor');
        expect(before.field).toBe('before_event_id');
      });

      it('compares since_created_at inclusively', () => {
        appendOne(store, { created_at: '2026-01-01T00:00:00Z' });
        const onTheBound = appendOne(store, { created_at: '2026-01-02T00:00:00Z' });
        const after = appendOne(store, { created_at: '2026-01-03T10:00:00Z' });
        expect(
          store.query(eventQueryOf({ since_created_at: '2026-01-02T00:00:00Z' })).events.map((e) => e.id),
        ).toEqual([onTheBound.id, after.id]);
        expect(store.query(eventQueryOf({ since_created_at: '2026-01-03T10:00:01Z' })).events).toEqual([]);
      });

      it('orders newest first with order desc', () => {
        const [a, b, c] = appendAll(store, [newEvent(), newEvent(), newEvent()]);
        expect(store.query(eventQueryOf({ order: 'desc' })).events.map((e) => e.id)).toEqual([
          c?.id,
          b?.id,
          a?.id,
        ]);
        const page = store.query(eventQueryOf({ order: 'desc', limit: 2 }));
        expect(page.events.map((e) => e.id)).toEqual([c?.id, b?.id]);
        expect(page.has_more).toBe(true);
      });
    });

    describe('limit, has_more and cursor', () => {
      it('returns an empty page with a null cursor on an empty log', () => {
        expect(store.query(eventQueryOf())).toEqual({ events: [], count: 0, has_more: false, cursor: null });
      });

      it('pages with limit and has_more, the cursor resuming exactly after the page', () => {
        const all = appendAll(
          store,
          Array.from({ length: 5 }, (_, i) => newEvent({ body: `e${i}` })),
        );
        const first = store.query(eventQueryOf({ limit: 2 }));
        expect(first.events.map((e) => e.body)).toEqual(['e0', 'e1']);
        expect(first.count).toBe(2);
        expect(first.has_more).toBe(true);
        expect(first.cursor).toBe(all[1]?.id);

        const second = store.query(eventQueryOf({ limit: 2, since_event_id: first.cursor }));
        expect(second.events.map((e) => e.body)).toEqual(['e2', 'e3']);
        expect(second.has_more).toBe(true);

        const third = store.query(eventQueryOf({ limit: 2, since_event_id: second.cursor }));
        expect(third.events.map((e) => e.body)).toEqual(['e4']);
        expect(third.has_more).toBe(false);
        expect(third.cursor).toBe(all[4]?.id);
      });

      it('is not has_more when the page is exactly full', () => {
        appendAll(store, [newEvent(), newEvent()]);
        expect(store.query(eventQueryOf({ limit: 2 })).has_more).toBe(false);
      });

      it('puts the cursor at the tip when nothing more matched, even if the tip did not match', () => {
        const mine = appendOne(store, { to_agent: 'agent-a' });
        appendOne(store, { to_agent: 'agent-b' });
        const tip = appendOne(store, { to_agent: 'agent-b' });
        const page = store.query(eventQueryOf({ to_agent: ['agent-a'] }));
        expect(page.events.map((e) => e.id)).toEqual([mine.id]);
        expect(page.cursor).toBe(tip.id);
        // Resuming from the cursor skips the examined non-matching events.
        const later = appendOne(store, { to_agent: 'agent-a' });
        expect(
          store.query(eventQueryOf({ to_agent: ['agent-a'], since_event_id: page.cursor })).events,
        ).toEqual([later]);
      });

      it('keeps the cursor at the tip when a filtered read matches nothing', () => {
        appendOne(store, { type: 'status' });
        const tip = appendOne(store, { type: 'status' });
        const page = store.query(eventQueryOf({ type: ['task.request'] }));
        expect(page).toEqual({ events: [], count: 0, has_more: false, cursor: tip.id });
        expect(store.query(eventQueryOf({ since_event_id: tip.id })).cursor).toBe(tip.id);
      });

      it('has the cursor at the last returned event when a filtered page is full', () => {
        const a = appendOne(store, { to_agent: 'x' });
        appendOne(store, { to_agent: 'y' });
        const b = appendOne(store, { to_agent: 'x' });
        appendOne(store, { to_agent: 'x' });
        const page = store.query(eventQueryOf({ to_agent: ['x'], limit: 2 }));
        expect(page.events.map((e) => e.id)).toEqual([a.id, b.id]);
        expect(page.has_more).toBe(true);
        expect(page.cursor).toBe(b.id);
      });

      it('has no resume cursor for descending reads', () => {
        appendAll(store, [newEvent(), newEvent()]);
        expect(store.query(eventQueryOf({ order: 'desc' })).cursor).toBeNull();
      });
    });

    describe('preview', () => {
      it('truncates long bodies to 200 code points and says so', () => {
        const body = '😀'.repeat(150) + 'é'.repeat(100);
        const event = appendOne(store, { body });
        const [preview] = store.query(eventQueryOf({ preview: true })).events;
        expect(preview?.id).toBe(event.id);
        expect([...(preview?.body ?? '')]).toHaveLength(200);
        expect(preview?.body).toBe('😀'.repeat(150) + 'é'.repeat(50));
        expect(preview?.body_truncated).toBe(true);
        expect(preview?.body_length).toBe(250);
      });

      it('cuts on a code-point boundary, never inside a surrogate pair', () => {
        appendOne(store, { body: 'a' + '😀'.repeat(300) });
        const body = store.query(eventQueryOf({ preview: true })).events[0]?.body ?? '';
        expect(body).toBe('a' + '😀'.repeat(199));
        expect(/[\uD800-\uDBFF]$/.test(body)).toBe(false);
      });

      it('keeps short bodies whole and still reports their length', () => {
        appendOne(store, { body: 'x'.repeat(200) });
        appendOne(store, { body: '' });
        const [exact, empty] = store.query(eventQueryOf({ preview: true })).events;
        expect(exact).toMatchObject({ body: 'x'.repeat(200), body_truncated: false, body_length: 200 });
        expect(empty).toMatchObject({ body: '', body_truncated: false, body_length: 0 });
      });

      it('returns full bodies without preview fields otherwise', () => {
        const body = 'y'.repeat(1000);
        appendOne(store, { body });
        const [full] = store.query(eventQueryOf()).events;
        expect(full?.body).toBe(body);
        expect(full).not.toHaveProperty('body_truncated');
        expect(full).not.toHaveProperty('body_length');
      });
    });

    describe('artifacts', () => {
      const contents: Array<[string, string]> = [
        ['LF patch', 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n'],
        ['CRLF', 'line one\r\nline two\r\n'],
        ['no final newline', 'diff --git a/x b/x\n-a\n+b'],
        ['lone CR and mixed endings', 'a\rb\r\nc\n'],
        ['multi-byte UTF-8', 'héllo wörld — 日本語 😀 e\u0301\n'],
        ['whitespace only', ' \t\n\n'],
      ];

      it.each(contents)('stores %s byte-exactly', (_label, content) => {
        const input = newArtifact(content, { kind: 'patch', metadata_json: '{"k":"v"}' });
        const meta = store.putArtifact(input);
        expect(meta).toEqual({
          id: input.id,
          kind: 'patch',
          created_by: input.created_by,
          sha256: input.sha256,
          size_bytes: Buffer.byteLength(content, 'utf8'),
          created_at: input.created_at,
          origin_replica: store.replicaId,
          metadata: { k: 'v' },
        });
        const got = store.getArtifact(input.id);
        expect(got?.content).toBe(content);
        expect(Buffer.from(got?.content ?? '', 'utf8').equals(Buffer.from(content, 'utf8'))).toBe(true);
        expect(got).toEqual({ ...meta, content });
      });

      it('returns undefined for an unknown artifact', () => {
        expect(store.getArtifact('art_20990101T000000_000000000000')).toBeUndefined();
      });

      it('refuses a second artifact with the same id and keeps the first', () => {
        const first = newArtifact('one\n');
        store.putArtifact(first);
        expect(() => store.putArtifact({ ...newArtifact('two\n'), id: first.id })).toThrow(HubError);
        expect(store.getArtifact(first.id)?.content).toBe('one\n');
      });
    });

    describe('getEvent', () => {
      it('returns one event by id, or undefined', () => {
        const event = appendOne(store, { body: 'find me', metadata_json: '{"n":[1,2]}' });
        expect(store.getEvent(event.id)).toEqual(event);
        expect(store.getEvent(event.id)?.metadata).toEqual({ n: [1, 2] });
        expect(store.getEvent('evt_20990101T000000_000000000000')).toBeUndefined();
      });
    });

    it('keeps one replica id and stamps it on everything it stores', () => {
      const before = store.replicaId;
      expect(before).toMatch(/\S/);
      const event = appendOne(store);
      const artifact = store.putArtifact(newArtifact('r\n'));
      expect(store.replicaId).toBe(before);
      expect(event.origin_replica).toBe(before);
      expect(artifact.origin_replica).toBe(before);
    });
  });
}
