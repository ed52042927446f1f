// Resources, subscriptions, prompts, completion and logging (issue 33), driven by the official SDK
// client: over HTTP /mcp (a session from initialize, notifications on its GET stream) and through
// `palace mcp` over stdio, forwarded to a hub (the proxy copies the hub's stream) and in-process.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { callJson, connectStdioClient, killChildren, makeHubDirs, sha256Hex, startChildHub, startTestHub, waitUntil, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub;
const clients: Client[] = [];

async function http(): Promise<Client> {
  const client = new Client({ name: 'resources-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${hub.url}/mcp`)));
  clients.push(client);
  return client;
}

/** Collects resources/updated notifications a client receives. */
function updates(client: Client): string[] {
  const seen: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    seen.push(n.params.uri);
  });
  return seen;
}

const request = (to: string, cid: string) => ({
  type: 'task.request',
  status: 'open',
  stream: 'proj',
  room: 'core',
  from_agent: 'alice-cli',
  to_agent: to,
  correlation_id: cid,
  body: `goal for ${cid}`,
});

beforeAll(async () => {
  dirs = makeHubDirs('palace-resources-');
  hub = await startTestHub(dirs);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await hub.close();
  await killChildren();
  dirs.cleanup();
});

describe('resources over HTTP', () => {
  it('advertises resources with subscribe, prompts, completions and logging, and no listChanged anywhere', async () => {
    const client = await http();
    const caps = client.getServerCapabilities() ?? {};
    expect(caps.resources?.subscribe).toBe(true);
    expect(caps.prompts).toBeDefined();
    expect(caps.completions).toBeDefined();
    expect(caps.logging).toBeDefined();
    expect(JSON.stringify(caps)).not.toContain('listChanged');
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual(
      [
        'palace://artifact/{id}',
        'palace://drawer/{id}',
        'palace://event/{id}',
        'palace://inbox/{agent}',
        'palace://task/{correlation_id}',
        'palace://wake-up/{agent}',
      ].sort(),
    );
  });

  it('reads a task with its history, an event, an artifact with its sha256 and an inbox', async () => {
    const client = await http();
    const event = await callJson<{ id: string }>(client, 'palace_event_append', request('bob-cli', 'task_read_me'));
    const task = JSON.parse(
      ((await client.readResource({ uri: 'palace://task/task_read_me' })).contents[0] as { text: string }).text,
    ) as { task: { status: string; requester: string }; events: Array<{ id: string }> };
    expect(task.task).toMatchObject({ status: 'open', requester: 'alice-cli' });
    expect(task.events.map((e) => e.id)).toEqual([event.id]);

    const read = JSON.parse(((await client.readResource({ uri: `palace://event/${event.id}` })).contents[0] as { text: string }).text) as { id: string };
    expect(read.id).toBe(event.id);

    const content = 'diff --git a/x b/x\n+resource bytes\n';
    const put = await callJson<{ id: string; sha256: string }>(client, 'palace_artifact_put', { kind: 'patch', created_by: 'alice-cli', content });
    const art = (await client.readResource({ uri: `palace://artifact/${put.id}` })).contents[0] as { blob: string; _meta: Record<string, { sha256: string }> };
    expect(Buffer.from(art.blob, 'base64').toString('utf8')).toBe(content);
    expect(art._meta['palace/artifact']?.sha256).toBe(sha256Hex(content));

    const inbox = JSON.parse(((await client.readResource({ uri: 'palace://inbox/bob-cli' })).contents[0] as { text: string }).text) as {
      items: number;
      text: string;
      cursor: string;
    };
    expect(inbox.items).toBe(1);
    expect(inbox.text).toContain('task_read_me');
    // After the cursor, nothing is new until something arrives.
    const after = JSON.parse(
      ((await client.readResource({ uri: `palace://inbox/bob-cli?since_event_id=${inbox.cursor}` })).contents[0] as { text: string }).text,
    ) as { items: number };
    expect(after.items).toBe(0);

    const missing = await client.readResource({ uri: 'palace://event/evt_nope' }).then(
      () => undefined,
      (err: unknown) => err as { code: number; data?: { code: string } },
    );
    expect(missing?.code).toBe(-32002);
  });

  it('pushes resources/updated to an inbox subscriber when a task arrives, and to a task subscriber on its ack', async () => {
    const watcher = await http();
    const seen = updates(watcher);
    await watcher.subscribeResource({ uri: 'palace://inbox/carol-cli' });
    await watcher.subscribeResource({ uri: 'palace://task/task_for_carol' });
    const other = await http();
    const req = await callJson<{ id: string }>(other, 'palace_event_append', request('carol-cli', 'task_for_carol'));
    await waitUntil(() => seen.includes('palace://inbox/carol-cli') || undefined, 'the inbox notification', 5_000);
    expect(seen).toContain('palace://task/task_for_carol');
    // Something for another agent is not pushed to carol's inbox.
    seen.length = 0;
    await callJson(other, 'palace_event_append', request('dave-cli', 'task_for_dave'));
    await callJson(other, 'palace_event_ack', { event_id: req.id, from_agent: 'carol-cli', status: 'claimed' });
    await waitUntil(() => seen.includes('palace://task/task_for_carol') || undefined, 'the task notification', 5_000);
    expect(seen).not.toContain('palace://inbox/dave-cli');
    // An ack by carol herself is no inbox item for her.
    expect(seen).not.toContain('palace://inbox/carol-cli');
    await expect(watcher.subscribeResource({ uri: 'palace://event/evt_x' })).rejects.toThrow(/only task and inbox/);
  });

  it('lists the prompts and fills one in; completes agent names and task ids', async () => {
    const client = await http();
    await callJson(client, 'palace_event_append', request('erin-cli', 'task_complete_me'));
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(['delegate', 'file_decision', 'next_task', 'review_patch', 'wake_up']);
    const filled = await client.getPrompt({
      name: 'delegate',
      arguments: { goal: 'Fix the flaky test', definition_of_done: 'npm test passes 10 times', base_commit: 'abc123', recipient: 'erin-cli', from_agent: 'alice-cli' },
    });
    const text = (filled.messages[0]?.content as { text: string }).text;
    expect(text).toContain('correlation_id: task_fix_the_flaky_test');
    expect(text).toContain('to_agent: erin-cli');
    expect(text).toContain('abc123');
    const next = await client.getPrompt({ name: 'next_task', arguments: { agent: 'erin-cli' } });
    expect((next.messages[0]?.content as { text: string }).text).toContain('task_complete_me');

    const agents = await client.complete({ ref: { type: 'ref/prompt', name: 'delegate' }, argument: { name: 'recipient', value: 'eri' } });
    expect(agents.completion.values).toContain('erin-cli');
    const tasks = await client.complete({ ref: { type: 'ref/resource', uri: 'palace://task/{correlation_id}' }, argument: { name: 'correlation_id', value: 'task_comp' } });
    expect(tasks.completion.values).toEqual(['task_complete_me']);
  });

  it('sends log messages at the level set, with no secret in them', async () => {
    const client = await http();
    const messages: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      messages.push(n.params);
    });
    const secret = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
    await callJson(client, 'palace_event_list', {}); // no level set: nothing
    await client.setLoggingLevel('debug');
    await callJson(client, 'palace_event_list', {});
    await client.callTool({ name: 'palace_artifact_get', arguments: { artifact_id: secret } });
    await waitUntil(() => (messages.length >= 2 ? true : undefined), 'two log messages', 5_000);
    expect(messages).toContainEqual(expect.objectContaining({ level: 'debug', data: expect.objectContaining({ tool: 'palace_event_list' }) }));
    expect(messages).toContainEqual(expect.objectContaining({ level: 'warning', data: expect.objectContaining({ tool: 'palace_artifact_get' }) }));
    expect(JSON.stringify(messages)).not.toContain(secret);
  });
});

describe('resources over stdio', () => {
  it('pushes an inbox update in-process (no hub) and through the proxy from a hub, across a hub restart', async () => {
    const own = makeHubDirs('palace-resources-stdio-');
    try {
      const local = await connectStdioClient(own);
      clients.push(local.client);
      const seenLocal = updates(local.client);
      await local.client.subscribeResource({ uri: 'palace://inbox/frank-cli' });
      await callJson(local.client, 'palace_event_append', request('frank-cli', 'task_local'));
      await waitUntil(() => seenLocal.includes('palace://inbox/frank-cli') || undefined, 'the local inbox notification', 5_000);
      await local.client.close();

      const child = await startChildHub(own);
      const viaHub = await connectStdioClient(own);
      clients.push(viaHub.client);
      const seen = updates(viaHub.client);
      await viaHub.client.subscribeResource({ uri: 'palace://inbox/grace-cli' });
      const writer = new Client({ name: 'writer', version: '1.0.0' });
      await writer.connect(new StreamableHTTPClientTransport(new URL(`${child.url}/mcp`)));
      clients.push(writer);
      await callJson(writer, 'palace_event_append', request('grace-cli', 'task_forwarded'));
      await waitUntil(() => seen.includes('palace://inbox/grace-cli') || undefined, 'the forwarded inbox notification', 5_000);

      // The hub restarts: the proxy opens the stream on the new hub and subscribes again, unasked.
      await child.stop(5_000);
      const second = await startChildHub(own);
      const writer2 = new Client({ name: 'writer-2', version: '1.0.0' });
      await writer2.connect(new StreamableHTTPClientTransport(new URL(`${second.url}/mcp`)));
      clients.push(writer2);
      seen.length = 0;
      await waitUntil(
        async () => {
          await callJson(writer2, 'palace_event_append', request('grace-cli', `task_after_restart_${Date.now()}`));
          return seen.includes('palace://inbox/grace-cli') || undefined;
        },
        'the inbox notification after a hub restart',
        15_000,
        300,
      );
      await viaHub.client.close();
      await second.stop(5_000);
    } finally {
      own.cleanup();
    }
  }, 60_000);
});
