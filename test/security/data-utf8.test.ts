// Invalid UTF-8 over HTTP is refused, never replaced: a JSON body carrying the bytes ff fe c3 28
// inside a string gets a clear error on /mcp, PATCH /memory/{id} and /sync/round, and nothing is
// stored (the CLI already refuses the same bytes with input.invalid).

import { afterEach, describe, expect, it } from 'vitest';

import { makeHubDirs, rawRequest, startTestHub, type HubDirs } from '../helpers/hub.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const BAD = Buffer.from([0xff, 0xfe, 0xc3, 0x28]);

/** A JSON text with the invalid bytes spliced into the value of `"body"` (or another string). */
function withBadBytes(json: string, marker = 'BADBYTES'): Buffer {
  const at = json.indexOf(marker);
  if (at < 0) throw new Error('marker missing');
  return Buffer.concat([Buffer.from(json.slice(0, at), 'utf8'), BAD, Buffer.from(json.slice(at + marker.length), 'utf8')]);
}

function dirsFor(prefix: string): HubDirs {
  const dirs = makeHubDirs(prefix);
  cleanups.push(() => dirs.cleanup());
  return dirs;
}

describe('invalid UTF-8 in an HTTP body', () => {
  it('is refused on /mcp with a parse error naming UTF-8, and no event is stored', async () => {
    const dirs = dirsFor('palace-utf8-mcp-');
    const hub = await startTestHub(dirs);
    cleanups.push(() => hub.close());
    const json = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name: 'palace_event_append',
        arguments: { type: 'status', stream: 'project/utf8', room: 'r', from_agent: 'tester', body: 'x BADBYTES y' },
      },
    });
    const res = await rawRequest(hub.url, {
      method: 'POST',
      path: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: withBadBytes(json),
    });
    expect(res.status).toBe(400);
    const answer = JSON.parse(res.body) as { error: { code: number; message: string; data?: { code?: string } } };
    expect(answer.error.code).toBe(-32700);
    expect(answer.error.message).toMatch(/UTF-8/);
    expect(answer.error.data?.code).toBe('input.invalid');
    expect(hub.services.logstream.store.countEvents()).toBe(0);

    // The same call with valid text is stored: the refusal was about the bytes, nothing else.
    const good = await rawRequest(hub.url, {
      method: 'POST',
      path: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: Buffer.from(json.replace('BADBYTES', 'ok'), 'utf8'),
    });
    expect(good.status).toBe(200);
    expect(hub.services.logstream.store.countEvents()).toBe(1);
  });

  it('is refused with input.invalid on PATCH /memory/{id} and POST /sync/round', async () => {
    const dirs = dirsFor('palace-utf8-routes-');
    const hub = await startTestHub(dirs);
    cleanups.push(() => hub.close());
    const patch = await rawRequest(hub.url, {
      method: 'PATCH',
      path: '/memory/drawer_0123456789abcdef01234567',
      headers: { 'content-type': 'application/json' },
      body: withBadBytes(JSON.stringify({ room: 'BADBYTES' })),
    });
    expect(patch.status).toBe(400);
    const patchError = (JSON.parse(patch.body) as { error: { code: string; message: string } }).error;
    expect(patchError.code).toBe('input.invalid');
    expect(patchError.message).toMatch(/UTF-8/);

    const round = await rawRequest(hub.url, {
      method: 'POST',
      path: '/sync/round',
      headers: { 'content-type': 'application/json' },
      body: withBadBytes(JSON.stringify({ peer: { url: 'http://127.0.0.1:9', name: 'BADBYTES' } })),
    });
    expect(round.status).toBe(400);
    const roundError = (JSON.parse(round.body) as { error: { code: string; message: string } }).error;
    expect(roundError.code).toBe('input.invalid');
    expect(roundError.message).toMatch(/UTF-8/);
  });
});
