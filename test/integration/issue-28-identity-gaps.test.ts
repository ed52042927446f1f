// Issue 28, the two gaps left after the first pass, attacked against a real hub on port 0:
// the `created_by` nested in each item of palace_add_drawers (an agent with its own secret filing
// drawers as another registered agent), and the daemon's write route (PATCH /memory/{id}), which
// must not take an author the identity checks never see.

import { afterEach, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { callJson } from '../helpers/hub.js';
import { toolError } from '../helpers/stdio-client.js';
import { clientAs, closeIdentityHubs, identityHub, registerAgent } from '../helpers/identity-hubs.js';

afterEach(closeIdentityHubs);

const hub = (env: Record<string, string> = {}) => identityHub('palace-identity-gaps-', env);
const register = registerAgent;
const as = clientAs;

async function drawerCount(h: Hub): Promise<number> {
  const { wings } = await (await h.services.memory.get()).listWings();
  return Object.values(wings).reduce((a, b) => a + b, 0);
}

interface Filed {
  filed: number;
  results: Array<{ drawer_id?: string; error?: { code: string } }>;
}

const item = (content: string, extra: Record<string, unknown> = {}) => ({ wing: 'project', room: 'notes', content, ...extra });

describe('palace_add_drawers binds each item to the caller', () => {
  it("refuses an item filed as another registered agent (identity.mismatch), writing nothing; fills in the agent's own name", async () => {
    const { hub: h, dirs } = await hub();
    const secret = await register(dirs, 'worker-codex');
    await register(dirs, 'laptop-claude');
    const worker = await as(h, secret);
    const before = await drawerCount(h);
    const forged = toolError(
      await worker.callTool({
        name: 'palace_add_drawers',
        arguments: { items: [item('mine, honestly', { created_by: 'worker-codex' }), item('forged under another name', { created_by: 'laptop-claude' })] },
      }),
    );
    expect(forged.code).toBe('identity.mismatch');
    expect(forged.message).toContain('items[1]');
    // The alias is bound too.
    const alias = toolError(await worker.callTool({ name: 'palace_add_drawers', arguments: { items: [item('alias forged', { added_by: 'laptop-claude' })] } }));
    expect(alias.code).toBe('identity.mismatch');
    expect(await drawerCount(h)).toBe(before);

    const ok = await callJson<Filed>(worker, 'palace_add_drawers', { items: [item('first, unnamed'), item('second, my own name', { created_by: 'worker-codex' })] });
    expect(ok.filed).toBe(2);
    for (const r of ok.results) {
      const drawer = await callJson<{ created_by: string }>(worker, 'palace_get_drawer', { drawer_id: r.drawer_id });
      expect(drawer.created_by).toBe('worker-codex');
    }
  });

  it('refuses a registered name without its secret (identity.unproven) and a reserved name; an open hub still believes an unregistered one', async () => {
    const { hub: h, dirs } = await hub();
    await register(dirs, 'worker-codex');
    const anon = await as(h);
    const before = await drawerCount(h);
    const unproven = toolError(await anon.callTool({ name: 'palace_add_drawers', arguments: { items: [item('a'), item('b', { created_by: 'worker-codex' })] } }));
    expect(unproven.code).toBe('identity.unproven');
    const reserved = toolError(await anon.callTool({ name: 'palace_add_drawers', arguments: { items: [item('c', { created_by: 'hub' })] } }));
    expect(reserved.code).toBe('identity.reserved');
    expect(await drawerCount(h)).toBe(before);
    const open = await callJson<Filed>(anon, 'palace_add_drawers', { items: [item('from a stranger', { created_by: 'stranger' })] });
    expect(open.filed).toBe(1);
    const drawer = await callJson<{ created_by: string }>(anon, 'palace_get_drawer', { drawer_id: open.results[0]?.drawer_id });
    expect(drawer.created_by).toBe('stranger');
  });

  it('refuses an unregistered item writer on an enforced hub (identity.unregistered)', async () => {
    const { hub: h, dirs } = await hub({ PALACE_IDENTITY_MODE: 'enforced' });
    const secret = await register(dirs, 'worker-codex');
    const anon = await as(h);
    const refused = toolError(await anon.callTool({ name: 'palace_add_drawers', arguments: { items: [item('x', { created_by: 'stranger' })] } }));
    expect(refused.code).toBe('identity.unregistered');
    const unnamed = toolError(await anon.callTool({ name: 'palace_add_drawers', arguments: { items: [item('y')] } }));
    expect(unnamed.code).toBe('identity.unproven');
    expect(await drawerCount(h)).toBe(0);
    const ok = await callJson<Filed>(await as(h, secret), 'palace_add_drawers', { items: [item('z')] });
    expect(ok.filed).toBe(1);
  });
});

describe("the daemon's write route takes no author the identity checks would not see", () => {
  // The audit behind this: the only HTTP route besides /mcp that writes palace data is PATCH
  // /memory/{id} (a move; /sync/round pulls from pinned peers, /cypher is read-only). Drawers, KG
  // facts and diaries are written only through /mcp tools, where IdentityService.bind runs. This
  // pins that: a move carries no author (none is recorded, as with palace_update_drawer), and an
  // author field sent anyway is refused, never stored or believed.
  it('refuses created_by / from_agent in a PATCH /memory body (input.invalid, nothing moved); an agent secret is accepted, a wrong one is 401', async () => {
    const { hub: h, dirs } = await hub();
    const secret = await register(dirs, 'worker-codex');
    await register(dirs, 'laptop-claude');
    const filed = await callJson<Filed>(await as(h, secret), 'palace_add_drawers', { items: [item('to be moved')] });
    const id = filed.results[0]?.drawer_id ?? '';
    const patch = (body: unknown, auth: Record<string, string> = {}) =>
      fetch(`${h.url}/memory/${id}`, { method: 'PATCH', headers: { 'Content-Type': 'application/json', ...auth }, body: JSON.stringify(body) });
    for (const author of ['created_by', 'from_agent', 'added_by']) {
      const res = await patch({ wing: 'elsewhere', [author]: 'laptop-claude' }, { Authorization: `Bearer ${secret}` });
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as { error: { code: string; field: string } };
      expect(error).toMatchObject({ code: 'input.invalid', field: author });
    }
    const wrong = await patch({ wing: 'elsewhere' }, { Authorization: 'Bearer pat_not-a-real-secret' });
    expect(wrong.status).toBe(401);
    const still = await callJson<{ wing: string }>(await as(h), 'palace_get_drawer', { drawer_id: id });
    expect(still.wing).toBe('project');
    const moved = await patch({ wing: 'elsewhere' }, { Authorization: `Bearer ${secret}` });
    expect(moved.status).toBe(200);
    expect(((await moved.json()) as { wing: string }).wing).toBe('elsewhere');
  });
});

describe('an enforced hub refuses an unproven write that names nobody, on /mcp and on the daemon route alike', () => {
  it('refuses an anonymous move (PATCH /memory and palace_update_drawer: identity.unproven, nothing moved); the agent moves', async () => {
    const { hub: h, dirs } = await hub({ PALACE_IDENTITY_MODE: 'enforced' });
    const secret = await register(dirs, 'worker-codex');
    const worker = await as(h, secret);
    const filed = await callJson<Filed>(worker, 'palace_add_drawers', { items: [item('kept in place')] });
    const id = filed.results[0]?.drawer_id ?? '';
    const patch = (auth: Record<string, string> = {}) =>
      fetch(`${h.url}/memory/${id}`, { method: 'PATCH', headers: { 'Content-Type': 'application/json', ...auth }, body: JSON.stringify({ wing: 'elsewhere' }) });
    const anonPatch = await patch();
    expect(anonPatch.status).toBe(401);
    expect(((await anonPatch.json()) as { error: { code: string } }).error.code).toBe('identity.unproven');
    const anon = await as(h);
    expect(toolError(await anon.callTool({ name: 'palace_update_drawer', arguments: { drawer_id: id, wing: 'elsewhere' } })).code).toBe('identity.unproven');
    expect((await callJson<{ wing: string }>(worker, 'palace_get_drawer', { drawer_id: id })).wing).toBe('project');
    const moved = await patch({ Authorization: `Bearer ${secret}` });
    expect(moved.status).toBe(200);
    expect((await callJson<{ wing: string }>(worker, 'palace_get_drawer', { drawer_id: id })).wing).toBe('elsewhere');
  });

  it('keeps the open loopback hub as it was: an anonymous move is accepted', async () => {
    const { hub: h } = await hub();
    const anon = await as(h);
    const filed = await callJson<Filed>(anon, 'palace_add_drawers', { items: [item('open hub drawer')] });
    const id = filed.results[0]?.drawer_id ?? '';
    const res = await fetch(`${h.url}/memory/${id}`, { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ room: 'moved' }) });
    expect(res.status).toBe(200);
    expect((await callJson<{ room: string }>(anon, 'palace_update_drawer', { drawer_id: id, room: 'again' })).room).toBe('again');
  });
});
