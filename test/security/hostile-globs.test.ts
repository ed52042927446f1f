// Issue 29: a reservation glob built to make a backtracking regex explode (`*a*a…*b` against a long
// run of `a`) must not stall the hub: palace_reservations and the conflict check answer at once
// (on the old regex matcher this test ran past its timeout), and patterns past the caps are refused.

import { afterEach, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { callJson, connectHttpClient, makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function hub(): Promise<Hub> {
  const dirs: HubDirs = makeHubDirs('palace-globs-');
  cleanups.push(() => dirs.cleanup());
  const h = await startTestHub(dirs);
  cleanups.push(() => h.close());
  return h;
}

const EVIL = `${'*a'.repeat(14)}*b`;

describe('reservation globs under attack', () => {
  it('the ReDoS pattern is matched in linear time by palace_reservations and the conflict check', { timeout: 20_000 }, async () => {
    const h = await hub();
    const client = await connectHttpClient(h.url);
    cleanups.push(() => client.close());
    await callJson(client, 'palace_reserve', { paths: [EVIL], stream: 's', from_agent: 'mallory', exclusive: true });
    const long = 'a'.repeat(250); // routing fields stop at 256 characters; `guard check` meets 4 KB paths (unit test)
    const listed = await callJson<{ count: number }>(client, 'palace_reservations', { path: long, stream: 's' });
    expect(listed.count).toBe(0);
    const short = await callJson<{ count: number }>(client, 'palace_reservations', { path: 'a'.repeat(32), stream: 's' });
    expect(short.count).toBe(0);
    // The conflict check of a new reservation runs the same match against the held glob.
    const mine = await callJson<{ event: { id: string } }>(client, 'palace_reserve', { paths: [long], stream: 's', from_agent: 'alice', exclusive: true });
    expect(mine.event.id).toMatch(/^evt_/);
    const hit = await callJson<{ count: number }>(client, 'palace_reservations', { path: `${'a'.repeat(40)}b`, stream: 's' });
    expect(hit.count).toBe(1);
    const health = await fetch(`${h.url}/healthz`);
    expect(health.status).toBe(200);
  });

  it('refuses patterns past the caps with a clear input.invalid naming paths', async () => {
    const h = await hub();
    const client = await connectHttpClient(h.url);
    cleanups.push(() => client.close());
    for (const [paths, reason] of [
      [[`${'*a'.repeat(40)}`], /wildcards; the maximum is 32/],
      [['a'.repeat(300)], /256 characters/],
      [['{a,b}{c,d}{e,f}{g,h}{i,j}'], /alternatives/],
    ] as const) {
      const result = await client.callTool({ name: 'palace_reserve', arguments: { paths, stream: 's', from_agent: 'mallory' } });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toMatch(reason);
      expect(JSON.stringify(result.content)).toMatch(/input\.invalid|paths/);
    }
  });
});
