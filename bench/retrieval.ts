// The `retrieval` benchmark suite: recall@5, recall@10 and MRR@10 of memory search per mode (vector,
// text, hybrid) on the two labelled sets of bench/retrieval/ (this repository's code at a pinned
// commit; a written conversational corpus), with the bundled embedder. Each fusion method of
// bench/fusion-variants.ts is also scored on the same candidate lists (the options table of docs/retrieval.md).
// Mined palaces are cached per set + corpus + fingerprint of the mining and indexing code (PALACE_BENCH_RETRIEVAL_FRESH=1 re-mines).

import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { DEFAULT_FUSION, FUSION_METHODS, fuseScored, type FusionMethod } from './fusion-variants.js';
import { sanitizeQuery } from '../hub/src/core/sanitize-query.js';
import { demoteTestFiles } from '../hub/src/core/test-paths.js';
import { silentLogger } from '../hub/src/log.js';
import type { Embedder } from '../hub/src/embed/embedder.js';
import { createWorkerEmbedder, type WorkerEmbedder } from '../hub/src/embed/worker-embedder.js';
import { embeddingInput } from '../hub/src/memory/drawers/embedding-input.js';
import { Memory, projectPath } from '../hub/src/memory/drawers/memory.js';
import { readManifest } from '../hub/src/mine/manifest.js';
import { CANDIDATE_WINDOW } from '../hub/src/search/candidates.js';
import { mineSource } from '../hub/src/mine/miner.js';
import { minedProjectFiles } from '../hub/src/search/path-scan.js';
import { LanceDbVectorStore } from '../hub/src/vector/lancedb-vector-store.js';
import { benchConfig } from './bench-config.js';
import type { Figure, Suite, SuiteContext, SuiteResult } from './figure.js';
import {
  codeRelevant,
  convoRelevant,
  asBenchHit,
  fileReader,
  loadCodeSet,
  loadConvoSet,
  loadPackageSet,
  packageDir,
  packageSetFiles,
  SETS_DIR,
  sessionFiles,
  snapshot,
  type BenchHit,
  type PackageSet,
} from './retrieval-sets.js';
import { percentile } from './stats.js';

const MODES = ['vector', 'text', 'hybrid'] as const;
type Mode = (typeof MODES)[number];
const K = 10;
/** Candidates per list, as Memory.search takes them for any limit (search/candidates.ts). */
const POOL = CANDIDATE_WINDOW;
const DIST_HUB = fileURLToPath(new URL('../hub/src/', import.meta.url));

/** Scores of one ranking over a set: success@5, success@10 (any relevant hit) and MRR@10. */
export interface Scores {
  r5: number;
  r10: number;
  mrr: number;
}

/** Rank (1-based) of the first relevant hit in the top K, or 0. */
function firstRelevant(hits: readonly BenchHit[], relevant: (h: BenchHit) => boolean): number {
  const i = hits.slice(0, K).findIndex(relevant);
  return i < 0 ? 0 : i + 1;
}

function scoresOf(ranks: readonly number[]): Scores {
  const n = ranks.length;
  return {
    r5: ranks.filter((r) => r > 0 && r <= 5).length / n,
    r10: ranks.filter((r) => r > 0 && r <= K).length / n,
    mrr: ranks.reduce((a, r) => a + (r > 0 ? 1 / r : 0), 0) / n,
  };
}

function walkAll(dir: string, out: string[]): void {
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walkAll(full, out);
    else out.push(full);
  }
}

function walkJs(dir: string, out: string[]): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walkJs(full, out);
    else if (name.endsWith('.js')) out.push(full);
  }
}

/**
 * Hash of the code that decides what a mine stores and how it is indexed: the miner, any chunker, the
 * LanceDB store, the derived keyword texts (core/search-keywords) and the embedding input.
 */
function chunkerFingerprint(): string {
  const files: string[] = [];
  walkJs(join(DIST_HUB, 'mine'), files);
  const all: string[] = [];
  walkJs(DIST_HUB, all);
  files.push(...all.filter((f) => /chunk|lancedb-vector-store|search-keywords|embedding-input/.test(f.slice(DIST_HUB.length)) && !files.includes(f)));
  const h = createHash('sha256');
  for (const f of files) h.update(f.slice(DIST_HUB.length)).update(readFileSync(f));
  return h.digest('hex').slice(0, 12);
}

interface Corpus {
  set: string;
  root: string;
  palace: string;
  cached: boolean;
}

/** File in a cached palace's folder: the fingerprint of the embedding-input code it was embedded with. */
const EMBEDDING_INPUT_MARKER = 'embedding-input';

function embeddingInputFingerprint(): string {
  return createHash('sha256')
    .update(readFileSync(join(DIST_HUB, 'memory', 'drawers', 'embedding-input.js')))
    .digest('hex')
    .slice(0, 12);
}

/**
 * The embedder a mine uses: the bundled one, except that a document text whose embedding input an
 * older cached palace of the same set and model already embedded gets that stored vector back (the
 * vector is a pure function of the input text, so the mine's result is the same as with a fresh
 * embedding; only palaces marked as embedded by the same embedding-input code count); a chunker change that leaves the embedding inputs alone re-mines in minutes, not an hour
 * on a loaded machine). Misses go to the embedder.
 */
async function reusingEmbedder(set: string, except: string, embedder: WorkerEmbedder): Promise<{ embedder: Embedder; reused: () => number }> {
  const base = join(tmpdir(), 'palace-bench-retrieval');
  const known = new Map<string, Float32Array>();
  const { dimensions } = embedder.info();
  const input = embeddingInputFingerprint();
  for (const d of existsSync(base) ? readdirSync(base) : []) {
    const dir = join(base, d);
    if (!d.startsWith(`${set}-`) || dir === except || !existsSync(join(dir, 'ready'))) continue;
    // Only a palace embedded from inputs made by this same embedding-input code: its stored vectors
    // are keyed here by the input this code makes of each row.
    const marker = join(dir, EMBEDDING_INPUT_MARKER);
    if (!existsSync(marker) || readFileSync(marker, 'utf8').trim() !== input) continue;
    const store = await LanceDbVectorStore.open({ palacePath: join(dir, 'palace'), dimensions, log: silentLogger }).catch(() => undefined);
    if (!store) continue;
    try {
      for (const row of await store.scan({}, { withVectors: true })) if (row.vector && row.vector.length === dimensions) known.set(embeddingInput(row.content, row.metadata), row.vector);
    } finally {
      await store.close();
    }
  }
  let reused = 0;
  const wrapped: Embedder = {
    info: () => embedder.info(),
    close: () => Promise.resolve(),
    workers: () => embedder.workers(),
    warm: () => embedder.warm(),
    async embed(texts, kind) {
      if (kind !== 'document' || known.size === 0) return embedder.embed(texts, kind);
      const missing = texts.filter((t) => !known.has(t));
      const fresh = missing.length > 0 ? await embedder.embed(missing, kind) : [];
      let at = 0;
      return texts.map((t) => {
        const v = known.get(t);
        if (v) {
          reused++;
          return v;
        }
        return fresh[at++] ?? new Float32Array(dimensions);
      });
    },
  };
  return { embedder: wrapped, reused: () => reused };
}

/** The mined palace of a set, reused when the set's corpus and the chunker are unchanged. */
async function minedCorpus(
  set: string,
  corpusKey: string,
  fill: (root: string) => void,
  embedder: WorkerEmbedder,
  ctx: SuiteContext,
): Promise<Corpus> {
  const model = embedder.info();
  const key = createHash('sha256').update([set, corpusKey, chunkerFingerprint(), model.model, String(model.dimensions)].join('\0')).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), 'palace-bench-retrieval', `${set}-${key}`);
  const root = join(dir, set);
  const palace = join(dir, 'palace');
  const ready = join(dir, 'ready');
  if (existsSync(ready) && !benchConfig().retrievalFresh) return { set, root, palace, cached: true };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  fill(root);
  const reusing = await reusingEmbedder(set, dir, embedder);
  const store = await LanceDbVectorStore.open({ palacePath: palace, dimensions: model.dimensions, log: silentLogger });
  const memory = new Memory({ store, embedder: reusing.embedder });
  try {
    const t0 = performance.now();
    const report = await mineSource(async () => memory, palace, { path: root, mode: set === 'convos' ? 'convos' : 'projects' }, {
      step: (fn) => fn(),
      progress: (p) => {
        if (p.files_done % 50 === 0) ctx.progress(`${set}: mined ${p.files_done}/${p.files_total} files`);
      },
    });
    ctx.progress(
      `${set}: mined ${report.files_mined} files into ${report.drawers_filed} drawers in ${((performance.now() - t0) / 1000).toFixed(0)} s (${reusing.reused()} vectors reused from an older cached palace)`,
    );
  } finally {
    await store.close();
  }
  writeFileSync(join(dir, EMBEDDING_INPUT_MARKER), embeddingInputFingerprint());
  writeFileSync(ready, new Date().toISOString());
  return { set, root, palace, cached: false };
}

interface SetRun {
  set: string;
  questions: number;
  drawers: number;
  modes: Record<Mode, Scores>;
  methods: Record<FusionMethod, Scores>;
  hybridMs: number[];
  textMs: number[];
  fuseMs: number[];
}

async function runSet(
  corpus: Corpus,
  questions: ReadonlyArray<{ question: string; relevant: (h: BenchHit) => boolean }>,
  embedder: WorkerEmbedder,
): Promise<SetRun> {
  const store = await LanceDbVectorStore.open({ palacePath: corpus.palace, dimensions: embedder.info().dimensions, log: silentLogger });
  // As the hub opens memory: the path scan reads the palace's mined-files manifest.
  const memory = new Memory({ store, embedder, minedFiles: () => minedProjectFiles(readManifest(corpus.palace)) });
  try {
    const ranks: Record<Mode, number[]> = { vector: [], text: [], hybrid: [] };
    const methodRanks = Object.fromEntries(FUSION_METHODS.map((m) => [m, [] as number[]])) as Record<FusionMethod, number[]>;
    const hybridMs: number[] = [];
    const textMs: number[] = [];
    const fuseMs: number[] = [];
    for (const q of questions) {
      for (const mode of MODES) {
        const t0 = performance.now();
        const { results } = await memory.search({ query: q.question, mode, limit: K });
        const ms = performance.now() - t0;
        if (mode === 'hybrid') hybridMs.push(ms);
        if (mode === 'text') textMs.push(ms);
        ranks[mode].push(firstRelevant(results as BenchHit[], q.relevant));
      }
      const { query } = sanitizeQuery(q.question);
      const [vector] = await embedder.embed([query], 'query');
      const vectorHits = vector ? await store.search(vector, {}, POOL) : [];
      const textHits = await store.fullText(query, {}, POOL).catch(() => []);
      const lists = {
        vector: vectorHits.map((h) => ({ item: h.drawer, score: 1 - h.distance })),
        text: textHits.map((h) => ({ item: h.drawer, score: h.score })),
      };
      for (const method of FUSION_METHODS) {
        const t0 = performance.now();
        // As Memory.search ranks: the test-file prior after fusion (core/test-paths.ts).
        const fused = demoteTestFiles(fuseScored(lists, (d) => d.id, (d) => d.useful, method, POOL), query, projectPath).slice(0, K);
        fuseMs.push(performance.now() - t0);
        methodRanks[method].push(firstRelevant(fused.map((f) => asBenchHit(f.item)), q.relevant));
      }
    }
    return {
      set: corpus.set,
      questions: questions.length,
      drawers: await store.count(),
      modes: { vector: scoresOf(ranks.vector), text: scoresOf(ranks.text), hybrid: scoresOf(ranks.hybrid) },
      methods: Object.fromEntries(FUSION_METHODS.map((m) => [m, scoresOf(methodRanks[m])])) as Record<FusionMethod, Scores>,
      hybridMs,
      textMs,
      fuseMs,
    };
  } finally {
    await store.close();
  }
}

function figuresOf(run: SetRun): Figure[] {
  const out: Figure[] = [];
  const better = (metric: keyof Scores): { value: number; mode: Mode } =>
    run.modes.vector[metric] >= run.modes.text[metric] ? { value: run.modes.vector[metric], mode: 'vector' } : { value: run.modes.text[metric], mode: 'text' };
  for (const [metric, label] of [
    ['r5', 'recall@5'],
    ['r10', 'recall@10'],
    ['mrr', 'MRR@10'],
  ] as const) {
    for (const mode of MODES) {
      const figure: Figure = { name: `${run.set}: ${mode} ${label}`, value: run.modes[mode][metric], unit: 'fraction' };
      if (mode === 'hybrid') {
        const b = better(metric);
        figure.reference = { value: b.value, label: `its better half (${b.mode}), same questions`, measured: true };
        figure.target = { op: '>=', value: b.value, note: 'hybrid at least its better half on recall@5, recall@10 and MRR (issues 19, 32)' };
      }
      if (mode === 'hybrid' && metric === 'r5' && run.set !== 'convos') figure.target = { op: '>=', value: Math.max(0.8, better(metric).value) };
      out.push(figure);
    }
  }
  return out;
}

function fmt(s: Scores): string {
  return `R@5 ${s.r5.toFixed(3)}, R@10 ${s.r10.toFixed(3)}, MRR ${s.mrr.toFixed(3)}`;
}

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const code = loadCodeSet();
  const convos = loadConvoSet();
  const packageSets = packageSetFiles().map((f) => loadPackageSet(f));
  const embedder = await createWorkerEmbedder({ provider: 'bundled' }, { idleMs: 0 });
  try {
    const sessionsDir = join(SETS_DIR, convos.sessions);
    const sessionHash = createHash('sha256');
    for (const f of sessionFiles(sessionsDir)) sessionHash.update(f.slice(sessionsDir.length)).update(readFileSync(f));
    ctx.progress('code set: snapshot and mine (cached when unchanged)');
    const codeCorpus = await minedCorpus('code', code.commit, (root) => snapshot(code.commit, root), embedder, ctx);
    ctx.progress('conversation set: mine (cached when unchanged)');
    const convoCorpus = await minedCorpus('convos', sessionHash.digest('hex'), (root) => cpSync(sessionsDir, root, { recursive: true }), embedder, ctx);
    const read = fileReader(codeCorpus.root);
    ctx.progress(`code set: ${code.questions.length} questions x 3 modes`);
    const codeRun = await runSet(
      codeCorpus,
      code.questions.map((q) => ({ question: q.question, relevant: (h: BenchHit) => codeRelevant(h, codeCorpus.root, q.truth, read) })),
      embedder,
    );
    const packageRuns: Array<{ run: SetRun; set: PackageSet; cached: boolean }> = [];
    for (const set of packageSets) {
      const dir = packageDir(set);
      const files: string[] = [];
      walkAll(dir, files);
      const h = createHash('sha256').update(`${set.package}@${set.version}`);
      for (const f of files) h.update(f.slice(dir.length)).update(readFileSync(f));
      ctx.progress(`${set.name} set: copy ${set.package}@${set.version} and mine (cached when unchanged)`);
      const corpus = await minedCorpus(set.name, h.digest('hex'), (root) => cpSync(dir, root, { recursive: true }), embedder, ctx);
      const readPkg = fileReader(corpus.root);
      ctx.progress(`${set.name} set: ${set.questions.length} questions x 3 modes`);
      const run = await runSet(
        corpus,
        set.questions.map((q) => ({ question: q.question, relevant: (h: BenchHit) => codeRelevant(h, corpus.root, q.truth, readPkg) })),
        embedder,
      );
      packageRuns.push({ run, set, cached: corpus.cached });
    }
    ctx.progress(`conversation set: ${convos.questions.length} questions x 3 modes`);
    const convoRun = await runSet(
      convoCorpus,
      convos.questions.map((q) => ({ question: q.question, relevant: (h: BenchHit) => convoRelevant(h, q.truth) })),
      embedder,
    );
    const allRuns = [codeRun, ...packageRuns.map((p) => p.run), convoRun];
    const latency = allRuns.flatMap((r) => r.hybridMs);
    const textLatency = allRuns.flatMap((r) => r.textMs);
    const info = embedder.info();
    return {
      figures: [
        ...figuresOf(codeRun),
        ...packageRuns.flatMap((p) => figuresOf(p.run)),
        ...figuresOf(convoRun),
        {
          name: `hybrid search p50 (${latency.length} searches, query embedding included)`,
          value: percentile(latency, 50),
          unit: 'ms',
          reference: { value: percentile(textLatency, 50), label: 'text-only search p50, same queries (no embedding)', measured: true },
        },
        { name: 'fusion alone p50 (two lists of 40)', value: percentile(allRuns.flatMap((r) => r.fuseMs), 50), unit: 'ms' },
      ],
      notes: [
        `Code set: ${codeRun.questions} questions over this repository at commit ${code.commit} (${codeRun.drawers} drawers${codeCorpus.cached ? ', cached palace' : ''}); conversation set: ${convoRun.questions} questions over ${sessionFiles(sessionsDir).length} sessions (${convoRun.drawers} drawers${convoCorpus.cached ? ', cached palace' : ''}). Format and relevance: bench/retrieval/README.md.`,
        ...packageRuns.map(
          (p) => `${p.set.name} set: ${p.run.questions} questions over the installed package ${p.set.package}@${p.set.version} (${p.run.drawers} drawers${p.cached ? ', cached palace' : ''}), written before any tuning (issue 32).`,
        ),
        `Bundled embedder (${info.model}, ${info.dimensions}-d), embedded LanceDB; top ${K} per search; recall@k = share of questions with a relevant hit in the top k; MRR over the top ${K}.`,
        `Hybrid search rescores the union of its candidates (vector, keyword and names lists, 40 each) on both cosine and BM25 (search/rescore.ts, issue 32); the fusion options below (\`${DEFAULT_FUSION}\` was the default before) fuse the two lists only. Why, and the variants tried: docs/retrieval.md.`,
        'Code chunks carry enrichment (issue 32): the signatures and doc comments of their definitions, as the `doc` BM25 field; query expansion (PMI from the palace) is on, implied definitions off, measured in docs/retrieval.md. Search figures are noisy on a loaded machine; recall figures are not.',
        'The fusion options other than the default are bench-only (bench/fusion-variants.ts); each is scored with the test-file prior only, not the ranking rules, so its line for `headroom-mnz` differs from hybrid above.',
        ...FUSION_METHODS.map(
          (m) =>
            `Fusion option \`${m}\` on the same candidates (${POOL} per list): code ${fmt(codeRun.methods[m])}; ${packageRuns.map((p) => `${p.set.name} ${fmt(p.run.methods[m])}; `).join('')}conversations ${fmt(convoRun.methods[m])}.`,
        ),
      ],
    };
  } finally {
    await embedder.close();
  }
}

export const retrievalSuite: Suite = { name: 'retrieval', title: 'Retrieval quality (labelled sets)', run };
