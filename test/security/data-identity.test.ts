// Agent identity on memory writes, through a real hub and the official MCP SDK client: the spec's
// `created_by` is recorded (MemPalace's `added_by` stays an alias), two fields naming different
// agents are refused, and an identity field a tool does not record is refused rather than dropped.
// Nothing is written by a refused call.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { callJson, connectHttpClient, makeHubDirs, resultJson, startTestHub, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub;
let client: Client;

beforeAll(async () => {
  dirs = makeHubDirs('palace-identity-');
  hub = await startTestHub(dirs);
  client = await connectHttpClient(hub.url);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await hub?.close();
  dirs?.cleanup();
});

async function refused(name: string, args: Record<string, unknown>): Promise<{ code: string; field?: string; message: string }> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBe(true);
  return resultJson<{ error: { code: string; field?: string; message: string } }>(result).error;
}

async function drawersIn(wing: string): Promise<number> {
  const { wings } = await callJson<{ wings: Record<string, number> }>(client, 'palace_list_wings');
  return wings[wing] ?? 0;
}

describe('created_by on memory writes', () => {
  it('palace_add_drawer records created_by, and added_by as its alias', async () => {
    const a = await callJson<{ drawer_id: string }>(client, 'palace_add_drawer', {
      wing: 'ident',
      room: 'spec',
      content: 'Filed with the spec field created_by.',
      created_by: 'box-claude',
    });
    expect((await callJson<{ added_by: string }>(client, 'palace_get_drawer', { drawer_id: a.drawer_id })).added_by).toBe('box-claude');
    const b = await callJson<{ drawer_id: string }>(client, 'palace_add_drawer', {
      wing: 'ident',
      room: 'alias',
      content: 'Filed with the alias added_by.',
      added_by: 'box-codex',
    });
    expect((await callJson<{ added_by: string }>(client, 'palace_get_drawer', { drawer_id: b.drawer_id })).added_by).toBe('box-codex');
    // Both naming the same agent is one identity.
    const c = await callJson<{ drawer_id: string }>(client, 'palace_add_drawer', {
      wing: 'ident',
      room: 'both',
      content: 'Filed with both fields agreeing.',
      created_by: 'box-claude',
      added_by: 'box-claude',
    });
    expect((await callJson<{ added_by: string }>(client, 'palace_get_drawer', { drawer_id: c.drawer_id })).added_by).toBe('box-claude');
  }, 30_000);

  it('refuses conflicting identities and foreign identity fields, and files nothing', async () => {
    const before = await drawersIn('refused');
    const conflict = await refused('palace_add_drawer', {
      wing: 'refused',
      room: 'r',
      content: 'Two names for one writer.',
      created_by: 'box-claude',
      added_by: 'box-codex',
    });
    expect(conflict.code).toBe('input.invalid');
    expect(conflict.message).toMatch(/created_by.*added_by|different agents/);
    const foreign = await refused('palace_add_drawer', { wing: 'refused', room: 'r', content: 'An unknown identity field.', agent: 'box-claude' });
    expect(foreign).toMatchObject({ code: 'input.invalid', field: 'agent' });
    expect(foreign.message).toMatch(/created_by/);
    expect(await drawersIn('refused')).toBe(before);

    // A memory write that records no identity refuses one instead of dropping it.
    const room = await refused('palace_rooms_add', { wing: 'refused', room: 'declared', created_by: 'box-claude' });
    expect(room).toMatchObject({ code: 'input.invalid', field: 'created_by' });
    const rooms = await callJson<{ rooms: Array<{ room: string }> }>(client, 'palace_rooms_list', { wing: 'refused' });
    expect(rooms.rooms.map((r) => r.room)).not.toContain('declared');
  }, 30_000);

  it('diary, checkpoint and kg_add take created_by too', async () => {
    const diary = await callJson<{ agent: string }>(client, 'palace_diary_write', { created_by: 'box-gemini', entry: 'Diary by created_by.' });
    expect(diary.agent).toBe('box-gemini');
    const diaryConflict = await refused('palace_diary_write', { agent_name: 'box-gemini', created_by: 'box-claude', entry: 'Which one?' });
    expect(diaryConflict.code).toBe('input.invalid');

    const cp = await callJson<{ added: Array<{ drawer_id: string }> }>(client, 'palace_checkpoint', {
      items: [{ wing: 'ident', room: 'checkpoint', content: 'A checkpoint item filed with created_by.' }],
      created_by: 'box-cursor',
    });
    const id = cp.added[0]?.drawer_id;
    expect(id).toBeDefined();
    expect((await callJson<{ added_by: string }>(client, 'palace_get_drawer', { drawer_id: id })).added_by).toBe('box-cursor');

    await callJson(client, 'palace_kg_add', { subject: 'alice', predicate: 'works_on', object: 'palace', created_by: 'box-claude' });
    const facts = await callJson<{ facts: Array<{ added_by: string | null; object: string }> }>(client, 'palace_kg_query', { entity: 'alice' });
    expect(facts.facts.find((f) => f.object === 'palace')?.added_by).toBe('box-claude');
  }, 30_000);
});
