// Candidate generation and fusion for memory search. Every list is asked for a fixed window of
// candidates (CANDIDATE_WINDOW), whatever the limit, and fused on that window alone, so the top k at
// limit k are the first k at any larger limit (the CLI, MCP and the dashboard ask for different
// limits and show one order). A limit above the window takes further candidates of the vector and
// keyword lists after the fused ones, in rank order, with score 0.
//
// Hybrid search rescores (search/rescore.ts): the lists only choose the candidates; each candidate
// of their union is scored on its cosine and its BM25 (asked of the index by id when the keyword list
// did not return it), so a list that missed a drawer no longer counts as 0 for it. `vector` and `text`
// modes (one list) keep the headroom scaling of core/fusion.ts.
//
// Lists (each optional, measured alone and together in docs/retrieval.md):
//  - vector: cosine similarity of the query's embedding;
//  - text: BM25 over content and the derived fields (symbols, path words, identifier parts, file comment,
//    definition signatures and doc comments), optionally with expansion words (search/expand.ts);
//  - names: BM25 over the names alone (the symbols a chunk defines, its path's words): a definition
//    and path scan that the content's words cannot drown;
//  - path: mined files whose path words meet the query's stems (path-scan.ts), each with its chunks
//    that best hold the query's words.

import { fuseScored, HEADROOM_MNZ, type FusedHit } from '../core/fusion.js';
import { demoteTestFiles, TEST_FILE_FACTOR } from '../core/test-paths.js';
import { fullTextScores, type DrawerFilter, type StoredDrawer, type VectorStore } from '../vector/vector-store.js';
import { EXPANSION_WEIGHT, type Expander, type Expansion } from './expand.js';
import { pathScan, type MinedFile, type PathMatch } from './path-scan.js';
import { analyzeQuery, identifierParts, stem, stemsMeet, type QueryAnalysis } from './query.js';
import { applyRankRules, type RankRules } from './rank.js';
import { rescorePool, type PoolCandidate } from './rescore.js';

/** Candidates per list, for any limit: the pool palace_search used for its default limit of 10. */
export const CANDIDATE_WINDOW = 40;
/**
 * The test-file prior on rescored hits (search/rescore.ts): the score there is exp(z), so x0.5 is
 * ln 2 ≈ 0.7 standard deviations of the two features; a test file that repeats every word of the
 * code it tests can stand about one above it (test/integration/mine-search-priors.test.ts), so its
 * factor is x0.25 (1.4 sd). On the three bench sets x0.5 and x0.25 give the same recall
 * (docs/retrieval.md, third round).
 */
const RESCORED_TEST_FILE_FACTOR = 0.25;
/** Files the path scan takes, and chunks per file. */
const PATH_FILES = 5;
const PATH_CHUNKS_PER_FILE = 3;
/** Files the path-keyword rule looks at (the best matches; the rest get no boost). */
const PATH_BOOST_FILES = 20;
/** Chunks of one file read for the path scan at most. */
const PATH_MAX_CHUNKS = 200;

export type SearchMode = 'hybrid' | 'vector' | 'text';

/** Which candidate sources and ranking rules run (the bench measures each; search uses SEARCH_DEFAULTS). */
export interface SearchPlan extends RankRules {
  names: boolean;
  path: boolean;
  /** Path-keyword match as a ranking rule: a hit's score x(1 + its file's path-scan score / the best file's) / 2. */
  pathBoost: boolean;
  testPrior: boolean;
  /** Query expansion: identifier words associated with the query's words in the palace's own code (search/expand.ts). */
  expand: boolean;
  /**
   * Hybrid: score every candidate of the union on both features (cosine and BM25, search/rescore.ts)
   * instead of fusing the lists with 0 for a list that missed a drawer (CombMNZ).
   */
  rescore: boolean;
}

export const SEARCH_DEFAULTS: Readonly<SearchPlan> = {
  // Measured in docs/retrieval.md (issue 32). Fused with CombMNZ, the names and path lists and the file
  // decay lowered both code sets; rescored (every candidate scored on both features, third round) the
  // names list and query expansion raise both code sets and leave the conversations unchanged. The
  // path-keyword rule raised both; the header rule raised the own set's R@10; boilerplate and
  // definition rules change nothing on the three sets (none asks by identifier or meets a licence).
  names: true,
  path: false,
  pathBoost: true,
  testPrior: true,
  headerOnly: true,
  boilerplate: true,
  definition: true,
  implied: false,
  fileDecay: false,
  expand: true,
  rescore: true,
};

export interface CandidateSources {
  store: Pick<VectorStore, 'search' | 'fullText' | 'fullTextScores' | 'scan'>;
  /** The mined project files (for the path scan); none when unknown. */
  minedFiles?: () => readonly MinedFile[];
  /** A drawer's path in its mined project (undefined for other drawers). */
  relPath: (d: StoredDrawer) => string | undefined;
  /** The id of chunk `index` of a mined file. */
  chunkId: (sourceFile: string, index: number) => string;
  /** Term associations of the palace's code, when built (query expansion). */
  associations?: () => Expander | undefined;
}

export interface RankedSearch {
  analysis: QueryAnalysis;
  /** The words query expansion added to the keyword list (none when it did not run). */
  expansion: Expansion[];
  hits: FusedHit<StoredDrawer>[];
  /** Cosine similarity of the vector list's hits. */
  similarity: Map<string, number>;
}

function matchesFilter(d: StoredDrawer, filter: DrawerFilter): boolean {
  if (filter.wing !== undefined && d.wing !== filter.wing) return false;
  if (filter.room !== undefined && d.room !== filter.room) return false;
  if (filter.source_file !== undefined && d.source_file !== filter.source_file) return false;
  if (filter.parent_id !== undefined && d.parent_id !== filter.parent_id) return false;
  if (filter.ids !== undefined && !filter.ids.includes(d.id)) return false;
  if (filter.tags !== undefined && filter.tags.length > 0 && !filter.tags.some((t) => d.tags.includes(t))) return false;
  return true;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

/** Distinct stems of a text's words (identifiers split). */
function stemsOf(text: string): Set<string> {
  const out = new Set<string>();
  for (const word of text.match(/[\p{L}\p{N}_$]+/gu) ?? []) for (const part of identifierParts(word)) if (part.length >= 2) out.add(stem(part));
  return out;
}

/** The path list: chunks of the files whose path meets the query, file by file, each file's chunks by how many query stems they hold (then cosine). */
async function pathList(
  sources: CandidateSources,
  analysis: QueryAnalysis,
  filter: DrawerFilter,
  vector: Float32Array | undefined,
): Promise<Array<{ item: StoredDrawer; score: number }>> {
  const files = sources.minedFiles?.() ?? [];
  const matches = pathScan(files, analysis.stems, PATH_FILES);
  if (matches.length === 0) return [];
  const ids = matches.flatMap((m) => Array.from({ length: Math.min(m.file.drawers, PATH_MAX_CHUNKS) }, (_, i) => sources.chunkId(m.file.source_file, i)));
  const rows = (await sources.store.scan({ ids }, { withVectors: vector !== undefined })).filter((d) => matchesFilter(d, filter));
  const out: Array<{ item: StoredDrawer; score: number }> = [];
  for (const m of matches) {
    const chunks = rows
      .filter((d) => d.source_file === m.file.source_file)
      .map((d) => {
        const words = stemsOf(`${d.content} ${Array.isArray(d.metadata.symbols) ? d.metadata.symbols.join(' ') : ''}`);
        let held = 0;
        for (const q of new Set(analysis.stems)) if ([...words].some((w) => stemsMeet(q, w))) held++;
        const cos = vector && d.vector?.length === vector.length ? dot(vector, d.vector) : 0;
        return { d, local: held + Math.max(0, cos) };
      })
      .sort((a, b) => b.local - a.local || a.d.chunk_index - b.d.chunk_index)
      .slice(0, PATH_CHUNKS_PER_FILE);
    const best = chunks[0]?.local ?? 0;
    // The file's weight first; its chunks ordered within it by their share of its best chunk.
    for (const c of chunks) out.push({ item: c.d, score: m.score * (best > 0 ? 0.5 + 0.5 * (c.local / best) : 0.5) });
  }
  return out.sort((a, b) => b.score - a.score);
}

/**
 * The ranked candidates of a search: the lists, fused on their window (headroom-mnz), the extra
 * candidates a limit above the window needs, then the test-file prior and the ranking rules.
 */
export async function rankedSearch(
  sources: CandidateSources,
  request: { query: string; filter: DrawerFilter; limit: number; mode: SearchMode; vector: Float32Array | undefined },
  plan: Readonly<SearchPlan> = SEARCH_DEFAULTS,
): Promise<RankedSearch> {
  const { query, filter, limit, mode, vector } = request;
  const analysis = analyzeQuery(query);
  const expansion = plan.expand && mode !== 'vector' ? (sources.associations?.()?.expand(analysis.stems) ?? []) : [];
  const textOptions = expansion.length > 0 ? { expansion: { words: expansion.map((e) => e.word), weight: EXPANSION_WEIGHT } } : {};
  // Always the same window, whatever the limit: a store's top 40 need not be the first 40 of its top 60
  // (an ANN index refines more candidates for a larger k), so a larger limit never changes the window.
  const rescoring = plan.rescore && mode === 'hybrid' && vector !== undefined;
  const vectorP = vector && mode !== 'text' ? sources.store.search(vector, filter, CANDIDATE_WINDOW) : Promise.resolve([]);
  const namesP =
    plan.names && mode === 'hybrid' && analysis.terms.length > 0
      ? sources.store.fullText(analysis.terms.join(' '), filter, CANDIDATE_WINDOW, { fields: 'names' }).catch(() => [])
      : Promise.resolve([]);
  const pathP = plan.path && mode === 'hybrid' ? pathList(sources, analysis, filter, vector) : Promise.resolve([]);
  // Rescoring: the BM25 of the other sources' candidates, asked of the index by id while the keyword list runs.
  const otherBm25P = rescoring
    ? Promise.all([vectorP, namesP, pathP]).then(([v, n, p]) =>
        bm25Of(sources, query, filter, [...new Set([...v.map((h) => h.drawer.id), ...n.map((h) => h.drawer.id), ...p.map((h) => h.item.id)])], textOptions),
      )
    : Promise.resolve(new Map<string, number>());
  const [vectorHits, textHits, nameHits, pathHits, otherBm25] = await Promise.all([
    vectorP,
    mode !== 'vector' ? sources.store.fullText(query, filter, CANDIDATE_WINDOW, textOptions).catch(() => []) : Promise.resolve([]),
    namesP,
    pathP,
    otherBm25P,
  ]);
  const lists: Record<string, Array<{ item: StoredDrawer; score: number }>> = {};
  if (mode !== 'text') lists.vector = vectorHits.map((h) => ({ item: h.drawer, score: 1 - h.distance }));
  if (mode !== 'vector') lists.text = textHits.map((h) => ({ item: h.drawer, score: h.score }));
  if (nameHits.length > 0) lists.names = nameHits.map((h) => ({ item: h.drawer, score: h.score }));
  if (pathHits.length > 0) lists.path = pathHits;
  let hits =
    rescoring && vector !== undefined
      ? await rescored(sources, lists, otherBm25, filter, vector)
      : fuseScored(lists, (d) => d.id, (d) => d.useful, HEADROOM_MNZ, CANDIDATE_WINDOW);
  if (plan.pathBoost && mode === 'hybrid') hits = boostByPath(hits, pathScan(sources.minedFiles?.() ?? [], analysis.stems, PATH_BOOST_FILES));
  if (plan.testPrior) hits = demoteTestFiles(hits, query, sources.relPath, rescoring ? RESCORED_TEST_FILE_FACTOR : TEST_FILE_FACTOR);
  hits = applyRankRules(hits, analysis, plan, sources.relPath);
  if (limit > hits.length) {
    // Past the window: further candidates of the vector and keyword lists, after every fused one.
    const [moreVector, moreText] = await Promise.all([
      vector && mode !== 'text' ? sources.store.search(vector, filter, limit) : Promise.resolve([]),
      mode !== 'vector' ? sources.store.fullText(query, filter, limit, textOptions).catch(() => []) : Promise.resolve([]),
    ]);
    hits = [
      ...hits,
      ...beyondWindow(
        { vector: moreVector.map((h) => ({ item: h.drawer, score: 1 - h.distance })), text: moreText.map((h) => ({ item: h.drawer, score: h.score })) },
        new Set(hits.map((h) => h.item.id)),
      ),
    ];
  }
  return { analysis, expansion, hits, similarity: new Map(vectorHits.map((h) => [h.drawer.id, 1 - h.distance])) };
}

/** The BM25 of drawers by id for the query (0 for one holding none of its words; none asked: empty). */
async function bm25Of(
  sources: CandidateSources,
  query: string,
  filter: DrawerFilter,
  wanted: string[],
  textOptions: Parameters<CandidateSources['store']['fullText']>[3],
): Promise<Map<string, number>> {
  const ids = filter.ids ? wanted.filter((id) => filter.ids?.includes(id)) : wanted;
  if (ids.length === 0) return new Map();
  // Scores only: the rows themselves came with the other lists (reading them again was half this query's time).
  const hits = await fullTextScores(sources.store, query, { ...filter, ids }, ids.length, textOptions).catch(() => []);
  return new Map(hits.map((h) => [h.id, h.score]));
}

/**
 * The union of every list's candidates, each with its cosine (from its vector, which comes back with a
 * keyword hit too) and its BM25 (the keyword list's score, else asked of the index by id: `otherBm25`),
 * scored by search/rescore.ts. The pool is the lists' fixed windows, so the order never depends on the limit.
 */
async function rescored(
  sources: CandidateSources,
  lists: Record<string, Array<{ item: StoredDrawer; score: number }>>,
  otherBm25: ReadonlyMap<string, number>,
  filter: DrawerFilter,
  vector: Float32Array,
): Promise<FusedHit<StoredDrawer>[]> {
  const pool = new Map<string, PoolCandidate<StoredDrawer>>();
  for (const [name, list] of Object.entries(lists))
    list.forEach((h, i) => {
      let c = pool.get(h.item.id);
      if (!c) {
        c = { item: h.item, cos: Number.NaN, bm25: otherBm25.get(h.item.id) ?? 0, ranks: {} };
        pool.set(h.item.id, c);
      }
      if (c.ranks[name] === undefined) c.ranks[name] = i + 1;
      if (name === 'vector') c.cos = h.score;
      if (name === 'text') c.bm25 = h.score;
    });
  const missingVector: string[] = [];
  for (const c of pool.values())
    if (Number.isNaN(c.cos)) {
      if (c.item.vector?.length === vector.length) c.cos = dot(vector, c.item.vector);
      else missingVector.push(c.item.id);
    }
  // Keyword hits come back with their vectors; a source that did not bring one is read by id.
  if (missingVector.length > 0)
    for (const d of await sources.store.scan({ ...filter, ids: missingVector }, { withVectors: true })) {
      const c = pool.get(d.id);
      if (c && d.vector?.length === vector.length) c.cos = dot(vector, d.vector);
    }
  const candidates = [...pool.values()].map((c) => ({ ...c, cos: Number.isNaN(c.cos) ? 0 : c.cos }));
  return rescorePool(candidates, (d) => d.id, (d) => d.useful);
}

/** Each hit: score x(1 + its file's path score / the best file's, 0 for a file the path scan did not match) / 2, re-sorted (stable). */
function boostByPath(hits: FusedHit<StoredDrawer>[], matches: readonly PathMatch[]): FusedHit<StoredDrawer>[] {
  const best = matches[0]?.score ?? 0;
  if (best <= 0) return hits;
  const byFile = new Map(matches.map((m) => [m.file.source_file, m.score / best]));
  return hits
    // x(1 + share) / 2: the same order as x(1 + share), and the score stays in [0, 1].
    .map((h, i) => ({ h: { ...h, score: (h.score * (1 + (byFile.get(h.item.source_file ?? '') ?? 0))) / 2 }, i }))
    .sort((a, b) => b.h.score - a.h.score || a.i - b.i)
    .map(({ h }) => h);
}

/** Candidates not fused (past the window): score 0, interleaved by their rank in each list. */
function beyondWindow(full: Record<string, Array<{ item: StoredDrawer; score: number }>>, taken: Set<string>): FusedHit<StoredDrawer>[] {
  const out: FusedHit<StoredDrawer>[] = [];
  const longest = Math.max(0, ...Object.values(full).map((l) => l.length));
  for (let i = 0; i < longest; i++)
    for (const [name, list] of Object.entries(full)) {
      const h = list[i];
      if (!h || taken.has(h.item.id)) continue;
      taken.add(h.item.id);
      out.push({ item: h.item, score: 0, components: Object.fromEntries(Object.keys(full).map((n) => [n, null])), ranks: { [name]: i + 1 } });
    }
  return out;
}
