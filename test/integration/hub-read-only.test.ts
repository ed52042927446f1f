// A read-only hub (--read-only) over real MCP: mutating tools are hidden from tools/list and refused
// when called anyway, while list, wait, artifact_get and status keep working on the same log.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { LogEvent, WaitResult } from '../../hub/src/core/types.js';
import { Logstream } from '../../hub/src/logstream/logstream.js';
import type { Hub } from '../../hub/src/server.js';
import { callJson, connectHttpClient, makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';
import { toolError } from '../helpers/stdio-client.js';

const MUTATING = ['palace_event_append', 'palace_event_ack', 'palace_artifact_put', 'palace_patch_submit'];
const KEPT = ['palace_event_list', 'palace_event_wait', 'palace_artifact_get', 'palace_status'];

let dirs: HubDirs;
let hub: Hub;
let client: Client;
let seeded: { event: LogEvent; artifactId: string };

beforeEach(async () => {
  dirs = makeHubDirs();
  // Seed the log directly before the read-only hub opens it.
  const log = Logstream.open(dirs.palace);
  try {
    const artifact = log.putArtifact({ kind: 'note', created_by: 'box-claude', content: 'remember this\n' });
    const event = await log.append({
      type: 'status',
      stream: 'project/demo',
      room: 'status',
      from_agent: 'box-claude',
      to_agent: '*',
      artifact_ids: [artifact.id],
    });
    seeded = { event, artifactId: artifact.id };
  } finally {
    log.close();
  }
  hub = await startTestHub(dirs, { readOnly: true });
  client = await connectHttpClient(hub.url, { name: 'read-only-probe' });
});

afterEach(async () => {
  await client.close();
  await hub.close();
  dirs.cleanup();
});

describe('read-only hub', () => {
  it('hides the mutating tools and keeps the reading ones', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const name of MUTATING) expect(names).not.toContain(name);
    for (const name of KEPT) expect(names).toContain(name);
  });

  it('refuses a hidden mutating tool with a hub.read_only tool error and appends nothing', async () => {
    const before = hub.services.logstream.store.countEvents();
    const calls: [string, Record<string, unknown>][] = [
      ['palace_event_append', { type: 'status', stream: 's', room: 'r', from_agent: 'intruder' }],
      ['palace_event_ack', { event_id: seeded.event.id, from_agent: 'intruder', status: 'claimed' }],
      ['palace_artifact_put', { kind: 'note', created_by: 'intruder', content: 'x' }],
      ['palace_patch_submit', { content: 'diff\n', from_agent: 'intruder' }],
    ];
    for (const [name, args] of calls) {
      // The one error shape (issue 33): an isError result, never a JSON-RPC error (-32001 is the SDK's timeout).
      const error = toolError(await client.callTool({ name, arguments: args }));
      expect(error.code, name).toBe('hub.read_only');
      expect(error.message).toMatch(/read-only/);
    }
    expect(hub.services.logstream.store.countEvents()).toBe(before);
    const page = await callJson<{ events: LogEvent[] }>(client, 'palace_event_list', {});
    expect(page.events.map((e) => e.id)).toEqual([seeded.event.id]);
  });

  it('still lists, waits, fetches artifacts and reports status', async () => {
    const page = await callJson<{ events: LogEvent[] }>(client, 'palace_event_list', { to_agent: 'anyone' });
    expect(page.events).toEqual([seeded.event]);
    const waited = await callJson<WaitResult>(client, 'palace_event_wait', {
      since_event_id: seeded.event.id,
      timeout_ms: 100,
    });
    expect(waited).toMatchObject({ timed_out: true, events: [] });
    const artifact = await callJson<{ content: string }>(client, 'palace_artifact_get', {
      artifact_id: seeded.artifactId,
    });
    expect(artifact.content).toBe('remember this\n');
    const status = await callJson<{ read_only: boolean; role: string; writer: { mode: string } }>(
      client,
      'palace_status',
    );
    expect(status).toMatchObject({ read_only: true, role: 'hub', writer: { mode: 'read_only' } });
  });
});
