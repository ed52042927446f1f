// Hubs and clients for the identity (issue 28) attack tests: hubs on port 0 in their own palaces,
// agents registered with the module `palace agent add` uses, and SDK clients presenting an agent's
// secret as their bearer token. Everything opened is closed by `closeIdentityHubs()` (an afterEach).

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import type { Hub } from '../../hub/src/server.js';
import { connectHttpClient, makeHubDirs, startTestHub, type HubDirs } from './hub.js';
import { closeSessions } from './stdio-client.js';

const dirsList: HubDirs[] = [];
const hubs: Hub[] = [];
const clients: Client[] = [];

/** Closes every client, session and hub opened since the last call, and removes their palaces. */
export async function closeIdentityHubs(): Promise<void> {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await closeSessions();
  await Promise.all(hubs.splice(0).map((h) => h.close()));
  for (const d of dirsList.splice(0)) d.cleanup();
}

/** A hub on port 0 in a palace of its own. */
export async function identityHub(prefix: string, env: Record<string, string> = {}): Promise<{ hub: Hub; dirs: HubDirs }> {
  const dirs = makeHubDirs(prefix);
  dirsList.push(dirs);
  const h = await startTestHub(dirs, { env });
  hubs.push(h);
  return { hub: h, dirs };
}

/** Registers an agent in the palace (the module `palace agent add` uses) and returns its secret. */
export async function registerAgent(dirs: HubDirs, name: string, capabilities: string[] = []): Promise<string> {
  const { createAgentRegistry } = await import('../../hub/src/identity/agent-registry.js');
  return createAgentRegistry(dirs.palace).add(name, { capabilities }).secret;
}

/** An SDK client presenting `secret` as its bearer token (an agent's own credential), or none. */
export async function clientAs(h: Hub, secret?: string): Promise<Client> {
  let c: Client;
  if (secret) {
    c = new McpClient({ name: 'identity-test', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
  } else c = await connectHttpClient(h.url);
  clients.push(c);
  return c;
}
