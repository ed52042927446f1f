// Offline lab for the retrieval bench (not a suite): scores search plans (candidate sources and
// ranking rules, search/candidates.ts) on the palaces the `retrieval` suite mined and cached, with
// each question's embedding computed once. Usage, after a `npm run bench -- retrieval` run:
//   node dist/bench/retrieval-lab.js [plan ...]   (plans: see PLANS; default all)
// Prints R@5 / R@10 / MRR@10 per set and plan, and writes the per-question ranks to
// $TMPDIR/palace-bench-retrieval/lab.json for reading the misses.

import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createWorkerEmbedder } from '../hub/src/embed/worker-embedder.js';
import { sanitizeQuery } from '../hub/src/core/sanitize-query.js';
import { silentLogger } from '../hub/src/log.js';
import { projectPath, sourceDrawerId } from '../hub/src/memory/drawers/memory.js';
import { readManifest } from '../hub/src/mine/manifest.js';
import { TermAssociations } from '../hub/src/search/expand.js';
import { rankedSearch, SEARCH_DEFAULTS, type SearchMode, type SearchPlan } from '../hub/src/search/candidates.js';
import { minedProjectFiles } from '../hub/src/search/path-scan.js';
import { LanceDbVectorStore } from '../hub/src/vector/lancedb-vector-store.js';
import { asBenchHit, codeRelevant, convoRelevant, fileReader, loadCodeSet, loadConvoSet, loadPackageSet, packageSetFiles, type BenchHit } from './retrieval-sets.js';

const K = 10;

export const PLANS: Record<string, Partial<SearchPlan>> = {
  base: { pathBoost: false, headerOnly: false, boilerplate: false, definition: false, implied: false, expand: false, rescore: false },
  // The defaults before the third round (fused with CombMNZ, no names list, no expansion).
  fused: { rescore: false, names: false, expand: false },
  rescore: { names: false, expand: false },
  names: { names: true },
  path: { path: true },
  'names+path': { names: true, path: true },
  boilerplate: { boilerplate: true },
  definition: { definition: true },
  decay: { fileDecay: true },
  pathBoost: { pathBoost: true },
  header: { headerOnly: true },
  'pathBoost+header': { pathBoost: true, headerOnly: true },
  'pathBoost+header+boiler+def': { pathBoost: true, headerOnly: true, boilerplate: true, definition: true },
  'names+pathBoost': { names: true, pathBoost: true },
  'names+boiler+def': { names: true, boilerplate: true, definition: true },
  all: { names: true, path: true, boilerplate: true, definition: true, fileDecay: true },
  chosen: {},
  'chosen+expand': { expand: true },
  'chosen+implied': { implied: true },
  'chosen+expand+implied': { expand: true, implied: true },
  'names+expand': { names: true, expand: true },
  'names+implied': { names: true, implied: true },
  'names+expand+implied': { names: true, expand: true, implied: true },
  'names-pathBoost': { names: true, pathBoost: false },
  'names+expand-pathBoost': { names: true, expand: true, pathBoost: false },
  'names+path+expand': { names: true, path: true, expand: true },
};

/** The newest cached palace of a set (its folder holds `<set>/` and `palace/`); LAB_OLDER=n: the n-th older one. */
function cached(set: string): string | undefined {
  const base = join(tmpdir(), 'palace-bench-retrieval');
  if (!existsSync(base)) return undefined;
  return readdirSync(base)
    .filter((d) => d.startsWith(`${set}-`) && existsSync(join(base, d, 'ready')))
    .map((d) => join(base, d))
    .sort((a, b) => statSync(join(b, 'ready')).mtimeMs - statSync(join(a, 'ready')).mtimeMs)[Number(process.env.LAB_OLDER ?? 0)];
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const plans = Object.entries(PLANS).filter(([name]) => wanted.length === 0 || wanted.includes(name));
  const code = loadCodeSet();
  const convos = loadConvoSet();
  const sets: Array<{ name: string; questions: Array<{ id: string; question: string; truth?: string; relevant: (root: string, read: (p: string) => string | undefined) => (h: BenchHit) => boolean }> }> = [
    { name: 'code', questions: code.questions.map((q) => ({ id: q.id, question: q.question, truth: q.truth.map((t) => `${t.path}:${t.lines.join('-')}`).join(' '), relevant: (root, read) => (h) => codeRelevant(h, root, q.truth, read) })) },
    ...packageSetFiles().map((f) => {
      const s = loadPackageSet(f);
      return { name: s.name, questions: s.questions.map((q) => ({ id: q.id, question: q.question, truth: q.truth.map((t) => `${t.path}:${t.lines.join('-')}`).join(' '), relevant: (root: string, read: (p: string) => string | undefined) => (h: BenchHit) => codeRelevant(h, root, q.truth, read) })) };
    }),
    { name: 'convos', questions: convos.questions.map((q) => ({ id: q.id, question: q.question, truth: q.truth.join(' '), relevant: () => (h: BenchHit) => convoRelevant(h, q.truth) })) },
  ];
  const embedder = await createWorkerEmbedder({ provider: 'bundled' }, { idleMs: 0 });
  const out: Record<string, Record<string, Record<string, number>>> = {};
  try {
    for (const set of sets) {
      // LAB_SETS=code,convos: only those sets (LAB_DUMP reads misses one by one: keep the validation set out).
      if (process.env.LAB_SETS && !process.env.LAB_SETS.split(',').includes(set.name)) continue;
      const dir = cached(set.name);
      if (!dir) {
        console.log(`${set.name}: no cached palace (run npm run bench -- retrieval first)`);
        continue;
      }
      const root = join(dir, set.name);
      const palace = join(dir, 'palace');
      const read = fileReader(root);
      const store = await LanceDbVectorStore.open({ palacePath: palace, dimensions: embedder.info().dimensions, log: silentLogger });
      const associations = TermAssociations.build(await store.scan({}));
      const sources = { store, minedFiles: () => minedProjectFiles(readManifest(palace)), relPath: projectPath, chunkId: sourceDrawerId, associations: () => associations };
      console.log(`${set.name}: ${dir} (${associations.units} code chunks in the term associations)`);
      try {
        const queries = set.questions.map((q) => sanitizeQuery(q.question).query);
        const vectors = await embedder.embed(queries, 'query');
        const runs: Array<[string, Partial<SearchPlan>, SearchMode]> = [
          ['vector', {}, 'vector'],
          ['text', {}, 'text'],
          ...plans.map(([name, plan]): [string, Partial<SearchPlan>, SearchMode] => [name, plan, 'hybrid']),
        ];
        for (const [name, plan, mode] of runs) {
          const ranks: Record<string, number> = {};
          let ms = 0;
          for (let i = 0; i < set.questions.length; i++) {
            const q = set.questions[i];
            if (!q) continue;
            const t0 = performance.now();
            const { hits } = await rankedSearch(sources, { query: queries[i] ?? '', filter: {}, limit: K, mode, vector: vectors[i] }, { ...SEARCH_DEFAULTS, ...plan });
            ms += performance.now() - t0;
            const rel = q.relevant(root, read);
            const at = hits.slice(0, K).findIndex((h) => rel(asBenchHit(h.item)));
            ranks[q.id] = at < 0 ? 0 : at + 1;
          }
          const r = Object.values(ranks);
          const n = r.length;
          const f = (x: number): string => x.toFixed(3);
          console.log(
            `${set.name.padEnd(7)} ${name.padEnd(12)} R@5 ${f(r.filter((x) => x > 0 && x <= 5).length / n)}  R@10 ${f(r.filter((x) => x > 0).length / n)}  MRR ${f(r.reduce((a, x) => a + (x > 0 ? 1 / x : 0), 0) / n)}  (${(ms / n).toFixed(1)} ms/q)`,
          );
          (out[set.name] ??= {})[name] = ranks;
          if (process.env.LAB_DUMP === name) {
            for (let i = 0; i < set.questions.length; i++) {
              const q = set.questions[i];
              if (!q || ((ranks[q.id] ?? 0) > 0 && (ranks[q.id] ?? 0) <= 5)) continue;
              const { hits } = await rankedSearch(sources, { query: queries[i] ?? '', filter: {}, limit: K, mode, vector: vectors[i] }, { ...SEARCH_DEFAULTS, ...plan });
              const files = sources.minedFiles();
              const { pathScan } = await import('../hub/src/search/path-scan.js');
              const { analyzeQuery } = await import('../hub/src/search/query.js');
              const a = analyzeQuery(queries[i] ?? '');
              const scan = pathScan(files, a.stems, 5).map((m) => `${m.file.rel_path}(${m.score.toFixed(1)}:${m.matched.join(',')})`);
              const exp = associations.expand(a.stems).map((e) => `${e.from}->${e.word}(${e.pmi.toFixed(1)})`);
              console.log(`\n${q.id} rank ${ranks[q.id]} ${q.question}\n  truth: ${q.truth ?? ''}\n  stems: ${a.stems.join(' ')}\n  expansion: ${exp.join(' ')}\n  path scan: ${scan.join('  ')}`);
              for (const h of hits.slice(0, 5))
                console.log(`  ${h.score.toFixed(3)} ${projectPath(h.item) ?? h.item.source_file} ${String(h.item.metadata.line_start)}-${String(h.item.metadata.line_end)} [${Object.keys(h.ranks).join(',')}] ${(Array.isArray(h.item.metadata.symbols) ? h.item.metadata.symbols.join(',') : '').slice(0, 60)}`);
            }
          }
        }
      } finally {
        await store.close();
      }
    }
  } finally {
    await embedder.close();
  }
  writeFileSync(join(tmpdir(), 'palace-bench-retrieval', 'lab.json'), JSON.stringify(out, null, 1));
}

await main();
