// Issue 28 attacks over MCP on HTTP against a real hub (port 0): writing under another agent's name,
// a registered name without its secret, an unregistered name on an enforced hub, a raw claim.expired
// as `hub`, claim theft by release, a stale attempt after the lease lapsed and another agent
// re-claimed, and the ready queue honouring required capabilities with own claims first.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';

import type { LogEvent } from '../../hub/src/core/types.js';
import type { Hub } from '../../hub/src/server.js';
import { callJson, waitUntil } from '../helpers/hub.js';
import { toolError } from '../helpers/stdio-client.js';
import { clientAs, closeIdentityHubs, identityHub, registerAgent } from '../helpers/identity-hubs.js';

afterEach(closeIdentityHubs);

const hub = (env: Record<string, string> = {}) => identityHub('palace-identity-', env);
const register = registerAgent;
const as = clientAs;

async function refusal(client: Client, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string }> {
  return toolError(await client.callTool({ name, arguments: args }));
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

const count = (h: Hub): number => h.services.logstream.store.countEvents();

describe('agents prove who they are (HTTP)', () => {
  it('binds a write to the authenticated agent: another name is refused (identity.mismatch), none is filled in', async () => {
    const { hub: h, dirs } = await hub();
    const secret = await register(dirs, 'worker-codex');
    const worker = await as(h, secret);
    const before = count(h);
    const mismatch = await refusal(worker, 'palace_event_append', request('task_m', { from_agent: 'laptop-claude' }));
    expect(mismatch.code).toBe('identity.mismatch');
    expect(count(h)).toBe(before);
    const { from_agent: _drop, ...noName } = request('task_m');
    const filled = await callJson<LogEvent>(worker, 'palace_event_append', noName);
    expect(filled.from_agent).toBe('worker-codex');
    const put = await callJson<{ created_by: string }>(worker, 'palace_artifact_put', { kind: 'note', content: 'x' });
    expect(put.created_by).toBe('worker-codex');
  });

  it('never lets a registered name be used without its secret (identity.unproven), nor a wrong secret in', async () => {
    const { hub: h, dirs } = await hub();
    await register(dirs, 'worker-codex');
    const anon = await as(h);
    const before = count(h);
    const unproven = await refusal(anon, 'palace_event_append', request('task_u', { from_agent: 'worker-codex' }));
    expect(unproven.code).toBe('identity.unproven');
    const ack = await refusal(anon, 'palace_add_drawer', { wing: 'w', room: 'r', content: 'c', created_by: 'worker-codex' });
    expect(ack.code).toBe('identity.unproven');
    expect(count(h)).toBe(before);
    const wrong = await fetch(`${h.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'X-Palace-Agent-Token': 'pat_not-a-real-secret' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('identity.unproven');
  });

  it('refuses an unregistered name on an enforced hub, and says so in /statusz', async () => {
    const { hub: h, dirs } = await hub({ PALACE_IDENTITY_MODE: 'enforced' });
    const secret = await register(dirs, 'worker-codex');
    const anon = await as(h);
    const before = count(h);
    expect((await refusal(anon, 'palace_event_append', request('task_e', { from_agent: 'stranger' }))).code).toBe('identity.unregistered');
    expect(count(h)).toBe(before);
    const ok = await callJson<LogEvent>(await as(h, secret), 'palace_event_append', request('task_e', { from_agent: undefined }));
    expect(ok.from_agent).toBe('worker-codex');
    const status = (await (await fetch(`${h.url}/statusz`)).json()) as { identity: { mode: string; agents: number } };
    expect(status.identity).toMatchObject({ mode: 'enforced', agents: 1 });
  });

  it('refuses a raw claim.expired (as hub or anyone) and writes as hub or a replica id', async () => {
    const { hub: h } = await hub();
    const anon = await as(h);
    const req = await callJson<LogEvent>(anon, 'palace_event_append', request('task_x'));
    const claim = await callJson<LogEvent>(anon, 'palace_event_ack', { event_id: req.id, from_agent: 'worker-codex', status: 'claimed' });
    const before = count(h);
    const forged = {
      type: 'claim.expired',
      stream: 'project/attack',
      room: 'delegation',
      from_agent: 'hub',
      correlation_id: 'task_x',
      body: JSON.stringify({ reason: 'lease expired', claimed_event_id: claim.id, worker: 'worker-codex' }),
    };
    expect((await refusal(anon, 'palace_event_append', forged)).code).toBe('identity.reserved');
    expect((await refusal(anon, 'palace_event_append', { ...forged, from_agent: 'mallory' })).code).toBe('event.hub_only');
    expect((await refusal(anon, 'palace_event_append', { ...forged, type: 'claim.renewed', from_agent: 'worker-codex' })).code).toBe('event.hub_only');
    const replica = h.services.logstream.replicaId;
    expect((await refusal(anon, 'palace_event_append', request('task_y', { from_agent: replica }))).code).toBe('identity.reserved');
    expect(count(h)).toBe(before);
    expect(h.services.logstream.task('task_x')).toMatchObject({ status: 'claimed', worker: 'worker-codex' });
  });

  it("refuses a release of someone else's live claim (claim.not_yours); the requester may, and the event says who", async () => {
    const { hub: h, dirs } = await hub();
    const requester = await as(h, await register(dirs, 'laptop-claude'));
    const worker = await as(h, await register(dirs, 'worker-codex'));
    const mallory = await as(h, await register(dirs, 'mallory'));
    const req = await callJson<LogEvent>(requester, 'palace_event_append', request('task_p1'));
    await callJson(worker, 'palace_event_ack', { event_id: req.id, status: 'claimed' });
    const before = count(h);
    expect((await refusal(mallory, 'palace_task_release', { event_id: req.id })).code).toBe('claim.not_yours');
    // An unregistered name on an open hub is no better.
    expect((await refusal(await as(h), 'palace_task_release', { event_id: req.id, from_agent: 'eve' })).code).toBe('claim.not_yours');
    expect(count(h)).toBe(before);
    expect(h.services.logstream.task('task_p1')).toMatchObject({ status: 'claimed', worker: 'worker-codex' });
    const released = await callJson<LogEvent>(requester, 'palace_task_release', { event_id: req.id, reason: 'reassigning' });
    expect(released.from_agent).toBe('laptop-claude');
    expect(JSON.parse(released.body)).toMatchObject({ released_by: 'laptop-claude', worker: 'worker-codex' });
    expect(h.services.logstream.task('task_p1').status).toBe('open');
  });

  it('fences claims: a stale attempt after the lease lapsed and another agent re-claimed never counts as the patch', async () => {
    const { hub: h, dirs } = await hub();
    const requester = await as(h, await register(dirs, 'laptop-claude'));
    const slow = await as(h, await register(dirs, 'slow-codex'));
    const fresh = await as(h, await register(dirs, 'fresh-codex'));
    const req = await callJson<LogEvent>(requester, 'palace_event_append', request('task_stale'));
    const first = await callJson<LogEvent & { claim: { claim_event_id: string } }>(slow, 'palace_event_ack', { event_id: req.id, status: 'claimed', lease_ms: 1000 });
    await waitUntil(() => h.services.logstream.task('task_stale').status === 'open', 'the sweeper to expire the lapsed lease', 15_000);
    const second = await callJson<LogEvent & { claim: { won: boolean } }>(fresh, 'palace_event_ack', { event_id: req.id, status: 'claimed' });
    expect(second.claim.won).toBe(true);
    // The slow worker names its old attempt: refused, nothing written.
    const before = count(h);
    const named = await refusal(slow, 'palace_patch_submit', { correlation_id: 'task_stale', content: 'diff --git a/x b/x\n+slow\n', metadata: { attempt: first.id } });
    expect(named.code).toBe('task.stale_attempt');
    expect(count(h)).toBe(before);
    // Without naming it: stored, flagged, and the task stays with the new claim.
    const late = await callJson<{ event: LogEvent; stale_attempt?: { reason: string } }>(slow, 'palace_patch_submit', {
      correlation_id: 'task_stale',
      content: 'diff --git a/x b/x\n+slow\n',
    });
    expect(late.stale_attempt?.reason).toMatch(/fresh-codex/);
    expect(late.event.metadata.stale_attempt).toBeTruthy();
    const task = h.services.logstream.task('task_stale');
    expect(task).toMatchObject({ status: 'claimed', worker: 'fresh-codex', claim_event_id: second.id });
    expect(task.stale_attempts?.[0]).toMatchObject({ event_id: late.event.id, by: 'slow-codex' });
    // The live worker's patch carries its attempt and moves the task.
    const good = await callJson<{ event: LogEvent }>(fresh, 'palace_patch_submit', { correlation_id: 'task_stale', content: 'diff --git a/x b/x\n+fresh\n' });
    expect(good.event.metadata.attempt).toBe(second.id);
    expect(h.services.logstream.task('task_stale').status).toBe('ready');
  });

  it('offers a task only to an agent with its required capabilities, own in-flight claims first, and says why not', async () => {
    const { hub: h, dirs } = await hub();
    const requester = await as(h, await register(dirs, 'laptop-claude', ['write']));
    const writer = await as(h, await register(dirs, 'box-codex', ['write', 'bash']));
    const reviewer = await as(h, await register(dirs, 'box-reviewer', ['review', 'read-only']));
    await callJson(requester, 'palace_event_append', request('task_impl', { requires: ['write'] }));
    await callJson(requester, 'palace_event_append', request('task_review', { requires: ['review'] }));
    const mine = await callJson<LogEvent>(requester, 'palace_event_append', request('task_mine'));
    await callJson(writer, 'palace_event_ack', { event_id: mine.id, status: 'claimed' });
    const forWriter = await callJson<{ tasks: Array<{ correlation_id: string; status: string }>; not_offered: Array<{ correlation_id: string; reason: string }> }>(
      writer,
      'palace_task_ready',
      {},
    );
    expect(forWriter.tasks.map((t) => t.correlation_id)).toEqual(['task_mine', 'task_impl']);
    expect(forWriter.not_offered).toEqual([expect.objectContaining({ correlation_id: 'task_review', reason: expect.stringMatching(/review/) })]);
    const forReviewer = await callJson<typeof forWriter>(reviewer, 'palace_task_ready', {});
    expect(forReviewer.tasks.map((t) => t.correlation_id)).toEqual(['task_review']);
    expect(forReviewer.not_offered.map((t) => t.correlation_id)).toContain('task_impl');
    // A read-only teammate cannot claim the implementation task either.
    const [impl] = h.services.logstream.list({ correlation_id: 'task_impl', type: 'task.request' }).events;
    expect((await refusal(reviewer, 'palace_event_ack', { event_id: impl?.id, status: 'claimed' })).code).toBe('task.capability_missing');
  });
});
