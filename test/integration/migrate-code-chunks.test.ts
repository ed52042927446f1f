// `palace migrate` on a palace mined before code-aware chunking (issue 19): its project drawers (the
// old ~800-character windows, no rel_path) are re-chunked when the file is unchanged on disk; a
// changed or vanished file is left alone and counted. Real CLI, real LanceDB, the bundled embedder.

import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { chunkText } from '../../hub/src/core/chunk.js';
import { createBundledEmbedder } from '../../hub/src/embed/bundled-embedder.js';
import { writeEmbedderRecord } from '../../hub/src/embed/select.js';
import { silentLogger } from '../../hub/src/log.js';
import { Memory, type SearchHit } from '../../hub/src/memory/drawers/memory.js';
import type { MigrateReport } from '../../hub/src/migrate/store-versions.js';
import type { MineReport } from '../../hub/src/mine/miner.js';
import { commitManifest, type MinedFileEntry } from '../../hub/src/mine/manifest.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';
import { REPO_ROOT, makeTempPalace, parseJson, type CliResult, type TempPalace } from '../helpers/cli.js';

const SLOW = { timeout: 180_000 };
const APP = join(REPO_ROOT, 'test', 'fixtures', 'koa-app', 'koa', 'lib', 'application.js');

function ok(result: CliResult): CliResult {
  if (result.code !== 0) throw new Error(`exit ${String(result.code)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

async function withStore<T>(palace: TempPalace, fn: (store: LanceDbVectorStore) => Promise<T>): Promise<T> {
  const store = await LanceDbVectorStore.open({ palacePath: palace.dir, dimensions: 512, log: silentLogger });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

describe('palace migrate re-chunks drawers mined before code-aware chunking', SLOW, () => {
  let palace: TempPalace;
  let project: string;
  const files = (): { app: string; changed: string; gone: string } => ({
    app: join(project, 'lib', 'application.js'),
    changed: join(project, 'lib', 'changed.js'),
    gone: join(project, 'lib', 'gone.js'),
  });

  beforeAll(async () => {
    palace = makeTempPalace('palace-migrate-chunks-');
    project = join(palace.root, 'proj');
    mkdirSync(join(project, 'lib'), { recursive: true });
    const f = files();
    cpSync(APP, f.app);
    writeFileSync(f.changed, 'function before () {\n  return 1\n}\n');
    writeFileSync(f.gone, 'function gone () {\n  return 2\n}\n');
    // File the three files as the previous build did: character windows, lines but no rel_path.
    const embedder = await createBundledEmbedder();
    const store = await LanceDbVectorStore.open({ palacePath: palace.dir, dimensions: 512, log: silentLogger });
    const memory = new Memory({ store, embedder });
    const manifest = new Map<string, MinedFileEntry>();
    try {
      for (const file of Object.values(f)) {
        const bytes = readFileSync(file);
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        const chunks = chunkText(bytes.toString('utf8'));
        await memory.fileSources([
          {
            source_file: file,
            wing: 'proj',
            room: 'lib',
            tags: [],
            added_by: 'palace-mine',
            metadata: { mode: 'projects', source_sha256: sha256 },
            chunks,
            vectors: await memory.embedDocuments(chunks.map((c) => c.text)),
            replace: false,
          },
        ]);
        const stat = statSync(file);
        manifest.set(file, { mtime_ms: stat.mtimeMs, size: stat.size, sha256, wing: 'proj', room: 'lib', mode: 'projects', root: project, drawers: chunks.length, mined_at: '2026-01-01T00:00:00Z' });
      }
      commitManifest(palace.dir, manifest);
      writeEmbedderRecord(palace.dir, embedder.info());
    } finally {
      await memory.close();
    }
    writeFileSync(f.changed, 'function after () {\n  return 3\n}\n');
    rmSync(f.gone);
  });
  afterAll(async () => palace.cleanup());

  it('a dry run counts the old files and changes nothing', async () => {
    const r = parseJson<MigrateReport>(ok(await palace.run(['migrate', '--dry-run', '--json'])));
    expect(r.code_chunks).toMatchObject({ files_old: 3, files_rechunked: 1, files_changed: 1, files_gone: 1, drawers_filed: 0 });
    expect(r.stores.find((s) => s.store === 'code_chunks')?.pending).toBe(true);
    const rows = await withStore(palace, (s) => s.scan({ source_file: files().app }));
    expect(rows.every((d) => d.metadata.rel_path === undefined)).toBe(true);
    // `palace mine` would re-chunk the unchanged file too: the manifest says an older chunker cut it.
    const mine = parseJson<MineReport>(ok(await palace.run(['mine', project, '--wing', 'proj', '--dry-run', '--json'])));
    expect(mine.files?.map((f) => f.file).sort()).toEqual([files().app, files().changed].sort());
  });

  it('re-chunks the unchanged file (line ranges, symbols, relative path) and leaves the others', async () => {
    const r = parseJson<MigrateReport>(ok(await palace.run(['migrate', '--json'])));
    expect(r.code_chunks).toMatchObject({ files_old: 3, files_rechunked: 1, files_changed: 1, files_gone: 1 });
    expect(r.actions.join('\n')).toMatch(/changed since they were mined/);
    const f = files();
    const app = await withStore(palace, (s) => s.scan({ source_file: f.app }));
    expect(app.length).toBeGreaterThan(0);
    for (const d of app) {
      expect(d).toMatchObject({ wing: 'proj', room: 'lib' });
      expect(d.metadata).toMatchObject({ rel_path: 'lib/application.js', language: 'javascript' });
      expect(typeof d.metadata.line_start).toBe('number');
    }
    expect(app.some((d) => (d.metadata.symbols as string[] | undefined)?.includes('Application.listen'))).toBe(true);
    // The file's text is whole again from its chunks, in order.
    expect(app.sort((a, b) => a.chunk_index - b.chunk_index).map((d) => d.content).join('')).toBe(readFileSync(f.app, 'utf8'));
    // The changed and the vanished file keep their old drawers.
    for (const file of [f.changed, f.gone]) {
      const old = await withStore(palace, (s) => s.scan({ source_file: file }));
      expect(old).toHaveLength(1);
      expect(old[0]?.metadata.rel_path).toBeUndefined();
    }
    const hits = parseJson<{ results: SearchHit[] }>(ok(await palace.run(['search', 'http.createServer listen', '--json']))).results;
    expect(hits[0]?.location).toMatchObject({ path: 'lib/application.js' });

    // Run again: nothing left to re-chunk.
    const again = parseJson<MigrateReport>(ok(await palace.run(['migrate', '--json'])));
    expect(again.code_chunks).toMatchObject({ files_old: 2, files_rechunked: 0 });
    expect(again.stores.find((s) => s.store === 'code_chunks')?.pending).toBe(false);
    // And `palace mine` now has only the changed file to re-chunk.
    const mine = parseJson<MineReport>(ok(await palace.run(['mine', project, '--wing', 'proj', '--dry-run', '--json'])));
    expect(mine.files?.map((x) => x.file)).toEqual([f.changed]);
  });
});
