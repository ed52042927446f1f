// Attacks on the delegation protocol through the plain MCP tools of a real hub (port 0): a crashed
// claimer must not hold its task forever, a second claimer must not take a claimed task, and a
// dependency cycle must be refused with nothing appended.

import { afterEach, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { callJson, connectHttpClient, makeHubDirs, startTestHub, waitUntil, type HubDirs } from '../helpers/hub.js';

const dirsList: HubDirs[] = [];
const hubs: Hub[] = [];

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
  for (const d of dirsList.splice(0)) d.cleanup();
});

async function hub(): Promise<Hub> {
  const dirs = makeHubDirs('palace-coord-attack-');
  dirsList.push(dirs);
  const h = await startTestHub(dirs);
  hubs.push(h);
  return h;
}

const request = (corr: string, extra: Record<string, unknown> = {}) => ({
  type: 'task.request',
  stream: 'project/attack',
  room: 'delegation',
  from_agent: 'laptop-claude',
  to_agent: '*',
  correlation_id: corr,
  status: 'open',
  body: 'Goal: fix it',
  ...extra,
});

describe('coordination attacks', () => {
  it('a crashed claimer does not hold its task forever: the hub expires the lease and the task is open again', async () => {
    const h = await hub();
    const client = await connectHttpClient(h.url);
    const req = await callJson<{ id: string }>(client, 'palace_event_append', request('task_crash'));
    // The claimer asks for a 1 s lease, then "crashes" (never renews, never reports).
    await callJson(client, 'palace_event_ack', { event_id: req.id, from_agent: 'desk-codex', status: 'claimed', lease_ms: 1000 });
    const expired = await waitUntil(
      () => h.services.logstream.list({ correlation_id: 'task_crash', type: 'claim.expired' }).events[0],
      'the hub to append claim.expired',
      15_000,
    );
    expect(expired.from_agent).toBe('hub');
    expect(JSON.parse(expired.body)).toMatchObject({ worker: 'desk-codex', reason: 'lease expired' });
    expect(h.services.logstream.task('task_crash')).toMatchObject({ status: 'open', worker: null, lease_expired: true });
    await client.close();
  });

  it('a second claim on a claimed task does not take it from the first claimer', async () => {
    const h = await hub();
    const client = await connectHttpClient(h.url);
    const req = await callJson<{ id: string }>(client, 'palace_event_append', request('task_race'));
    await callJson(client, 'palace_event_ack', { event_id: req.id, from_agent: 'first-codex', status: 'claimed' });
    const second = await callJson<{ claim?: { won: boolean; worker: string } }>(client, 'palace_event_ack', {
      event_id: req.id,
      from_agent: 'second-gemini',
      status: 'claimed',
    });
    expect(h.services.logstream.task('task_race')).toMatchObject({ status: 'claimed', worker: 'first-codex' });
    expect(second.claim).toMatchObject({ won: false, worker: 'first-codex' });
    await client.close();
  });

  it('refuses a dependency cycle (and a self-dependency) at append time, appending nothing', async () => {
    const h = await hub();
    const client = await connectHttpClient(h.url);
    await callJson(client, 'palace_event_append', request('task_a', { metadata: { depends_on: ['task_b'] } }));
    const before = h.services.logstream.store.countEvents();
    const cycle = await client.callTool({ name: 'palace_event_append', arguments: request('task_b', { metadata: { depends_on: ['task_a'] } }) });
    const self = await client.callTool({ name: 'palace_event_append', arguments: request('task_c', { metadata: { depends_on: ['task_c'] } }) });
    expect(cycle.isError).toBe(true);
    expect(JSON.stringify(cycle.content)).toContain('task.dependency_cycle');
    expect(JSON.stringify(cycle.content)).toContain('task_b -> task_a -> task_b');
    expect(self.isError).toBe(true);
    expect(JSON.stringify(self.content)).toContain('cannot depend on itself');
    expect(h.services.logstream.store.countEvents()).toBe(before);
    await client.close();
  });
});
