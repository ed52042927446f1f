// Coordination on real hubs (port 0) and real logs: lease expiry decided by the claim's origin hub
// only (two synced hubs), renewals and reclaim with an injected clock, the ready queue over a
// dependency chain, and file reservation conflicts through the MCP tools.

import { afterEach, describe, expect, it } from 'vitest';

import { startLeaseSweeper } from '../../hub/src/logstream/lease-sweeper.js';
import { Logstream } from '../../hub/src/logstream/logstream.js';
import type { Hub } from '../../hub/src/server.js';
import { callJson, connectHttpClient, makeHubDirs, startTestHub, waitUntil, type HubDirs } from '../helpers/hub.js';
import { allEvents, writePeers } from '../helpers/sync.js';

const dirsList: HubDirs[] = [];
const hubs: Hub[] = [];
const logs: Logstream[] = [];

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
  for (const l of logs.splice(0)) l.close();
  for (const d of dirsList.splice(0)) d.cleanup();
});

function dirs(): HubDirs {
  const d = makeHubDirs('palace-coord-');
  dirsList.push(d);
  return d;
}

async function hub(env: Record<string, string> = {}): Promise<{ hub: Hub; dirs: HubDirs }> {
  const d = dirs();
  const h = await startTestHub(d, { env: { PALACE_SYNC_INTERVAL: '0.2', ...env } });
  hubs.push(h);
  return { hub: h, dirs: d };
}

const request = (corr: string, extra: Record<string, unknown> = {}) => ({
  type: 'task.request',
  stream: 'project/coord',
  room: 'delegation',
  from_agent: 'laptop-claude',
  to_agent: 'desk-codex',
  correlation_id: corr,
  status: 'open',
  body: `Goal: ${corr}`,
  ...extra,
});

describe('claim leases across two synced hubs', () => {
  it('only the hub holding the claim\'s origin appends claim.expired; both converge on an open task', async () => {
    const a = await hub();
    const b = await hub();
    writePeers(a.dirs.palace, [{ name: 'b', url: b.hub.url }]);
    writePeers(b.dirs.palace, [{ name: 'a', url: a.hub.url }]);
    const la = a.hub.services.logstream;
    const lb = b.hub.services.logstream;

    const client = await connectHttpClient(a.hub.url);
    const req = await callJson<{ id: string }>(client, 'palace_event_append', request('task_mesh'));
    await callJson(client, 'palace_event_ack', { event_id: req.id, from_agent: 'desk-codex', status: 'claimed', lease_ms: 1500 });
    const claimedOn = (log: Logstream): boolean => log.eventsOf('task_mesh').length > 0 && log.task('task_mesh').status === 'claimed';
    await waitUntil(() => claimedOn(lb), 'B to see the claim', 15_000);

    // B sees the same lapsed lease (its clock is far ahead here) but does not own the claim: no expiry.
    const bSweeper = startLeaseSweeper(lb, { manual: true, now: () => new Date(Date.now() + 3_600_000) });
    expect(bSweeper.tick()).toEqual([]);
    bSweeper.stop();

    const expiredOnB = await waitUntil(
      () => lb.list({ correlation_id: 'task_mesh', type: 'claim.expired' }).events[0],
      'A\'s claim.expired to reach B',
      20_000,
    );
    expect(expiredOnB).toMatchObject({ from_agent: 'hub', origin_replica: la.replicaId });
    for (const log of [la, lb]) {
      expect(allEvents(log).filter((e) => e.type === 'claim.expired')).toHaveLength(1);
      // Open again; the worker falls back to the request's addressee.
      expect(log.task('task_mesh')).toMatchObject({ status: 'open', lease_expired: true, worker: 'desk-codex', claim_event_id: null });
    }

    // Reclaim through B: the claim is B's now, so only B would expire it.
    const clientB = await connectHttpClient(b.hub.url);
    const reclaim = await callJson<{ claim: { won: boolean } }>(clientB, 'palace_event_ack', {
      event_id: req.id,
      from_agent: 'pi-gemini',
      status: 'claimed',
    });
    expect(reclaim.claim.won).toBe(true);
    await waitUntil(() => la.task('task_mesh').worker === 'pi-gemini' || undefined, 'A to see the reclaim', 15_000);
    const aSweeper = startLeaseSweeper(la, { manual: true, now: () => new Date(Date.now() + 7_200_000) });
    expect(aSweeper.tick()).toEqual([]);
    aSweeper.stop();
    await client.close();
    await clientB.close();
  });
});

describe('claim renewals across two synced hubs', () => {
  it('a renewal written on the other hub extends the lease the origin hub expires by', async () => {
    const a = await hub();
    const b = await hub();
    writePeers(a.dirs.palace, [{ name: 'b', url: b.hub.url }]);
    writePeers(b.dirs.palace, [{ name: 'a', url: a.hub.url }]);
    const la = a.hub.services.logstream;
    const lb = b.hub.services.logstream;
    const client = await connectHttpClient(a.hub.url);
    const clientB = await connectHttpClient(b.hub.url);
    const req = await callJson<{ id: string }>(client, 'palace_event_append', request('task_renew_mesh'));
    await callJson(client, 'palace_event_ack', { event_id: req.id, from_agent: 'desk-codex', status: 'claimed', lease_ms: 10_000 });
    await waitUntil(() => lb.eventsOf('task_renew_mesh').length === 2 || undefined, 'B to see the claim', 15_000);

    const renewed = await callJson<{ lease_expires_at: string }>(clientB, 'palace_task_renew', {
      event_id: 'task_renew_mesh',
      from_agent: 'desk-codex',
      lease_ms: '10m',
    });
    await waitUntil(() => la.task('task_renew_mesh').lease_expires_at === renewed.lease_expires_at || undefined, 'A to see the renewal', 15_000);

    const at = (ms: number) => startLeaseSweeper(la, { manual: true, now: () => new Date(Date.now() + ms) });
    const early = at(60_000); // past the first lease, inside the renewed one
    expect(early.tick()).toEqual([]);
    early.stop();
    const late = at(20 * 60_000);
    expect(late.tick()).toEqual(['task_renew_mesh']);
    late.stop();
    await waitUntil(() => lb.task('task_renew_mesh').status === 'open' || undefined, 'the expiry to reach B', 15_000);
    await client.close();
    await clientB.close();
  });
});

describe('claim leases with an injected clock', () => {
  it('renewal keeps the claim, lapse expires it, a reclaim takes it, and the old claimer\'s patch is flagged late', () => {
    const d = dirs();
    let now = new Date('2026-03-01T10:00:00.000Z');
    const log = Logstream.open(d.palace, { now: () => now });
    logs.push(log);
    const sweeper = startLeaseSweeper(log, { manual: true });
    const advance = (ms: number): void => {
      now = new Date(now.getTime() + ms);
    };

    const req = log.appendNow(request('task_clock'));
    const claim = log.ack({ event_id: req.id, from_agent: 'desk-codex', status: 'claimed', lease_ms: '10m' });
    expect(claim.claim).toMatchObject({ won: true, lease_expires_at: '2026-03-01T10:10:00.000Z' });
    expect(log.task('task_clock').lease_left_ms).toBe(600_000);

    advance(9 * 60_000);
    expect(sweeper.tick()).toEqual([]);
    const renewal = log.renew({ event_id: 'task_clock', from_agent: 'desk-codex', lease_ms: '10m' });
    expect(renewal.lease_expires_at).toBe('2026-03-01T10:19:00.000Z');
    expect(() => log.renew({ event_id: 'task_clock', from_agent: 'pi-gemini' })).toThrow(/does not hold/);

    advance(5 * 60_000); // 10:14: past the first lease, inside the renewed one
    expect(sweeper.tick()).toEqual([]);
    expect(log.task('task_clock').status).toBe('claimed');

    advance(6 * 60_000); // 10:20: lapsed
    expect(sweeper.tick()).toEqual(['task_clock']);
    const task = log.task('task_clock');
    expect(task).toMatchObject({ status: 'open', lease_expired: true, claim_event_id: null });
    expect(() => log.renew({ event_id: 'task_clock', from_agent: 'desk-codex' })).toThrow(/claim it again/);
    expect(sweeper.tick()).toEqual([]); // expired once

    const reclaim = log.ack({ event_id: req.id, from_agent: 'pi-gemini', status: 'claimed' });
    expect(reclaim.claim).toMatchObject({ won: true, lease_expires_at: '2026-03-01T10:50:00.000Z' }); // default 30 min
    const late = log.submitPatch({ from_agent: 'desk-codex', correlation_id: 'task_clock', content: 'diff --git a/x b/x\n+late\n' });
    expect(late.late_patch).toBe(true);
    expect(log.task('task_clock').late_patch).toBe(true);

    expect(() => log.ack({ event_id: req.id, from_agent: 'x', status: 'claimed', lease_ms: 500 })).toThrow(/lease_ms must be from 1000/);
    expect(() => log.ack({ event_id: req.id, from_agent: 'x', status: 'claimed', lease_ms: '99d' })).toThrow(/lease_ms must be from/);
  });
});

describe('the ready queue and dependencies', () => {
  it('lists a dependency chain one task at a time as each is applied, and shows blocked_by', async () => {
    const { hub: h } = await hub();
    const client = await connectHttpClient(h.url);
    const reqA = await callJson<{ id: string }>(client, 'palace_event_append', request('task_chain_a'));
    await callJson(client, 'palace_event_append', request('task_chain_b', { depends_on: ['task_chain_a'] }));
    await callJson(client, 'palace_event_append', request('task_chain_c', { depends_on: ['task_chain_b'], to_agent: '*' }));
    await callJson(client, 'palace_event_append', request('task_other', { to_agent: 'someone-else' }));

    const ready = async (): Promise<string[]> =>
      (await callJson<{ tasks: Array<{ correlation_id: string }> }>(client, 'palace_task_ready', { agent: 'desk-codex' })).tasks.map(
        (t) => t.correlation_id,
      );
    expect(await ready()).toEqual(['task_chain_a']);
    expect(h.services.logstream.task('task_chain_c')).toMatchObject({ depends_on: ['task_chain_b'], blocked_by: ['task_chain_b'] });

    await callJson(client, 'palace_event_ack', { event_id: reqA.id, from_agent: 'desk-codex', status: 'claimed' });
    expect(await ready()).toEqual(['task_chain_a']); // its own claim in flight, first (resume: true; issue 28)
    const patch = await callJson<{ event: { id: string } }>(client, 'palace_patch_submit', {
      from_agent: 'desk-codex',
      correlation_id: 'task_chain_a',
      content: 'diff --git a/a b/a\n+a\n',
    });
    expect(await ready()).toEqual([]); // ready (a patch) is not applied
    await callJson(client, 'palace_event_ack', { event_id: patch.event.id, from_agent: 'laptop-claude', status: 'applied' });
    expect(await ready()).toEqual(['task_chain_b']);
    expect(h.services.logstream.task('task_chain_b').blocked_by).toEqual([]);
    // limit: the head of the queue only; a limit out of range is refused naming it.
    await callJson(client, 'palace_event_append', request('task_later'));
    expect(await ready()).toEqual(['task_chain_b', 'task_later']);
    const head = await callJson<{ tasks: Array<{ correlation_id: string }> }>(client, 'palace_task_ready', { agent: 'desk-codex', limit: 1 });
    expect(head.tasks.map((t) => t.correlation_id)).toEqual(['task_chain_b']);
    const badLimit = await client.callTool({ name: 'palace_task_ready', arguments: { agent: 'desk-codex', limit: 0 } });
    expect(badLimit.isError).toBe(true);
    expect(JSON.stringify(badLimit.content)).toContain('limit');
    expect(() => h.services.logstream.ready({ agent: 'desk-codex', limit: 501 })).toThrow(/limit must be a whole number from 1 to 500/);

    // A longer cycle through a forward reference is refused too: q -> r -> p -> q.
    await callJson(client, 'palace_event_append', request('task_p', { depends_on: ['task_q'] }));
    await callJson(client, 'palace_event_append', request('task_r', { depends_on: ['task_p'] }));
    const cycle = await client.callTool({ name: 'palace_event_append', arguments: request('task_q', { depends_on: ['task_r'] }) });
    expect(cycle.isError).toBe(true);
    expect(JSON.stringify(cycle.content)).toContain('task_q -> task_r -> task_p -> task_q');
    expect(h.services.logstream.eventsOf('task_q')).toEqual([]);
    const notRequest = await client.callTool({ name: 'palace_event_append', arguments: { ...request('task_chain_a'), type: 'status', depends_on: ['x'] } });
    expect(JSON.stringify(notRequest.content)).toContain('depends_on is only for a task.request');
    await client.close();
  });
});

describe('dependency cycles inside one group commit', () => {
  it('refuses the request that closes a cycle with another appended in the same turn', async () => {
    const d = dirs();
    const log = Logstream.open(d.palace);
    logs.push(log);
    const results = await Promise.allSettled([
      log.append(request('task_x', { depends_on: ['task_y'] })),
      log.append(request('task_y', { depends_on: ['task_x'] })),
      log.append(request('task_w', { depends_on: ['task_x'] })),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const reason = (results[1] as PromiseRejectedResult).reason as { code: string; message: string };
    expect(reason.code).toBe('task.dependency_cycle');
    expect(reason.message).toContain('task_y -> task_x -> task_y');
    expect(log.eventsOf('task_y')).toEqual([]);
    expect(log.task('task_w').blocked_by).toEqual(['task_x']);
  });
});

describe('file reservations', () => {
  it('refuses an overlapping reservation naming holder and task, allows shared ones, lists and releases', async () => {
    const { hub: h } = await hub();
    const client = await connectHttpClient(h.url);
    await callJson(client, 'palace_event_append', request('task_res'));
    const mine = await callJson<{ reservation: { reservation_id: string; expires_at: string } }>(client, 'palace_reserve', {
      paths: ['src/auth/**'],
      stream: 'project/coord',
      from_agent: 'desk-codex',
      exclusive: true,
      correlation_id: 'task_res',
      ttl_ms: '1h',
    });
    const before = h.services.logstream.store.countEvents();
    const refused = await client.callTool({
      name: 'palace_reserve',
      arguments: { paths: ['src/auth/login.ts'], stream: 'project/coord', from_agent: 'pi-gemini' },
    });
    expect(refused.isError).toBe(true);
    const text = JSON.stringify(refused.content);
    expect(text).toContain('reservation.conflict');
    expect(text).toContain('desk-codex holds exclusive src/auth/**');
    expect(text).toContain('task task_res');
    expect(h.services.logstream.store.countEvents()).toBe(before);

    await callJson(client, 'palace_reserve', { paths: ['docs/'], stream: 'project/coord', from_agent: 'pi-gemini' });
    await callJson(client, 'palace_reserve', { paths: ['docs/api.md'], stream: 'project/coord', from_agent: 'laptop-claude' }); // shared + shared
    const exclusiveOverShared = await client.callTool({
      name: 'palace_reserve',
      arguments: { paths: ['docs/**'], stream: 'project/coord', from_agent: 'desk-codex', exclusive: true },
    });
    expect(exclusiveOverShared.isError).toBe(true);
    const forced = await callJson<{ overridden: unknown[] }>(client, 'palace_reserve', {
      paths: ['src/auth/login.ts'],
      stream: 'project/coord',
      from_agent: 'pi-gemini',
      force: true,
    });
    expect(forced.overridden).toHaveLength(1);

    const list = await callJson<{ reservations: Array<{ reservation_id: string; agent: string }> }>(client, 'palace_reservations', {
      path: 'src/auth/login.ts',
    });
    expect(list.reservations.map((r) => r.agent).sort()).toEqual(['desk-codex', 'pi-gemini']);
    expect(h.services.logstream.task('task_res').reservations.map((r) => r.reservation_id)).toEqual([mine.reservation.reservation_id]);

    // Released by hand...
    await callJson(client, 'palace_release', { reservation_id: mine.reservation.reservation_id, from_agent: 'desk-codex' });
    expect((await callJson<{ count: number }>(client, 'palace_reservations', { agent: 'desk-codex' })).count).toBe(0);
    // ...and with the task: a new one for the task disappears when the task fails.
    await callJson(client, 'palace_reserve', { paths: ['lib/'], stream: 'project/coord', from_agent: 'desk-codex', exclusive: true, correlation_id: 'task_res' });
    expect((await callJson<{ count: number }>(client, 'palace_reservations', { correlation_id: 'task_res' })).count).toBe(1);
    await callJson(client, 'palace_event_append', { ...request('task_res'), type: 'task.reply', status: 'failed', from_agent: 'desk-codex', to_agent: 'laptop-claude' });
    expect((await callJson<{ count: number }>(client, 'palace_reservations', { correlation_id: 'task_res' })).count).toBe(0);

    const badPath = await client.callTool({ name: 'palace_reserve', arguments: { paths: ['../etc/passwd'], stream: 'project/coord', from_agent: 'x' } });
    expect(JSON.stringify(badPath.content)).toContain('stay inside it');
    await client.close();
  });
});
