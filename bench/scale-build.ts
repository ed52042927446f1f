// Builds (once) the `scale` suite's palace: a logstream of 1M events (tasks, acks, notes, patches
// with artifacts) and 200k drawers with generated unit vectors written straight into the LanceDB
// store (no embedding), plus a mined tree and its manifest. Cached under a versioned directory.

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { BUNDLED_MODEL } from '../hub/src/embed/bundled-embedder.js';
import { embedderKey, normalize } from '../hub/src/embed/embedder.js';
import { writeEmbedderRecord } from '../hub/src/embed/select.js';
import { silentLogger } from '../hub/src/log.js';
import { Logstream, type AppendInput } from '../hub/src/logstream/logstream.js';
import { DIARY_ROOM, DIARY_TYPE, agentWing } from '../hub/src/memory/drawers/diary.js';
import { sourceDrawerId, sourceParentId } from '../hub/src/memory/drawers/memory.js';
import type { Manifest } from '../hub/src/mine/manifest.js';
import { manifestPath, readManifest } from '../hub/src/mine/manifest.js';
import { PROJECT_CHUNKER } from '../hub/src/mine/miner.js';
import { backfillAssociations } from '../hub/src/search/association-index.js';
import { AssociationStore } from '../hub/src/search/association-store.js';
import { minedProjectFiles } from '../hub/src/search/path-scan.js';
import { LanceDbVectorStore } from '../hub/src/vector/lancedb-vector-store.js';
import type { StoredDrawer } from '../hub/src/vector/vector-store.js';
import { makeTraffic } from './event-fixtures.js';
import { pick, seededRandom } from './stats.js';

/** Bump when the generated palace changes shape, so stale caches are rebuilt. */
export const SCALE_CACHE_VERSION = 1;
export const FULL_EVENTS = 1_000_000;
export const FULL_DRAWERS = 200_000;
const DIM = 512;
const EVENT_BATCH = 2_000;
const DRAWER_BATCH = 5_000;
/** Mined code drawers per source file (files of ~8 chunks). */
const CHUNKS_PER_FILE = 8;

export interface ScalePalace {
  /** Where the cached palace lives (reuse across runs). */
  dir: string;
  palace: string;
  /** A mined tree whose manifest entries match: re-mining it finds every file unchanged. */
  tree: string;
  treeWing: string;
  treeFiles: number;
  events: number;
  drawers: number;
  /** Wing used for the /list figure, and its size. */
  listWing: string;
  /** A correlation id with events (for `logstream task`). */
  sampleTask: string;
  /** Whether this run built it (false: reused from the cache). */
  built: boolean;
  buildSeconds: number;
}

const CODE_LINES = [
  'export function composeMiddleware(stack: Middleware[]): Handler {',
  '  const dispatch = (i: number) => stack[i]?.(ctx, () => dispatch(i + 1));',
  '  if (!session || session.expiresAt < now()) return unauthorized(res);',
  '  await db.transaction(async (tx) => { await tx.insert(rows); });',
  'class LeaseSweeper { constructor(private readonly clock: Clock) {} }',
  '  for (const peer of peers) await pull(peer, { since: cursor });',
  '  return { id, wing, room, content, filed_at: isoSeconds(now) };',
  '}',
];
const PROSE = ('we decided to keep the writer lease in sqlite because two hubs on one palace corrupted the index ' +
  'the reviewer asked for a regression test before merging and the migration notes were updated after the release ' +
  'alice prefers small patches with one concern each and bob owns the sync protocol and its trust rules').split(' ');
const WINGS = Array.from({ length: 12 }, (_, i) => `proj-${i}`);
const CODE_ROOMS = ['src', 'test', 'docs', 'scripts', 'lib', 'api', 'ui', 'config', 'migrations', 'bench', 'tools', 'types'];
const AGENTS = ['laptop-claude', 'laptop-codex', 'desk-cursor', 'ci-bot'];

function sentence(random: () => number, words: number): string {
  return Array.from({ length: words }, () => pick(random, PROSE)).join(' ');
}

function unitVector(random: () => number): Float32Array {
  const v = new Float32Array(DIM);
  for (let d = 0; d < DIM; d++) v[d] = random() - 0.5;
  return normalize(v);
}

function isoAt(base: number, i: number): string {
  return new Date(base + i * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The i-th generated drawer (deterministic): mostly mined code, then chats, decisions, notes and diaries. */
function drawerAt(i: number, random: () => number, key: string, treeFiles: readonly string[], treeWing: string): StoredDrawer {
  const filedAt = isoAt(Date.UTC(2025, 10, 1), i);
  const base = { tags: [] as string[], filed_at: filedAt, useful: null as boolean | null, embedder: key, vector: unitVector(random) };
  const slot = i % 100;
  if (i < treeFiles.length) {
    const file = treeFiles[i] ?? '';
    return {
      ...base,
      id: sourceDrawerId(file, 0),
      wing: treeWing,
      room: 'src',
      content: CODE_LINES.join('\n'),
      source_file: file,
      chunk_index: 0,
      parent_id: sourceParentId(file),
      added_by: 'palace-mine',
      metadata: { mode: 'projects', line_start: 1, line_end: CODE_LINES.length, chunks: 1 },
    };
  }
  if (slot < 70) {
    const fileNo = Math.floor(i / CHUNKS_PER_FILE);
    const wing = WINGS[fileNo % WINGS.length] ?? 'proj-0';
    const room = CODE_ROOMS[Math.floor(fileNo / WINGS.length) % CODE_ROOMS.length] ?? 'src';
    const file = `/srv/code/${wing}/${room}/file-${fileNo}.ts`;
    const chunk = i % CHUNKS_PER_FILE;
    const start = chunk * 40 + 1;
    return {
      ...base,
      id: sourceDrawerId(file, chunk),
      wing,
      room,
      content: Array.from({ length: 12 }, () => pick(random, CODE_LINES)).join('\n'),
      source_file: file,
      chunk_index: chunk,
      parent_id: sourceParentId(file),
      added_by: 'palace-mine',
      metadata: { mode: 'projects', line_start: start, line_end: start + 39, chunks: CHUNKS_PER_FILE },
    };
  }
  const wing = WINGS[i % WINGS.length] ?? 'proj-0';
  const id = `drawer_${i.toString(16).padStart(24, '0')}`;
  const common = { ...base, id, source_file: null, chunk_index: 0, parent_id: null, added_by: pick(random, AGENTS) };
  if (slot < 82) return { ...common, wing: 'chats', room: 'conversations', content: `> ${sentence(random, 14)}\n${sentence(random, 40)}`, metadata: { format: 'transcript' } };
  if (slot < 88)
    return { ...common, wing, room: 'decisions', content: `Decision: ${sentence(random, 30)}`, metadata: { type: 'decision', importance: 4 }, useful: slot % 3 === 0 ? true : null };
  if (slot < 96) return { ...common, wing, room: 'notes', content: sentence(random, 50), metadata: {}, useful: slot === 90 ? false : slot === 91 ? true : null };
  const agent = pick(random, AGENTS);
  return { ...common, wing: agentWing(agent), room: DIARY_ROOM, content: `Diary: ${sentence(random, 35)}`, metadata: { type: DIARY_TYPE, agent, topic: 'work' } };
}

/** A patch of about 1 KB for a patch.ready artifact. */
function patchText(random: () => number, n: number): string {
  const lines = [`diff --git a/src/file-${n}.ts b/src/file-${n}.ts`, `--- a/src/file-${n}.ts`, `+++ b/src/file-${n}.ts`, '@@ -1,8 +1,9 @@'];
  for (let i = 0; i < 24; i++) lines.push(`${i % 3 === 0 ? '+' : i % 5 === 0 ? '-' : ' '}${pick(random, CODE_LINES)}`);
  return `${lines.join('\n')}\n`;
}

function buildLog(palace: string, events: number, progress: (m: string) => void): string {
  const log = Logstream.open(palace, { durability: 'normal' });
  try {
    const next = makeTraffic(7);
    const random = seededRandom(8);
    let have = log.store.countEvents();
    let sampleTask = 'task-1';
    let patches = 0;
    while (have < events) {
      const n = Math.min(EVENT_BATCH, events - have);
      const inputs: AppendInput[] = [];
      for (let k = 0; k < n; k++) {
        const input = next();
        if (input.type === 'patch.ready') {
          const artifact = log.putArtifact({ kind: 'patch', created_by: String(input.from_agent), content: patchText(random, patches++) });
          input.artifact_ids = [artifact.id];
        }
        if (typeof input.correlation_id === 'string') sampleTask = input.correlation_id;
        inputs.push(input);
      }
      const results = log.store.append(inputs.map((i) => log.prepareEvent(i)));
      const failed = results.find((r) => r instanceof Error);
      if (failed) throw failed;
      have += n;
      if (have % 100_000 < EVENT_BATCH) progress(`log: ${have} events`);
    }
    return sampleTask;
  } finally {
    log.close();
  }
}

async function buildDrawers(palace: string, drawers: number, treeFiles: readonly string[], treeWing: string, progress: (m: string) => void): Promise<void> {
  const key = embedderKey({ model: BUNDLED_MODEL, dimensions: DIM });
  const store = await LanceDbVectorStore.open({ palacePath: palace, dimensions: DIM, log: silentLogger });
  try {
    const random = seededRandom(21);
    for (let i = 0; i < drawers; i += DRAWER_BATCH) {
      const batch: StoredDrawer[] = [];
      for (let j = i; j < Math.min(drawers, i + DRAWER_BATCH); j++) batch.push(drawerAt(j, random, key, treeFiles, treeWing));
      await store.upsert(batch);
      if ((i + DRAWER_BATCH) % 50_000 < DRAWER_BATCH) progress(`memory: ${Math.min(drawers, i + DRAWER_BATCH)} drawers`);
    }
    progress('memory: building the full-text and ANN indexes');
    await store.indexesSettled();
    await store.fullText('lease', {}, 1);
  } finally {
    await store.close();
  }
  writeEmbedderRecord(palace, { provider: 'bundled', model: BUNDLED_MODEL, dimensions: DIM });
}

/** A small source tree and manifest entries for it (plus one entry per generated mined file). */
function buildTree(dir: string, palace: string, files: number, wing: string, drawers: number): string[] {
  const tree = join(dir, 'tree');
  const out: string[] = [];
  for (let i = 0; i < files; i++) {
    const sub = join(tree, `pkg-${i % 20}`);
    mkdirSync(sub, { recursive: true });
    const file = join(sub, `mod-${i}.ts`);
    writeFileSync(file, `${CODE_LINES.join('\n')}\n// ${i}\n`);
    out.push(file);
  }
  const manifest: Manifest = {};
  const minedAt = '2026-01-01T00:00:00Z';
  for (const file of out) {
    const s = statSync(file);
    manifest[file] = { mtime_ms: s.mtimeMs, size: s.size, sha256: '0'.repeat(64), wing, room: 'src', mode: 'projects', root: tree, drawers: 1, mined_at: minedAt, chunker: PROJECT_CHUNKER };
  }
  for (let fileNo = 0; fileNo < Math.ceil(drawers / CHUNKS_PER_FILE); fileNo++) {
    const w = WINGS[fileNo % WINGS.length] ?? 'proj-0';
    const room = CODE_ROOMS[Math.floor(fileNo / WINGS.length) % CODE_ROOMS.length] ?? 'src';
    manifest[`/srv/code/${w}/${room}/file-${fileNo}.ts`] = { mtime_ms: 0, size: 4000, sha256: '0'.repeat(64), wing: w, room, mode: 'projects', root: `/srv/code/${w}`, drawers: CHUNKS_PER_FILE, mined_at: minedAt, chunker: PROJECT_CHUNKER };
  }
  writeFileSync(manifestPath(palace), JSON.stringify(manifest));
  return out;
}

/**
 * A cached palace's manifest says its files were cut by the current chunker (they are generated, never
 * chunked): without it a newer miner would re-chunk the whole unchanged tree instead of checking it.
 */
function refreshManifestChunker(palace: string): void {
  const path = manifestPath(palace);
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  let stale = 0;
  for (const entry of Object.values(manifest))
    if (entry.mode === 'projects' && entry.chunker !== PROJECT_CHUNKER) {
      entry.chunker = PROJECT_CHUNKER;
      stale++;
    }
  if (stale > 0) writeFileSync(path, JSON.stringify(manifest));
}

/**
 * The term-association counts a palace mined by this version keeps (search/association-store.ts),
 * counted once into a cached palace built before them, so a hub started on it finds them complete
 * (a hub would otherwise backfill them in the background on its first start).
 */
async function ensureAssociations(palace: string, progress: (m: string) => void): Promise<void> {
  const counts = AssociationStore.open(palace, { hasMinedFiles: () => true });
  try {
    if (counts.complete()) return;
    progress('counting the term associations of the mined code (once per cached palace)');
    const store = await LanceDbVectorStore.open({ palacePath: palace, dimensions: DIM, log: silentLogger });
    try {
      const files = minedProjectFiles(readManifest(palace));
      await backfillAssociations(counts, store, () => files, sourceDrawerId, { sliceMs: 1_000 });
    } finally {
      await store.close();
    }
  } finally {
    counts.close();
  }
}

/** The cached scale palace for `scale` (1 = full size), built if missing. */
export async function scalePalace(cacheDir: string, scale: number, progress: (m: string) => void): Promise<ScalePalace> {
  const events = Math.max(1_000, Math.round(FULL_EVENTS * scale));
  const drawers = Math.max(1_000, Math.round(FULL_DRAWERS * scale));
  const treeFiles = Math.max(50, Math.round(2_000 * scale));
  const dir = join(cacheDir, `scale-v${SCALE_CACHE_VERSION}-${events}e-${drawers}d`);
  const palace = join(dir, 'palace');
  const treeWing = 'tree';
  const info = { dir, palace, tree: join(dir, 'tree'), treeWing, treeFiles, events, drawers, listWing: 'proj-3', sampleTask: 'task-1' };
  const done = join(dir, 'built.json');
  if (existsSync(done)) {
    const saved = JSON.parse(await import('node:fs/promises').then((fs) => fs.readFile(done, 'utf8'))) as { sampleTask: string };
    refreshManifestChunker(palace);
    await ensureAssociations(palace, progress);
    return { ...info, sampleTask: saved.sampleTask, built: false, buildSeconds: 0 };
  }
  progress(`building the scale palace (${events} events, ${drawers} drawers) in ${dir}`);
  const started = performance.now();
  const staging = `${dir}.building-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const stagingPalace = join(staging, 'palace');
  mkdirSync(stagingPalace, { recursive: true, mode: 0o700 });
  // The tree's paths are absolute and recorded in the manifest: build it at its final place.
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files = buildTree(dir, stagingPalace, treeFiles, treeWing, drawers);
  const sampleTask = buildLog(stagingPalace, events, progress);
  await buildDrawers(stagingPalace, drawers, files, treeWing, progress);
  await ensureAssociations(stagingPalace, progress);
  renameSync(stagingPalace, palace);
  rmSync(staging, { recursive: true, force: true });
  writeFileSync(done, JSON.stringify({ version: SCALE_CACHE_VERSION, events, drawers, sampleTask }));
  return { ...info, sampleTask, built: true, buildSeconds: (performance.now() - started) / 1000 };
}
