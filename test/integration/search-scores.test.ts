// Search scores through a real hub (in-process, real HTTP port, bundled embedder, LanceDB) and the
// official MCP SDK client, and through `palace search --json` (a real CLI process): in every mode each
// hit has one fused score that never increases down the list, and its score_components; hits found by
// full text alone are scored too (issue 19).

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { SearchHit } from '../../hub/src/memory/drawers/memory.js';
import type { Hub } from '../../hub/src/server.js';
import { makeTempPalace, type TempPalace } from '../helpers/cli.js';
import { callJson, connectHttpClient, makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';

const DRAWERS = [
  'The release checklist lives in RELEASING.md; tag with vX.Y.Z and push the tag to trigger the build.',
  'Retry the webhook delivery three times with exponential backoff before giving up (see retryWebhookDelivery).',
  'Staging is restored from the nightly production snapshot every Monday morning.',
  'The frontend dev server listens on port 5173; the API proxy points at localhost:8080.',
  'We chose LanceDB as the embedded vector store because it needs no separate server.',
  'Alice prefers tabs over spaces and 100-character lines in TypeScript.',
  'On-call rotates every Wednesday at 10:00 UTC; the handover note goes in #ops.',
  'The billing service signs every webhook payload with HMAC-SHA256 and a shared secret name.',
  'flushQueueToDisk() writes pending events with fsync before acknowledging the producer.',
  'Customer tickets are triaged in Zendesk and escalated to Linear for engineering.',
];

const QUERIES = [
  'how often do we retry a failed webhook?',
  'retryWebhookDelivery',
  'which vector database did we pick and why',
  'flushQueueToDisk fsync',
  'who is on call and when does it change',
];

function expectReadableScores(results: readonly SearchHit[], where: string): void {
  results.forEach((h, i) => {
    expect(typeof h.score, `${where} #${i + 1}`).toBe('number');
    // 0 is a real score: a candidate no better than the pool's floor on every list.
    expect(h.score).toBeGreaterThanOrEqual(0);
    expect(h.score).toBeLessThanOrEqual(1.1);
    if (i === 0) expect(h.score).toBeGreaterThan(0);
    if (i > 0) expect(h.score, `${where} #${i + 1}`).toBeLessThanOrEqual(results[i - 1]?.score ?? Infinity);
    expect(Object.keys(h.score_components).sort()).toEqual(['text', 'vector']);
    expect(h.score_components.vector === null).toBe(!h.matched.includes('vector'));
    expect(h.score_components.text === null).toBe(!h.matched.includes('text'));
  });
}

describe('search scores (real hub, bundled embedder)', () => {
  let dirs: HubDirs;
  let hub: Hub;
  let client: Client;

  beforeAll(async () => {
    dirs = makeHubDirs();
    hub = await startTestHub(dirs);
    client = await connectHttpClient(hub.url);
    for (const content of DRAWERS) await callJson(client, 'palace_add_drawer', { wing: 'proj', room: 'notes', content, added_by: 'test' }, 60_000);
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await hub?.close();
    dirs?.cleanup();
  });

  for (const mode of ['hybrid', 'vector', 'text'] as const) {
    it(`${mode}: every hit has a score that never increases down the list, with its components`, async () => {
      let seen = 0;
      for (const query of QUERIES) {
        const { results } = await callJson<{ results: SearchHit[] }>(client, 'palace_search', { query, mode, limit: 10 }, 60_000);
        seen += results.length;
        expectReadableScores(results, `${mode} '${query}'`);
        for (const h of results) {
          if (mode === 'vector') expect(h.score_components.text).toBeNull();
          if (mode === 'text') expect(h.score_components.vector).toBeNull();
        }
      }
      expect(seen).toBeGreaterThan(0);
    }, 120_000);
  }

  it('a hit found by full text alone has a score and a similarity', async () => {
    const { results } = await callJson<{ results: SearchHit[] }>(client, 'palace_search', { query: 'flushQueueToDisk', mode: 'hybrid', limit: 10 }, 60_000);
    const hit = results.find((h) => h.content.startsWith('flushQueueToDisk'));
    expect(hit, 'the keyword hit is found').toBeDefined();
    expect(hit?.score).toBeGreaterThan(0);
    expect(hit?.score_components.text).not.toBeNull();
    expect(typeof hit?.similarity).toBe('number');
    const textOnly = results.filter((h) => h.matched.length === 1 && h.matched[0] === 'text');
    for (const h of textOnly) {
      expect(h.score).toBeGreaterThan(0);
      expect(typeof h.similarity).toBe('number');
    }
  }, 60_000);
});

describe('palace search --json (a CLI process on the palace)', () => {
  let palace: TempPalace;

  beforeAll(async () => {
    palace = makeTempPalace('palace-cli-scores-');
    for (const content of DRAWERS.slice(0, 3)) {
      const added = await palace.run(['drawer', 'add', '--wing', 'proj', '--room', 'notes', '--content', content]);
      expect(added.code, added.stderr).toBe(0);
    }
  }, 180_000);

  afterAll(async () => {
    await palace?.cleanup();
  });

  it('prints each hit with its score and score_components, scores never increasing', async () => {
    for (const mode of ['hybrid', 'text'] as const) {
      const out = await palace.run(['search', 'retry the webhook delivery', '--mode', mode, '--limit', '6', '--json']);
      expect(out.code, out.stderr).toBe(0);
      const { results } = JSON.parse(out.stdout) as { results: SearchHit[] };
      expect(results.length).toBeGreaterThan(0);
      expectReadableScores(results, `cli ${mode}`);
    }
  }, 120_000);
});
