// Issue 28, the two gaps left after the first pass, attacked against a real hub on port 0:
// the `created_by` nested in each item of palace_add_drawers (an agent with its own secret filing
// drawers as another registered agent), and the daemon's write route (PATCH /memory/{id}), which
// must not take an author the identity checks never see.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { callJson, connectHttpClient, makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';
import { closeSessions, toolError } from '../helpers/stdio-client.js';

const dirsList: HubDirs[] = [];
const hubs: Hub[] = [];
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await closeSessions();
  await Promise.all(hubs.splice(0).map((h) => h.close()));
  for (const d of dirsList.splice(0)) d.cleanup();
});

async function hub(env: Record<string, string> = {}): Promise<{ hub: Hub; dirs: HubDirs }> {
  const dirs = makeHubDirs('palace-identity-gaps-');
  dirsList.push(dirs);
  const h = await startTestHub(dirs, { env });
  hubs.push(h);
  return { hub: h, dirs };
}

async function register(dirs: HubDirs, name: string): Promise<string> {
  const { createAgentRegistry } = await import('../../hub/src/identity/agent-registry.js');
  return createAgentRegistry(dirs.palace).add(name, {}).secret;
}

async function as(h: Hub, secret?: string): Promise<Client> {
  const c = secret
    ? new McpClient({ name: 'identity-gaps-test', version: '1.0.0' })
    : await connectHttpClient(h.url);
  if (secret)
    await c.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
  clients.push(c);
  return c;
}

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
