// SSE under clients that stop reading (issue 17, item 6): the hub respects write() backpressure and
// drops a client whose socket takes nothing for PALACE_SSE_STALL_MS while a frame waits, with a last
// `event: error` frame saying why; the client resumes with Last-Event-ID and misses nothing. Real hub
// on port 0, real sockets (node:http clients that pause their response), the bound scaled down.

import { request as httpRequest, type IncomingMessage } from 'node:http';

import { afterEach, describe, expect, it } from 'vitest';

import type { EventPage } from '../../hub/src/core/types.js';
import type { Hub } from '../../hub/src/server.js';
import {
  makeHubDirs,
  openStream,
  rawRequest,
  startTestHub,
  waitUntil,
  type HubDirs,
  type SseFrame,
} from '../helpers/hub.js';
import { createSseParser } from '../../hub/src/core/sse-frames.js';

const EVENTS = 800;
const BODY = 'x'.repeat(8 * 1024);

let dirs: HubDirs | undefined;
let hub: Hub | undefined;
const responses: IncomingMessage[] = [];

afterEach(async () => {
  for (const r of responses.splice(0)) r.destroy();
  await hub?.close();
  dirs?.cleanup();
  hub = undefined;
  dirs = undefined;
});

async function start(stallMs: number): Promise<Hub> {
  dirs = makeHubDirs();
  hub = await startTestHub(dirs, {
    env: { PALACE_SSE_STALL_MS: String(stallMs), PALACE_SSE_MAX_CLIENTS: '2' },
  });
  return hub;
}

async function appendMany(h: Hub, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push(
      (
        await h.services.logstream.append({
          type: 'status',
          stream: 'project/bp',
          room: 'r',
          from_agent: 'writer',
          to_agent: '*',
          body: `${i} ${BODY}`,
        })
      ).id,
    );
  return ids;
}

async function sseClients(h: Hub): Promise<number> {
  const status = JSON.parse((await rawRequest(h.url, { path: '/statusz' })).body) as {
    logstream: { sse_clients: number };
  };
  return status.logstream.sse_clients;
}

/** Opens the stream with node:http and pauses the response at once: the client reads nothing. */
function openStalled(h: Hub, query: string, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  const url = new URL(`${h.url}/logstream/stream${query}`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: Number(url.port),
        path: url.pathname + url.search,
        headers: { Accept: 'text/event-stream', ...headers },
      },
      (res) => {
        res.pause();
        responses.push(res);
        resolve(res);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Resumes a paused response and reads it to its end. */
function readToEnd(res: IncomingMessage): Promise<SseFrame[]> {
  const parser = createSseParser();
  const frames: SseFrame[] = [];
  res.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    res.on('data', (chunk: string) => frames.push(...parser.push(chunk)));
    res.on('end', () => resolve(frames));
    res.on('error', reject);
    res.resume();
  });
}

function eventIds(frames: SseFrame[]): string[] {
  return frames
    .filter((f) => f.data !== undefined && f.event === undefined)
    .flatMap((f) => (JSON.parse(f.data as string) as EventPage).events.map((e) => e.id));
}

/** Checks the dropped stream's last frame and resumes from it; returns every id seen across both. */
async function resumeAfterDrop(h: Hub, frames: SseFrame[], all: string[]): Promise<string[]> {
  const last = frames.at(-1);
  expect(last?.event).toBe('error');
  const error = (JSON.parse(last?.data as string) as { error: { code: string; message: string } }).error;
  expect(error.code).toBe('http.busy');
  expect(error.message).toContain('PALACE_SSE_STALL_MS');
  const got = eventIds(frames);
  expect(got).toEqual(all.slice(0, got.length)); // an in-order prefix, nothing skipped
  expect(got.length).toBeLessThan(all.length); // it really was behind
  expect(last?.id).toBe(got.at(-1));

  const { status, reader } = await openStream(h.url, { headers: { 'Last-Event-ID': last?.id as string } });
  expect(status).toBe(200);
  try {
    const rest = await reader!.until((fs) => eventIds(fs).at(-1) === all.at(-1), 20_000);
    return [...got, ...eventIds(rest)];
  } finally {
    await reader!.close();
  }
}

describe('SSE clients that stop reading', () => {
  it('a replaying client that never reads is dropped with a last error frame, and resumes', async () => {
    const h = await start(300);
    const all = await appendMany(h, EVENTS);
    const res = await openStalled(h, `?since_event_id=${all[0]}`);
    await waitUntil(async () => (await sseClients(h)) === 1, 'the stream to be counted', 10_000);
    await waitUntil(async () => (await sseClients(h)) === 0, 'the stalled client to be dropped', 10_000);
    const frames = await readToEnd(res);
    const ids = await resumeAfterDrop(h, frames, all.slice(1));
    expect(ids).toEqual(all.slice(1));
  });

  it('a live-tail client that stops reading is dropped, not fed every new event', async () => {
    const h = await start(300);
    const res = await openStalled(h, '');
    await waitUntil(async () => (await sseClients(h)) === 1, 'the stream to be counted', 10_000);
    const all = await appendMany(h, EVENTS);
    await waitUntil(async () => (await sseClients(h)) === 0, 'the stalled tail client to be dropped', 10_000);
    const frames = await readToEnd(res);
    expect(await resumeAfterDrop(h, frames, all)).toEqual(all);
  });

  it('a client that keeps reading gets a long replay in full and is not dropped', async () => {
    const h = await start(5_000);
    const all = await appendMany(h, EVENTS);
    const { reader } = await openStream(h.url, { query: { since_event_id: all[0] as string } });
    try {
      const frames = await reader!.until((fs) => eventIds(fs).at(-1) === all.at(-1), 20_000);
      expect(eventIds(frames)).toEqual(all.slice(1));
      expect(frames.some((f) => f.event === 'error')).toBe(false);
      expect(await sseClients(h)).toBe(1);
    } finally {
      await reader!.close();
    }
  });
});
