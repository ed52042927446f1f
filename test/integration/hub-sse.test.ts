// GET /logstream/stream over real HTTP, read with fetch streaming: tail-only without a cursor,
// replay-then-tail with since_event_id or Last-Event-ID, the list envelope as frame data, filters,
// 400 before streaming for bad input, and the PALACE_SSE_MAX_CLIENTS bound (503 + Retry-After).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { EventPage, LogEvent } from '../../hub/src/core/types.js';
import type { AppendInput } from '../../hub/src/logstream/logstream.js';
import type { Hub } from '../../hub/src/server.js';
import {
  makeHubDirs,
  openStream,
  startTestHub,
  waitUntil,
  type HubDirs,
  type SseFrame,
  type SseReader,
} from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub;
let readers: SseReader[];

function append(overrides: AppendInput = {}): Promise<LogEvent> {
  return hub.services.logstream.append({
    type: 'status',
    stream: 'project/demo',
    room: 'status',
    from_agent: 'box-claude',
    to_agent: '*',
    ...overrides,
  });
}

async function open(
  query: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<SseReader> {
  const { status, reader, response } = await openStream(hub.url, { query, headers });
  expect(status, await (status === 200 ? Promise.resolve('') : response.text())).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  expect(response.headers.get('cache-control')).toMatch(/no-cache/);
  readers.push(reader as SseReader);
  await (reader as SseReader).connected();
  return reader as SseReader;
}

function pages(frames: SseFrame[]): EventPage[] {
  return frames.filter((f) => f.data !== undefined).map((f) => JSON.parse(f.data as string) as EventPage);
}

function ids(frames: SseFrame[]): string[] {
  return pages(frames).flatMap((p) => p.events.map((e) => e.id));
}

const hasIds =
  (...wanted: string[]) =>
  (frames: SseFrame[]): boolean =>
    wanted.every((id) => ids(frames).includes(id));

beforeEach(async () => {
  dirs = makeHubDirs();
  hub = await startTestHub(dirs, { env: { PALACE_SSE_MAX_CLIENTS: '2' } });
  readers = [];
});

afterEach(async () => {
  await Promise.all(readers.map((r) => r.close()));
  await hub.close();
  dirs.cleanup();
});

describe('GET /logstream/stream', () => {
  it('without a cursor sends only events appended after connecting', async () => {
    const before = await append({ body: 'before' });
    const reader = await open();
    const after1 = await append({ body: 'after 1' });
    const after2 = await append({ body: 'after 2' });
    const frames = await reader.until(hasIds(after1.id, after2.id));
    expect(ids(frames)).toEqual([after1.id, after2.id]);
    expect(ids(frames)).not.toContain(before.id);
  });

  it('sends the palace_event_list envelope as data and the last event id as id', async () => {
    const reader = await open();
    const event = await append({ body: 'hello stream' });
    const frames = await reader.until(hasIds(event.id));
    const frame = frames.find((f) => f.data !== undefined) as SseFrame;
    expect(frame.id).toBe(event.id);
    const page = JSON.parse(frame.data as string) as EventPage;
    expect(Object.keys(page).sort()).toEqual(['count', 'cursor', 'events', 'has_more']);
    expect(page).toMatchObject({ count: 1, has_more: false, cursor: event.id });
    expect(page.events[0]).toEqual(event);
    // Exactly what palace_event_list returns for the same window (the log was empty at connect).
    expect(page).toEqual(hub.services.logstream.list({}));
  });

  it('replays after since_event_id, then tails live events', async () => {
    const e1 = await append({ body: 'one' });
    const e2 = await append({ body: 'two' });
    const e3 = await append({ body: 'three' });
    const reader = await open({ since_event_id: e1.id });
    let frames = await reader.until(hasIds(e2.id, e3.id));
    expect(ids(frames)).toEqual([e2.id, e3.id]);
    const replay = frames.find((f) => f.data !== undefined) as SseFrame;
    expect(replay.id).toBe(e3.id); // the last event of the replay frame
    expect(JSON.parse(replay.data as string)).toMatchObject({ count: 2, cursor: e3.id });

    const e4 = await append({ body: 'four' });
    frames = await reader.until(hasIds(e4.id));
    expect(ids(frames)).toEqual([e2.id, e3.id, e4.id]);
    expect(frames.filter((f) => f.data !== undefined).at(-1)?.id).toBe(e4.id);
  });

  it('resumes from the Last-Event-ID header', async () => {
    const e1 = await append({ body: 'one' });
    const e2 = await append({ body: 'two' });
    const reader = await open({}, { 'Last-Event-ID': e1.id });
    let frames = await reader.until(hasIds(e2.id));
    expect(ids(frames)).toEqual([e2.id]);
    const e3 = await append({ body: 'three' });
    frames = await reader.until(hasIds(e3.id));
    expect(ids(frames)).toEqual([e2.id, e3.id]);
  });

  it('applies filters: to_agent matches the agent and broadcasts only', async () => {
    const start = await append({ body: 'cursor' });
    const reader = await open({ to_agent: 'desktop-codex', since_event_id: start.id });
    const forOther = await append({ to_agent: 'laptop-claude', body: 'not for codex' });
    const forCodex = await append({
      type: 'task.request',
      to_agent: 'desktop-codex',
      correlation_id: 'task_x',
      status: 'open',
      room: 'delegation',
    });
    const broadcast = await append({ to_agent: '*', body: 'everyone' });
    const frames = await reader.until(hasIds(forCodex.id, broadcast.id));
    expect(ids(frames)).toEqual([forCodex.id, broadcast.id]);
    expect(ids(frames)).not.toContain(forOther.id);
    expect(
      pages(frames)
        .flatMap((p) => p.events)
        .every((e) => e.to_agent === 'desktop-codex' || e.to_agent === '*'),
    ).toBe(true);
  });

  it('takes every palace_event_list filter: preview truncates bodies like the list does', async () => {
    const start = await append({ body: 'cursor' });
    const long = 'x'.repeat(1000);
    const reader = await open({ since_event_id: start.id, preview: 'true' });
    const event = await append({ body: long });
    const frames = await reader.until(hasIds(event.id));
    const streamed = pages(frames).flatMap((p) => p.events)[0] as LogEvent;
    expect(streamed).toMatchObject({ id: event.id, body_truncated: true, body_length: 1000 });
    expect(streamed.body.length).toBeLessThan(long.length);
    // The same event as palace_event_list with preview shows it.
    expect(streamed).toEqual(hub.services.logstream.list({ since_event_id: start.id, preview: true }).events[0]);
  });

  it('takes every palace_event_list filter: since_created_at is a time window on replay and tail', async () => {
    const start = await append({ body: 'cursor' });
    const early = await append({ body: 'early' });
    // The window starts at the next whole second (created_at has seconds precision).
    await waitUntil(() => new Date().toISOString().slice(0, 19) + 'Z' > early.created_at || undefined, 'the next second', 3000);
    const late = await append({ body: 'late' });
    expect(late.created_at > early.created_at).toBe(true);
    const reader = await open({ since_event_id: start.id, since_created_at: late.created_at });
    const frames = await reader.until(hasIds(late.id));
    expect(ids(frames)).toEqual([late.id]);
    const live = await append({ body: 'live' });
    expect(ids(await reader.until(hasIds(live.id)))).toEqual([late.id, live.id]);

    const bad = await openStream(hub.url, { query: { since_created_at: 'yesterday' } });
    expect(bad.status).toBe(400);
    expect(await bad.response.json()).toMatchObject({ error: { code: 'input.invalid', field: 'since_created_at' } });
    const badPreview = await openStream(hub.url, { query: { preview: 'maybe' } });
    expect(badPreview.status).toBe(400);
    expect(await badPreview.response.json()).toMatchObject({ error: { code: 'input.invalid', field: 'preview' } });
  });

  it('answers 400 JSON before streaming for a bad filter or an unknown cursor', async () => {
    const badStatus = await openStream(hub.url, { query: { status: 'done' } });
    expect(badStatus.status).toBe(400);
    expect(badStatus.response.headers.get('content-type')).toMatch(/application\/json/);
    expect(await badStatus.response.json()).toMatchObject({
      error: { code: 'input.invalid', field: 'status' },
    });

    const badAgent = await openStream(hub.url, { query: { to_agent: 'bad\u0001agent' } });
    expect(badAgent.status).toBe(400);
    expect(await badAgent.response.json()).toMatchObject({
      error: { code: 'input.invalid', field: 'to_agent' },
    });

    const unknown = await openStream(hub.url, {
      query: { since_event_id: 'evt_20260101T000000_0123456789ab' },
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.response.json()).toMatchObject({ error: { code: 'log.unknown_cursor' } });

    const unknownHeader = await openStream(hub.url, {
      headers: { 'Last-Event-ID': 'evt_20260101T000000_0123456789ab' },
    });
    expect(unknownHeader.status).toBe(400);
    await unknownHeader.response.body?.cancel();
  });

  it('sends a heartbeat comment on an idle stream (about every 15 s)', { timeout: 40_000 }, async () => {
    const reader = await open();
    const frames = await reader.until((all) => all.some((f) => f.comments.includes('ping')), 30_000);
    expect(frames.filter((f) => f.data !== undefined)).toEqual([]);
  });

  it('refuses a third client with 503 + Retry-After at PALACE_SSE_MAX_CLIENTS=2 and frees the slot on close', async () => {
    const first = await open();
    await open();
    const third = await openStream(hub.url);
    expect(third.status).toBe(503);
    expect(third.response.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await third.response.json()).toMatchObject({ error: { code: 'http.busy' } });

    await first.close();
    readers = readers.filter((r) => r !== first);
    const replacement = await waitUntil(
      async () => {
        const attempt = await openStream(hub.url);
        if (attempt.status === 200) return attempt.reader;
        await attempt.response.body?.cancel();
        return undefined;
      },
      'a stream slot to be freed',
      10_000,
    );
    readers.push(replacement as SseReader);
    await (replacement as SseReader).connected();
    const event = await append({ body: 'after the slot was freed' });
    const frames = await (replacement as SseReader).until(hasIds(event.id));
    expect(ids(frames)).toEqual([event.id]);
  });
});
