// Wake-up after mining a code project (#19): it names the wings and rooms with their sizes, the open
// tasks, the latest decision and diary entry, and never quotes a fragment of the mined code.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { callJson, connectHttpClient, makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';

const CODE: Record<string, string> = {
  'src/app.ts': 'export function createServer(port: number) {\n  const app = new Koa();\n  app.use(router.routes());\n  return app.listen(port);\n}\n',
  'src/router.ts': 'export const router = new Router();\nrouter.get("/health", (ctx) => {\n  ctx.body = "ok";\n});\n',
  'lib/compose.js': 'function compose(stack) {\n  return function (ctx, next) {\n    let index = -1;\n    return dispatch(0);\n  };\n}\nmodule.exports = compose;\n',
  'lib/util.py': 'def retry(fn, times=3):\n    for attempt in range(times):\n        try:\n            return fn()\n        except Exception:\n            pass\n',
  // Boilerplate that must never take a wake-up line (issue 32), even rated useful.
  LICENSE: 'MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy of this software.\n',
  'README.md': '[![npm](https://img.shields.io/npm/v/koala.svg)](https://npm.im/koala)\n[![ci](https://github.com/k/koala/workflows/ci/badge.svg)](https://github.com/k/koala/actions)\n',
};

let dirs: HubDirs;
let hub: Hub;
let client: Client;
let project: string;

beforeAll(async () => {
  dirs = makeHubDirs('palace-wakeup-');
  project = join(dirs.root, 'koala');
  for (const [file, text] of Object.entries(CODE)) {
    mkdirSync(join(project, file, '..'), { recursive: true });
    writeFileSync(join(project, file), text);
  }
  hub = await startTestHub(dirs);
  client = await connectHttpClient(hub.url, { name: 'wakeup-test' });
  const mined = await callJson<{ wing: string; drawers_filed: number }>(client, 'palace_mine', { source: project }, 120_000);
  expect(mined.drawers_filed).toBeGreaterThanOrEqual(4);
}, 120_000);

afterAll(async () => {
  await client.close();
  await hub.close();
  dirs.cleanup();
});

describe('wake-up after mining', () => {
  it('names the rooms, tasks, decisions and diary and quotes no code', async () => {
    await callJson(client, 'palace_add_drawer', { wing: 'koala', room: 'decisions', content: 'We keep the router flat: one file per resource, no nested routers.', added_by: 'box-claude' });
    await callJson(client, 'palace_diary_write', { agent_name: 'box-claude', entry: 'Mined koala today; the compose helper is the heart of it.' });
    await callJson(client, 'palace_event_append', { type: 'task.request', stream: 'project/koala', room: 'coordination', from_agent: 'box-claude', to_agent: 'box-codex', correlation_id: 'koala-tests', status: 'open', body: 'add tests for compose' });
    // Rated useful: a code drawer is named by path and lines, never quoted.
    const hits = await callJson<{ results: Array<{ drawer_id: string; source_file: string | null }> }>(client, 'palace_search', { query: 'compose dispatch stack', wing: 'koala', limit: 5 });
    const code = hits.results.find((h) => h.source_file?.endsWith('compose.js'));
    expect(code).toBeDefined();
    await callJson(client, 'palace_rate_memory', { drawer_id: code?.drawer_id, useful: true });
    for (const query of ['Permission is hereby granted free of charge', 'npm version badge ci workflow']) {
      const found = await callJson<{ results: Array<{ drawer_id: string; source_file: string | null }> }>(client, 'palace_search', { query, wing: 'koala', limit: 10 });
      const boiler = found.results.find((h) => /(LICENSE|README\.md)$/.test(h.source_file ?? ''));
      expect(boiler, query).toBeDefined();
      await callJson(client, 'palace_rate_memory', { drawer_id: boiler?.drawer_id, useful: true });
    }

    const w = await callJson<{ text: string; palace: string[]; open_tasks: string[]; recent: string[]; l1: string }>(client, 'palace_wakeup', {});
    // No line of any mined file appears in the wake-up text.
    const codeLines = Object.values(CODE)
      .flatMap((t) => t.split('\n'))
      .map((l) => l.trim())
      .filter((l) => l.length > 3);
    for (const line of codeLines) expect(w.text, `quoted code: ${line}`).not.toContain(line);
    // The wings and rooms with their sizes.
    expect(w.text).toMatch(/koala \(\d+\): .*src \d+/);
    expect(w.text).toMatch(/lib \d+/);
    expect(w.text).toMatch(/decisions 1/);
    expect(w.text).toContain('koala-tests open: requested by box-claude, for box-codex, not claimed yet');
    // Licence and badge text never earns a line, though rated useful.
    expect(w.text).not.toContain('Permission is hereby granted');
    expect(w.text).not.toContain('shields.io');
    expect(w.l1).not.toMatch(/LICENSE|README\.md/);
    expect(w.text).toContain('We keep the router flat');
    expect(w.text).toContain('the compose helper is the heart of it');
    // The rated code drawer appears as a reference with its lines.
    expect(w.l1).toMatch(new RegExp(`lib/compose\\.js:\\d+-\\d+ \\(code\\) \\(${code?.drawer_id ?? 'x'}\\)`));
    expect(w.text.length).toBeLessThanOrEqual(1_200 + 1_400 + 2_400 + 200);
  }, 60_000);
});
