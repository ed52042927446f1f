// Memory through a real hub (in-process, real HTTP port) with the official MCP SDK client: filing
// and paraphrase search, the memory tools in tools/list, palace_status with memory counts, the
// read-only hub, and a long palace_event_wait that never holds up a search or a memory write.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LogEvent, WaitResult } from '../../hub/src/core/types.js';
import type { AddDrawerResult, DrawerView, SearchHit } from '../../hub/src/memory/drawers/memory.js';
import type { Hub } from '../../hub/src/server.js';
import {
  callJson,
  connectHttpClient,
  makeHubDirs,
  resultJson,
  startTestHub,
  type HubDirs,
} from '../helpers/hub.js';
import { toolError } from '../helpers/stdio-client.js';

const MEMORY_READS = [
  'palace_search',
  'palace_get_drawer',
  'palace_check_duplicate',
  'palace_list_wings',
  'palace_list_tags',
  'palace_status',
];
const MEMORY_WRITES = [
  'palace_add_drawer',
  'palace_update_drawer',
  'palace_delete_drawer',
  'palace_rate_memory',
];

interface SearchResult {
  query: string;
  sanitized_query?: string;
  results: SearchHit[];
}

interface StatusResult {
  role: string;
  read_only: boolean;
  memory: {
    loaded: boolean;
    drawers?: number;
    wings?: number;
    rooms?: number;
    backend?: string;
    embedder?: { provider: string; model: string; dimensions: number; device: string };
    embedder_record?: unknown;
    hint?: string;
  };
}

const DECISION =
  'We chose LanceDB as the embedded vector store because it runs in-process and needs no separate server.';
const OTHERS = [
  'The CI pipeline runs on GitHub Actions with a matrix of Node 20 and Node 22.',
  'Alice prefers tabs over spaces and wants 100-character lines in TypeScript files.',
  'The team lunch is on Fridays at the Italian place around the corner.',
  'Release builds are signed with the Apple Developer ID certificate stored in the keychain.',
];

describe('memory tools on a live hub', () => {
  let dirs: HubDirs;
  let hub: Hub;
  let agent: Client;
  let other: Client;

  beforeAll(async () => {
    dirs = makeHubDirs('palace-memhub-');
    hub = await startTestHub(dirs);
    agent = await connectHttpClient(hub.url, { name: 'box-claude' });
    other = await connectHttpClient(hub.url, { name: 'box-codex' });
  });

  afterAll(async () => {
    await agent?.close();
    await other?.close();
    await hub?.close();
    dirs?.cleanup();
  });

  it('lists every memory tool with its schema', async () => {
    const tools = (await agent.listTools()).tools;
    const names = tools.map((t) => t.name);
    for (const name of [...MEMORY_READS, ...MEMORY_WRITES]) expect(names).toContain(name);
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('palace_add_drawer')?.inputSchema.required).toEqual(
      expect.arrayContaining(['wing', 'room', 'content']),
    );
    expect(byName.get('palace_search')?.inputSchema.required).toEqual(['query']);
    expect(byName.get('palace_rate_memory')?.inputSchema.properties?.useful).toMatchObject({
      type: 'boolean',
    });
    expect(byName.get('palace_search')?.annotations?.readOnlyHint).toBe(true);
    expect(byName.get('palace_add_drawer')?.annotations?.readOnlyHint).toBe(false);
  });

  it('reports memory as not loaded before first use, without loading it', async () => {
    const status = await callJson<StatusResult>(agent, 'palace_status');
    expect(status.memory).toMatchObject({ loaded: false, embedder_record: null });
    expect(hub.services.memory.isOpen()).toBe(false);
  });

  it('files a drawer and finds it again by a paraphrase', async () => {
    for (const content of OTHERS)
      expect(
        (await callJson<AddDrawerResult>(other, 'palace_add_drawer', { wing: 'acme', room: 'misc', content }))
          .filed,
      ).toBe(true);
    const added = await callJson<AddDrawerResult>(agent, 'palace_add_drawer', {
      wing: 'acme',
      room: 'architecture',
      content: DECISION,
      tags: ['adr'],
      added_by: 'box-claude',
    });
    expect(added).toMatchObject({ filed: true, wing: 'acme', room: 'architecture' });
    expect(added.drawer_id).toMatch(/^drawer_[0-9a-f]{24}$/);

    // The first searches of a hub arrive together: each gets both the vector and the keyword leg.
    const [found, ...keyword] = await Promise.all([
      callJson<SearchResult>(other, 'palace_search', {
        query: 'which vector database did we pick for local storage?',
      }),
      callJson<SearchResult>(agent, 'palace_search', { query: 'LanceDB' }),
      callJson<SearchResult>(other, 'palace_search', { query: 'LanceDB in-process' }),
      callJson<SearchResult>(agent, 'palace_search', { query: 'LanceDB server' }),
    ]);
    for (const k of keyword) {
      expect(k.results[0]?.drawer_id).toBe(added.drawer_id);
      expect(k.results[0]?.matched).toContain('text');
    }
    expect(found?.results[0]).toMatchObject({
      drawer_id: added.drawer_id,
      content: DECISION,
      wing: 'acme',
      room: 'architecture',
      added_by: 'box-claude',
    });

    const drawer = await callJson<DrawerView>(other, 'palace_get_drawer', { drawer_id: added.drawer_id });
    expect(drawer).toMatchObject({ content: DECISION, tags: ['adr'], embedder: 'use-lite-en/512' });
  });

  it('reports counts and the embedder in palace_status with include_memory', async () => {
    const status = await callJson<StatusResult>(agent, 'palace_status', { include_memory: true });
    expect(status.role).toBe('hub');
    expect(status.memory).toMatchObject({
      loaded: true,
      drawers: OTHERS.length + 1,
      wings: 1,
      rooms: 2,
      backend: 'lancedb',
      embedder: { provider: 'bundled', model: 'use-lite-en', dimensions: 512 },
    });
    expect(typeof status.memory.embedder?.device).toBe('string');
  });

  it('serves rating, duplicate checks, wings and tags, and reports refusals as isError results', async () => {
    const dup = await callJson<{ is_duplicate: boolean; matches: Array<{ drawer_id: string }> }>(
      agent,
      'palace_check_duplicate',
      { content: DECISION },
    );
    expect(dup.is_duplicate).toBe(true);
    const id = dup.matches[0]?.drawer_id ?? '';
    expect(await callJson(agent, 'palace_rate_memory', { drawer_id: id, useful: false })).toEqual({
      drawer_id: id,
      useful: false,
    });
    expect((await callJson<DrawerView>(agent, 'palace_get_drawer', { drawer_id: id })).useful).toBe(false);
    expect(await callJson(agent, 'palace_list_wings')).toEqual({ wings: { acme: OTHERS.length + 1 } });
    expect(await callJson(agent, 'palace_list_tags', { wing: 'acme' })).toEqual({ tags: { adr: 1 } });

    const again = await callJson<AddDrawerResult>(agent, 'palace_add_drawer', {
      wing: 'acme',
      room: 'copies',
      content: DECISION,
    });
    expect(again).toMatchObject({ filed: false, duplicate_of: id });

    const secret = await agent.callTool({
      name: 'palace_add_drawer',
      arguments: { wing: 'acme', room: 'ops', content: `deploy key ${'AKIA'}${'IOSFODNN7EXAMPLE'}` },
    });
    expect(secret.isError).toBe(true);
    expect(resultJson(secret)).toMatchObject({ error: { code: 'memory.secret_refused', field: 'content' } });
    const missing = await agent.callTool({
      name: 'palace_get_drawer',
      arguments: { drawer_id: 'drawer_000000000000000000000000' },
    });
    expect(missing.isError).toBe(true);
    expect(resultJson(missing)).toMatchObject({ error: { code: 'memory.not_found' } });
    expect(
      (await callJson<StatusResult>(agent, 'palace_status', { include_memory: true })).memory.drawers,
    ).toBe(OTHERS.length + 1);
  });

  it('files concurrent writes from several agents through the writer path, each exactly once', async () => {
    const notes = [
      'The mobile app uses React Native with Expo for over-the-air updates.',
      'Payroll runs on the last business day of each month.',
      'The office wifi password rotates quarterly; ask IT at the front desk.',
      'Kubernetes manifests live in the infra repository under deploy/k8s.',
      'The data team publishes the metrics dashboard every Tuesday morning.',
    ];
    const results = await Promise.all(
      notes.map((content, i) =>
        callJson<AddDrawerResult>(i % 2 === 0 ? agent : other, 'palace_add_drawer', {
          wing: 'concurrent',
          room: 'notes',
          content,
        }),
      ),
    );
    expect(results.every((r) => r.filed)).toBe(true);
    expect(new Set(results.map((r) => r.drawer_id)).size).toBe(notes.length);
    expect(await callJson(agent, 'palace_list_wings')).toMatchObject({ wings: { concurrent: notes.length } });
  });

  it('answers palace_search and files drawers while a long palace_event_wait is pending', async () => {
    const cursor = await callJson<LogEvent>(agent, 'palace_event_append', {
      type: 'status',
      stream: 'project/demo',
      room: 'status',
      from_agent: 'box-claude',
    });
    let waitSettled = false;
    const wait = callJson<WaitResult>(
      agent,
      'palace_event_wait',
      { to_agent: 'box-claude', type: 'task.request', since_event_id: cursor.id, timeout_ms: 120_000 },
      130_000,
    ).finally(() => {
      waitSettled = true;
    });

    // Both run to completion on another client while the wait is still open.
    const found = await callJson<SearchResult>(other, 'palace_search', {
      query: 'who decides about indentation and line length?',
    });
    expect(found.results.length).toBeGreaterThan(0);
    expect(waitSettled).toBe(false);
    const filed = await callJson<AddDrawerResult>(other, 'palace_add_drawer', {
      wing: 'acme',
      room: 'misc',
      content: 'The staging cluster is rebuilt from scratch every Sunday night.',
    });
    expect(filed.filed).toBe(true);
    // The same client that is waiting can search too.
    expect(
      (await callJson<SearchResult>(agent, 'palace_search', { query: 'when is staging rebuilt?' })).results[0]
        ?.drawer_id,
    ).toBe(filed.drawer_id);
    expect(waitSettled).toBe(false);

    // End the wait with the event it is waiting for.
    const request = await callJson<LogEvent>(other, 'palace_event_append', {
      type: 'task.request',
      stream: 'project/demo',
      room: 'delegation',
      from_agent: 'box-codex',
      to_agent: 'box-claude',
      body: 'please review',
    });
    const woke = await wait;
    expect(woke.timed_out).toBeFalsy();
    expect(woke.events.map((e) => e.id)).toEqual([request.id]);
  });
});

describe('memory tools on a read-only hub', () => {
  let dirs: HubDirs;
  let hub: Hub;
  let client: Client;

  beforeAll(async () => {
    dirs = makeHubDirs('palace-memhub-ro-');
    hub = await startTestHub(dirs, { readOnly: true });
    client = await connectHttpClient(hub.url, { name: 'read-only-probe' });
  });

  afterAll(async () => {
    await client?.close();
    await hub?.close();
    dirs?.cleanup();
  });

  it('hides palace_add_drawer and the other memory writes, and keeps the recall tools', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const name of MEMORY_WRITES) expect(names).not.toContain(name);
    for (const name of MEMORY_READS) expect(names).toContain(name);
  });

  it('refuses palace_add_drawer when called anyway, and files nothing', async () => {
    // The one error shape (issue 33): an isError result with hub.read_only, never a JSON-RPC error.
    const error = toolError(
      await client.callTool({
        name: 'palace_add_drawer',
        arguments: { wing: 'w', room: 'r', content: 'should not be filed' },
      }),
    );
    expect(error.code).toBe('hub.read_only');
    expect(error.message).toMatch(/read-only/);
    const search = await callJson<SearchResult>(client, 'palace_search', { query: 'should not be filed' });
    expect(search.results).toEqual([]);
    const status = await callJson<StatusResult>(client, 'palace_status', { include_memory: true });
    expect(status).toMatchObject({ read_only: true, memory: { loaded: true, drawers: 0 } });
  });
});
