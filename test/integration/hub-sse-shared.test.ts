// Stream clients with the same filters share one read of the log per commit: 8 readers of
// /logstream/stream?to_agent=bob-cli (real hub on port 0, fetch streaming) each get every event
// once, in order, while the hub reads the log once per append for all of them (counted at
// Logstream.list); a reader with other filters, or behind the others, still reads its own page.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { EventPage, LogEvent } from '../../hub/src/core/types.js';
import type { Logstream } from '../../hub/src/logstream/logstream.js';
import type { Hub } from '../../hub/src/server.js';
import { makeHubDirs, openStream, startTestHub, type HubDirs, type SseFrame, type SseReader } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub;
const readers: SseReader[] = [];
let reads = 0;

beforeAll(async () => {
  dirs = makeHubDirs('palace-sse-shared-');
  hub = await startTestHub(dirs, { env: { PALACE_SSE_MAX_CLIENTS: '16' } });
  const log: Logstream = hub.services.logstream;
  const list = log.list.bind(log);
  log.list = (q) => {
    reads++;
    return list(q);
  };
});
afterAll(async () => {
  await Promise.all(readers.map((r) => r.close()));
  await hub.close();
  dirs.cleanup();
});

async function open(query: Record<string, string>): Promise<SseReader> {
  const { status, reader } = await openStream(hub.url, { query });
  expect(status).toBe(200);
  const r = reader as SseReader;
  readers.push(r);
  await r.connected();
  return r;
}

const ids = (frames: SseFrame[]): string[] =>
  frames.filter((f) => f.data !== undefined).flatMap((f) => (JSON.parse(f.data as string) as EventPage).events.map((e) => e.id));

const send = (to: string, body: string): Promise<LogEvent> =>
  hub.services.logstream.append({ type: 'task.request', stream: 'p', room: 'r', from_agent: 'alice-cli', to_agent: to, body });

describe('stream clients with the same filters', () => {
  it('get every event once, in order, from one read of the log per append', async () => {
    const bobs = await Promise.all(Array.from({ length: 8 }, () => open({ to_agent: 'bob-cli' })));
    const carol = await open({ to_agent: 'carol-cli' });
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) {
      reads = 0;
      const e = await send('bob-cli', `job ${i}`);
      sent.push(e.id);
      await Promise.all(bobs.map((r) => r.until((f) => ids(f).includes(e.id))));
      // One read for the 8 bob readers, one for carol's (other filters): not 9.
      expect(reads).toBe(2);
    }
    for (const r of bobs) expect(ids(await r.until((f) => ids(f).length >= 5))).toEqual(sent);
    const forCarol = await send('carol-cli', 'hello');
    expect(ids(await carol.until((f) => ids(f).includes(forCarol.id)))).toEqual([forCarol.id]);
  });

  it('a reader that joins behind the others (its own cursor) replays from it, then gets what they get', async () => {
    const zero = await send('dave-cli', 'zero');
    const first = await send('dave-cli', 'one');
    const ahead = await open({ to_agent: 'dave-cli' });
    const behind = await open({ to_agent: 'dave-cli', since_event_id: zero.id });
    expect(ids(await behind.until((f) => ids(f).includes(first.id)))).toEqual([first.id]);
    const second = await send('dave-cli', 'two');
    expect(ids(await ahead.until((f) => ids(f).includes(second.id)))).toEqual([second.id]);
    expect(ids(await behind.until((f) => ids(f).includes(second.id)))).toEqual([first.id, second.id]);
  });
});
