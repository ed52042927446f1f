// Query expansion through Memory.search (issue 32): with the plan's `expand` on, the term
// associations of the mined code are built from the palace on the first search (mined chunks read by
// id from the mined-files list) and bridge a question's word to the name the code uses; off (the
// default), the same question finds only its own words. A real LanceDB palace; the embedder is a
// deterministic bag-of-words hash (a real Embedder), and the searches are keyword-only.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Embedder } from '../../hub/src/embed/embedder.js';
import { silentLogger } from '../../hub/src/log.js';
import { Memory, sourceDrawerId } from '../../hub/src/memory/drawers/memory.js';
import { SEARCH_DEFAULTS } from '../../hub/src/search/candidates.js';
import type { MinedFile } from '../../hub/src/search/path-scan.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';
import type { StoredDrawer } from '../../hub/src/vector/vector-store.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { wordVector as wordVectorOf } from '../helpers/word-vector.js';

const DIM = 16;

const wordVector = (text: string): Float32Array => wordVectorOf(text, DIM);

const hashEmbedder: Embedder = {
  info: () => ({ provider: 'test', model: 'bag-of-words-hash', dimensions: DIM, device: 'cpu' }),
  embed: async (texts) => texts.map(wordVector),
  close: async () => undefined,
};

/** Mined code files of one chunk each: what each says in its comment, and the code. */
const FILES: Array<[string, string]> = [
  ...Array.from({ length: 8 }, (_, i): [string, string] => [`src/scan/s${i}.ts`, `// Looks for a credential in the text.\nconst found${i} = ${['find', 'scan', 'match', 'spot'][i % 4]}Secret(text${i});`]),
  ...Array.from({ length: 10 }, (_, i): [string, string] => [`src/out/o${i}.ts`, `// Formats the output line.\nconst line = formatRow(cells${i});`]),
  ...Array.from({ length: 10 }, (_, i): [string, string] => [`src/net/n${i}.ts`, `// Opens the socket for a client.\nconst sock = openSocket(port${i});`]),
  // The answer: code that never says "credential".
  ['src/secrets.ts', 'export function redactSecret(value) {\n  return value.replace(/./g, "*");\n}'],
];

function drawers(): { rows: StoredDrawer[]; files: MinedFile[] } {
  const rows: StoredDrawer[] = [];
  const files: MinedFile[] = [];
  FILES.forEach(([rel, content], i) => {
    const source = `/p/${rel}`;
    files.push({ source_file: source, rel_path: rel, drawers: 1 });
    rows.push({
      id: sourceDrawerId(source, 0),
      wing: 'p',
      room: 'code',
      tags: [],
      content,
      source_file: source,
      chunk_index: 0,
      parent_id: null,
      filed_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      added_by: 'miner',
      useful: null,
      metadata: { language: 'typescript', mode: 'projects', rel_path: rel },
      embedder: `bag-of-words-hash/${DIM}`,
      vector: wordVector(content),
    });
  });
  return { rows, files };
}

describe('query expansion in Memory.search', () => {
  let dir: TmpDir;
  let store: LanceDbVectorStore;
  let files: MinedFile[];

  beforeAll(async () => {
    dir = makeTmpDir('search-expand');
    store = await LanceDbVectorStore.open({ palacePath: dir.path, dimensions: DIM, log: silentLogger });
    const built = drawers();
    files = built.files;
    await store.upsert(built.rows);
  });

  afterAll(async () => {
    await store.close();
    dir.cleanup();
  });

  it('finds the code named otherwise with expansion on (the default), and not with it off', async () => {
    const secret = sourceDrawerId('/p/src/secrets.ts', 0);
    const plain = new Memory({ store, embedder: hashEmbedder, minedFiles: () => files, searchPlan: { ...SEARCH_DEFAULTS, expand: false } });
    // The question shares no word with the answer (`redactSecret`); without expansion search finds the comments only.
    const offIds = (await plain.search({ query: 'where is a credential hidden', mode: 'text', limit: 10 })).results.map((h) => h.drawer_id);
    expect(offIds.length).toBeGreaterThan(0);
    expect(offIds).not.toContain(secret);
    const expanding = new Memory({ store, embedder: hashEmbedder, minedFiles: () => files });
    const onIds = (await expanding.search({ query: 'where is a credential hidden', mode: 'text', limit: 10 })).results.map((h) => h.drawer_id);
    expect(onIds).toContain(secret);
    // The chunks holding the question's own word still come first.
    expect(onIds.indexOf(secret)).toBeGreaterThan(onIds.indexOf(sourceDrawerId('/p/src/scan/s0.ts', 0)));
  });
});
