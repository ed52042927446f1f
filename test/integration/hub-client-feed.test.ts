// The hub's HTTP client and live feed (used by the dashboard and the tray) against a real hub:
// tool results and tool errors by code, 401 and unreachable hubs, the feed resuming exactly after
// its cursor across a hub restart (Last-Event-ID), and its long-poll fallback while streams are full.

import { afterEach, describe, expect, it } from 'vitest';

import { createEventFeed, type FeedMode } from '../../hub/src/client/event-feed.js';
import { createHubClient, HubClientError } from '../../hub/src/client/hub-client.js';
import type { LogEvent } from '../../hub/src/core/types.js';
import type { Hub } from '../../hub/src/server.js';
import { makeHubDirs, startTestHub, waitUntil, type HubDirs } from '../helpers/hub.js';

const TOKEN = 'c3'.repeat(32);
let cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function hubWith(
  env: Record<string, string> = {},
  token?: string,
): Promise<{ hub: Hub; dirs: HubDirs }> {
  const dirs = makeHubDirs('palace-client-');
  const hub = await startTestHub(dirs, { env, ...(token ? { token } : {}) });
  cleanups.push(() => dirs.cleanup());
  cleanups.push(() => hub.close());
  return { hub, dirs };
}

const status = (hub: Hub, body: string): Promise<LogEvent> =>
  hub.services.logstream.append({
    type: 'status',
    stream: 'project/x',
    room: 'status',
    from_agent: 'box-claude',
    to_agent: '*',
    body,
  });

describe('createHubClient', () => {
  it('calls tools, maps tool errors and HTTP errors to stable codes', async () => {
    const { hub } = await hubWith({}, TOKEN);
    const client = createHubClient({ baseUrl: `${hub.url}/`, token: TOKEN });
    const e = await status(hub, 'hello');
    const page = await client.call('palace_event_list', { limit: 5 });
    expect(page.events.map((x) => x.id)).toEqual([e.id]);
    expect(await client.listTools()).toContain('palace_event_wait');
    expect(await client.getJson<{ ok: boolean }>('/statusz')).toMatchObject({ ok: true });

    const bad = await client
      .call('palace_event_list', { since_event_id: 'evt_20260101T000000_000000000000' })
      .catch((err: unknown) => err);
    expect(bad).toBeInstanceOf(HubClientError);
    expect((bad as HubClientError).code).toBe('log.unknown_cursor');

    const anonymous = createHubClient({ baseUrl: hub.url });
    const refused = await anonymous.getJson('/statusz').catch((err: unknown) => err);
    expect(refused).toMatchObject({ code: 'auth.unauthorized', status: 401 });
    expect(await anonymous.health()).toBe(true);

    await hub.close();
    const gone = await client.call('palace_event_list', {}).catch((err: unknown) => err);
    expect(gone).toMatchObject({ code: 'hub.unreachable', status: null });
    expect(await client.health()).toBe(false);
  });
});

describe('createEventFeed', () => {
  it('streams, and after the hub restarts resumes exactly after its cursor', async () => {
    const dirs = makeHubDirs('palace-feed-');
    cleanups.push(() => dirs.cleanup());
    let hub = await startTestHub(dirs);
    const port = hub.port;
    cleanups.push(() => hub.close());
    const seen: string[] = [];
    const modes: FeedMode[] = [];
    const first = await status(hub, 'before the feed');
    const feed = createEventFeed({
      client: createHubClient({ baseUrl: hub.url }),
      cursor: first.id,
      onPage: (p) => seen.push(...p.events.map((e) => e.id)),
      onMode: (m) => modes.push(m),
      retryMs: { initial: 50, max: 200 },
    });
    cleanups.push(() => feed.stop());
    feed.start();
    const e2 = await status(hub, 'two');
    await waitUntil(() => seen.includes(e2.id), 'the live event');
    expect(seen).toEqual([e2.id]);
    expect(feed.mode).toBe('stream');

    await hub.close();
    await waitUntil(() => modes.includes('down'), 'the feed to notice');
    // Appended while the feed was away (straight into the log file), then the hub comes back.
    hub = await startTestHub(dirs, { port });
    const e3 = await status(hub, 'three');
    const e4 = await status(hub, 'four');
    feed.reconnectNow();
    await waitUntil(() => seen.includes(e4.id), 'the events missed while down', 20_000);
    expect(seen).toEqual([e2.id, e3.id, e4.id]);
    expect(feed.cursor).toBe(e4.id);
  });

  it('long-polls with palace_event_wait while every stream slot is taken', async () => {
    const { hub } = await hubWith({ PALACE_SSE_MAX_CLIENTS: '0' });
    const seen: string[] = [];
    const feed = createEventFeed({
      client: createHubClient({ baseUrl: hub.url }),
      cursor: hub.services.logstream.tipId(),
      onPage: (p) => seen.push(...p.events.map((e) => e.id)),
      pollTimeoutMs: 2_000,
    });
    cleanups.push(() => feed.stop());
    feed.start();
    await waitUntil(() => feed.mode === 'poll', 'the poll mode');
    const e = await status(hub, 'by long-poll');
    await waitUntil(() => seen.includes(e.id), 'the polled event');
    expect(seen).toEqual([e.id]);
  });
});
