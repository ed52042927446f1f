// The persistent term associations (search/association-store.ts): kept by the mine write step file
// by file, they give the same expansions as TermAssociations built from scratch over the palace's
// chunks, after a first mine, a re-mine of an edited file and the prune of a removed one; a palace
// mined before them is backfilled to the same counts, and searches do not expand until then. Real
// mines (mineSource, tree-sitter chunks) into a real LanceDB palace and real SQLite files.

import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { normalize, type Embedder } from '../../hub/src/embed/embedder.js';
import { silentLogger } from '../../hub/src/log.js';
import { Memory, sourceDrawerId } from '../../hub/src/memory/drawers/memory.js';
import { readManifest } from '../../hub/src/mine/manifest.js';
import { mineSource } from '../../hub/src/mine/miner.js';
import { backfillAssociations } from '../../hub/src/search/association-index.js';
import { AssociationStore } from '../../hub/src/search/association-store.js';
import { SEARCH_DEFAULTS } from '../../hub/src/search/candidates.js';
import { TermAssociations } from '../../hub/src/search/expand.js';
import { minedProjectFiles } from '../../hub/src/search/path-scan.js';
import { analyzeQuery } from '../../hub/src/search/query.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

const DIM = 8;
const hashEmbedder: Embedder = {
  info: () => ({ provider: 'test', model: 'hash', dimensions: DIM, device: 'cpu' }),
  embed: async (texts) =>
    texts.map((t) => {
      const h = createHash('sha256').update(t).digest();
      return normalize(Float32Array.from({ length: DIM }, (_, d) => (h[d] ?? 0) - 127.5));
    }),
  close: async () => undefined,
};

const TOPICS: Array<[string, string]> = [
  ['Looks for a credential in the text', 'findSecret'],
  ['Formats the output line for the terminal', 'formatRow'],
  ['Opens the socket for a client connection', 'openSocket'],
  ['Retries the request after a timeout', 'retryLater'],
  ['Keeps the writer lease while the hub runs', 'renewLease'],
];

function source(i: number, topics: number[]): string {
  return topics
    .map((t, k) => {
      const [comment, name] = TOPICS[t % TOPICS.length] ?? ['', ''];
      return `/** ${comment}. */\nexport function step${i}x${k}(input${k}: string, options${i % 3}: number): string {\n  const value = ${name}(input${k}, options${i % 3});\n  return value + String(options${i % 3});\n}\n`;
    })
    .join('\n');
}

const QUERIES = [
  'where is a credential looked for',
  'how is the output line formatted',
  'what happens after a timeout',
  'who opens the client socket',
  'how is the writer lease kept',
  'credential',
];

describe('persistent term associations', () => {
  let tmp: TmpDir;
  let palace: string;
  let root: string;
  let store: LanceDbVectorStore;
  let counts: AssociationStore;
  let memory: Memory;

  const mine = (prune = false) =>
    mineSource(async () => memory, palace, { path: root, mode: 'projects', wing: 'proj', prune }, { step: async (fn) => fn() });

  /** The reference: TermAssociations built from scratch over every chunk the palace holds now. */
  const reference = async () => TermAssociations.build(await store.scan({}, { columns: ['id', 'content', 'metadata'] }));

  const expectSame = async (persistent: AssociationStore) => {
    const ref = await reference();
    expect(persistent.units()).toBe(ref.units);
    for (const q of QUERIES) expect({ q, e: persistent.expand(analyzeQuery(q).stems) }).toEqual({ q, e: ref.expand(analyzeQuery(q).stems) });
    return ref;
  };

  beforeAll(async () => {
    tmp = makeTmpDir('palace-assoc-store-');
    palace = join(tmp.path, 'palace');
    root = join(tmp.path, 'proj');
    for (let i = 0; i < 30; i++) {
      mkdirSync(join(root, `m${i % 3}`), { recursive: true });
      writeFileSync(join(root, `m${i % 3}`, `f${i}.ts`), source(i, [i, i + 1, i + 3]));
    }
    store = await LanceDbVectorStore.open({ palacePath: palace, dimensions: DIM, log: silentLogger });
    counts = AssociationStore.open(palace, { hasMinedFiles: () => false });
    memory = new Memory({ store, embedder: hashEmbedder, associations: counts, minedFiles: () => minedProjectFiles(readManifest(palace)) });
  });
  afterAll(async () => {
    await memory.close();
    tmp.cleanup();
  });

  it('after a mine, a re-mine of an edited file and the prune of a removed one: the same expansions as a build from scratch', async () => {
    expect(counts.complete()).toBe(true);
    const first = await mine();
    expect(first.files_mined).toBe(30);
    const ref = await expectSame(counts);
    expect(ref.units).toBe(30);
    // Not vacuous: the description words bridge to the names the code uses.
    const credential = counts.expand(analyzeQuery('credential').stems).map((e) => e.word);
    expect(credential.length).toBe(1);
    expect(['find', 'secret']).toContain(credential[0]);

    // An edited file: its old units out, the new ones in.
    writeFileSync(join(root, 'm0', 'f0.ts'), source(0, [2, 2, 4, 4]));
    writeFileSync(join(root, 'm1', 'f1.ts'), '// no function here any more\nexport const x = 1;\n');
    const second = await mine();
    expect(second.files_mined).toBe(2);
    await expectSame(counts);

    // Removed files, pruned.
    rmSync(join(root, 'm2', 'f2.ts'));
    rmSync(join(root, 'm2', 'f5.ts'));
    const third = await mine(true);
    expect(third.files_pruned).toBe(2);
    await expectSame(counts);
  });

  it('a palace mined before the counts were kept: no expansion until the backfill completes, then the same counts', async () => {
    const other = join(tmp.path, 'other');
    const fresh = AssociationStore.open(other, { hasMinedFiles: () => true });
    try {
      expect(fresh.complete()).toBe(false);
      expect(fresh.expand(analyzeQuery('credential').stems)).toEqual([]);
      const files = minedProjectFiles(readManifest(palace));
      const done = await backfillAssociations(fresh, store, () => files, sourceDrawerId, { sliceMs: 0 });
      expect(done).toBe(files.length);
      expect(fresh.complete()).toBe(true);
      await expectSame(fresh);
      expect(fresh.expand(analyzeQuery('credential').stems)).toEqual(counts.expand(analyzeQuery('credential').stems));
    } finally {
      fresh.close();
    }
  });

  it('a search through Memory expands from the persistent counts: the bridge word finds code that never says it', async () => {
    // Code with no comment (no unit: the counts do not change) that names what "credential" means here.
    writeFileSync(join(root, 'm0', 'vault.ts'), 'export function lookupVault(box: string): string {\n  return findSecret(box);\n}\n');
    await mine();
    const isVault = (r: { source_file?: string | null }) => r.source_file?.endsWith('vault.ts') === true;
    const expanded = await memory.search({ query: 'credential', mode: 'text', limit: 40 });
    expect(expanded.results.some(isVault)).toBe(true);
    const plainMemory = new Memory({ store, embedder: hashEmbedder, searchPlan: { ...SEARCH_DEFAULTS, expand: false } });
    const plain = await plainMemory.search({ query: 'credential', mode: 'text', limit: 40 });
    expect(plain.results.some(isVault)).toBe(false);
  });
});
