// Mines a directory or file into drawers: lists files, skips unchanged ones by the manifest, chunks
// deterministically, embeds outside any lock and writes each batch of files as one short step (the
// hub runs steps under its request lock, so other tools run between batches of a long mine).

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, relative, resolve, sep } from 'node:path';

import { chunkText } from '../core/chunk.js';
import { isoSeconds } from '../core/ids.js';
import { findSecret } from '../core/secrets.js';
import { HubError } from '../errors.js';
import { embeddingInput } from '../memory/drawers/embedding-input.js';
import type { Memory, SourceChunk, SourceFiling } from '../memory/drawers/memory.js';
import type { MineMode, SourceAdapter } from './adapters.js';
import { exchangeChunks, parseTranscript } from './convos.js';
import { extractDocument, isBinaryDocument, type DocumentLoaders, type ExtractedDocument } from './documents.js';
import { extractText } from './extract.js';
import { commitManifest, readManifestIndexed, type MinedFileEntry } from './manifest.js';
import { CONVO_EXTENSIONS, EXTRACT_EXTENSIONS, MAX_FILE_BYTES, PROJECT_EXTENSIONS, defaultWing, listFilesSliced, looksText, projectRoom, roomPlan, type RoomPlan } from './walk.js';

const BATCH_FILES = 32;
/** Checking time between two yields to the event loop (the walk, then the stat of each file against the manifest). */
const SLICE_MS = 8;
/** Version of the project-file chunker (code-chunks.ts); files mined with another are re-chunked. */
export const PROJECT_CHUNKER = 2;
const MAX_CHUNKS_PER_FILE = 50_000;
/** PDFs and DOCX files are larger than text for the same words: their own size cap. */
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;
const LISTED_FILES = 1000;

export interface MineRequest {
  /** A directory or file (absolute or relative to the hub's working directory). */
  path: string;
  mode: MineMode;
  adapter?: SourceAdapter | undefined;
  wing?: string | undefined;
  room?: string | undefined;
  dryRun?: boolean;
  /** Delete the drawers of previously mined files under `path` that are gone (or now ignored). */
  prune?: boolean;
  /** Re-mine files even when the manifest says they are unchanged. */
  force?: boolean;
  gitignore?: boolean;
  addedBy?: string;
  /** Mine at most this many files (0 = all). */
  limit?: number;
  /** Whether a file or folder found while walking may be read (the mining roots, mine/roots.ts). */
  admit?: (path: string) => boolean;
}

export interface MineProgress {
  files_done: number;
  files_total: number;
  drawers_filed: number;
  file?: string;
}

export interface MineHooks {
  /** Runs one write step; the hub runs it under its global request lock. */
  step: <T>(fn: () => Promise<T>) => Promise<T>;
  progress?: (p: MineProgress) => void;
  signal?: AbortSignal | undefined;
  /** How the optional PDF and DOCX libraries are loaded (tests inject a missing one). */
  documentLoaders?: DocumentLoaders;
}

export interface MineReport {
  source: string;
  mode: MineMode;
  adapter: string | null;
  wing: string;
  dry_run: boolean;
  files_seen: number;
  files_mined: number;
  files_unchanged: number;
  files_skipped: number;
  drawers_filed: number;
  drawers_removed: number;
  chunks_with_secrets_skipped: number;
  /** Previously mined files under the source that no longer exist (their drawers are kept unless --prune). */
  files_vanished: number;
  files_pruned: number;
  /** Files that could not be read or extracted (mining went on with the others); `code` when it is a HubError. */
  errors: Array<{ file: string; error: string; code?: string }>;
  /** Dry run: what would be filed, per file (at most 1000 listed). */
  files?: Array<{ file: string; room: string; chunks: number }>;
  aborted?: boolean;
}

interface Prepared {
  file: string;
  entry: MinedFileEntry;
  filing: Omit<SourceFiling, 'vectors'>;
}

/** A batch of files chunked and handed to the embedder, waiting to be written. */
interface Staged {
  prepared: Prepared[];
  changes: Map<string, MinedFileEntry | null>;
  memory: Memory | undefined;
  vectors: Promise<Float32Array[]> | undefined;
  /** Files done (progress) once it is written. */
  done: number;
}

function extensionsOf(mode: MineMode): ReadonlySet<string> {
  return mode === 'projects' ? PROJECT_EXTENSIONS : mode === 'convos' ? CONVO_EXTENSIONS : EXTRACT_EXTENSIONS;
}

function lineAt(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** `file` relative to the mined root, with forward slashes (what search results show). */
export function minedPath(root: string, file: string): string {
  const rel = relative(root, file);
  return (rel === '' ? basename(file) : rel).split(sep).join('/');
}

/**
 * A file's text cut into chunks for the mode, with the room it goes to (undefined: not minable).
 * Project files are cut at syntax boundaries (code, see code-chunks.ts) or into line windows; each
 * chunk carries its 1-based inclusive `line_start`/`line_end` and, for code, its `symbols`.
 */
export async function chunksFor(
  mode: MineMode,
  root: string,
  file: string,
  text: string,
  plan?: RoomPlan,
): Promise<{ room: string; chunks: SourceChunk[]; format?: string; language?: string } | undefined> {
  if (mode === 'convos') {
    const parsed = parseTranscript(text);
    if (parsed) return { room: parsed.format === 'transcript' ? 'conversations' : parsed.format, chunks: exchangeChunks(parsed), format: parsed.format };
    if (file.endsWith('.json') || file.endsWith('.jsonl')) return undefined;
    return { room: 'conversations', chunks: chunkText(text).map((c) => ({ ...c, metadata: { format: 'text' } })) };
  }
  if (mode === 'projects') {
    // The code chunker (and web-tree-sitter behind it) loads only when a project is mined.
    const { codeChunks } = await import('./code-chunks.js');
    const cut = await codeChunks(file, text);
    return { room: projectRoom(root, file, plan), chunks: cut.chunks, ...(cut.language ? { language: cut.language } : {}) };
  }
  const body = extractText(file, text);
  if (body === undefined) return undefined;
  return { room: 'documents', chunks: chunkText(body) };
}

/** The chunks of an extracted PDF or DOCX; a PDF's chunks carry the pages they span (1-based). */
export function documentChunks(doc: ExtractedDocument): { room: string; chunks: SourceChunk[]; format: string } {
  const starts = doc.pageStarts;
  // A scanned (image-only) PDF has no text layer: no chunks, so the file counts as skipped.
  const chunks = (doc.text.trim() === '' ? [] : chunkText(doc.text)).map((c) => ({
    ...c,
    ...(starts && starts.length > 0 ? { metadata: { page_start: lineAt(starts, c.start), page_end: lineAt(starts, Math.max(c.start, c.end - 1)) } } : {}),
  }));
  return { room: 'documents', chunks, format: doc.format };
}

async function chunksOfText(mode: MineMode, root: string, file: string, text: string, plan: RoomPlan | undefined): ReturnType<typeof chunksFor> {
  return text.trim() === '' ? undefined : chunksFor(mode, root, file, text, plan);
}

function under(root: string, file: string): boolean {
  const rel = relative(root, file);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && rel !== '..');
}

/** Mines `request.path` into the palace at `palacePath`. The memory is opened only when something is filed. */
export async function mineSource(memory: () => Promise<Memory>, palacePath: string, request: MineRequest, hooks: MineHooks): Promise<MineReport> {
  const root = resolve(request.path);
  if (!existsSync(root)) throw new HubError('mine.source_missing', `nothing to mine at ${root}: no such file or directory`, { field: 'source' });
  const mode = request.mode;
  const isFile = statSync(root).isFile();
  /** The folder paths are shown relative to (the mined folder, or a mined file's folder). */
  const base = isFile ? dirname(root) : root;
  const wing = request.wing?.trim() || defaultWing(base);
  const dryRun = request.dryRun === true;
  const addedBy = request.addedBy?.trim() || 'palace-mine';
  // A hub answers other requests while a large tree is walked and checked (the scale suite's mined-files check).
  let files = await listFilesSliced(root, { extensions: extensionsOf(mode), gitignore: request.gitignore !== false, ...(request.admit ? { admit: request.admit } : {}) }, SLICE_MS);
  if (request.adapter?.accepts) files = files.filter(request.adapter.accepts);
  // Rooms follow the whole tree's layout (a `--limit` run files into the same rooms a full one would).
  const plan = mode === 'projects' && !isFile ? roomPlan(base, files) : undefined;
  if (request.limit && request.limit > 0) files = files.slice(0, request.limit);
  const indexed = readManifestIndexed(palacePath);
  const manifest = indexed.manifest;
  const report: MineReport = {
    source: root,
    mode,
    adapter: request.adapter?.name ?? null,
    wing,
    dry_run: dryRun,
    files_seen: files.length,
    files_mined: 0,
    files_unchanged: 0,
    files_skipped: 0,
    drawers_filed: 0,
    drawers_removed: 0,
    chunks_with_secrets_skipped: 0,
    files_vanished: 0,
    files_pruned: 0,
    errors: [],
    ...(dryRun ? { files: [] } : {}),
  };
  // The memory is opened once (a failed open is reported where it is awaited). The embedder's
  // workers start loading their models as soon as the first file needs mining, while this and the
  // following files are read and chunked, so the first batch finds the whole pool warm. A dry run,
  // or a re-mine of an unchanged tree, starts none.
  let opening: Promise<Memory> | undefined;
  const open = (): Promise<Memory> => (opening ??= memory());
  let warming = false;
  const warm = (): void => {
    if (warming || dryRun) return;
    warming = true;
    void open()
      .then((m) => m.warmEmbedder())
      .catch(() => undefined);
  };
  const now = isoSeconds(new Date());
  let done = 0;
  const tell = (file?: string): void =>
    hooks.progress?.({ files_done: done, files_total: files.length, drawers_filed: report.drawers_filed, ...(file ? { file } : {}) });
  tell();
  // One batch of files ahead: a batch's chunks go to the embedding pool as soon as it is chunked, and
  // the batch before it is written while they embed. The pool thus always holds the next batch's work
  // (no worker idles while this thread chunks or writes, nor on a batch whose last slice is short),
  // and batches are still written in order, one step each.
  let staged: Staged | undefined;
  const write = async (batch: Staged): Promise<void> => {
    const vectors = batch.vectors ? await batch.vectors : [];
    let at = 0;
    const filings: SourceFiling[] = batch.prepared.map((p) => {
      const own = vectors.slice(at, at + p.filing.chunks.length);
      at += p.filing.chunks.length;
      batch.changes.set(p.file, p.entry);
      return { ...p.filing, vectors: own };
    });
    const m = batch.memory;
    const result = await hooks.step(async () => {
      const r = m ? await m.fileSources(filings) : { filed: 0, removed: 0 };
      commitManifest(palacePath, batch.changes);
      return r;
    });
    report.files_mined += batch.prepared.length;
    report.drawers_filed += result.filed;
    report.drawers_removed += result.removed;
    done = batch.done;
    tell(files[done - 1]);
  };

  let slice = performance.now();
  for (let b = 0; b < files.length; b += BATCH_FILES) {
    // Checking a large unchanged tree never awaits anything else: let other requests in now and then.
    if (performance.now() - slice >= SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
    if (hooks.signal?.aborted) {
      report.aborted = true;
      break;
    }
    const changes = new Map<string, MinedFileEntry | null>();
    const prepared: Prepared[] = [];
    for (const file of files.slice(b, b + BATCH_FILES)) {
      try {
        const stat = statSync(file);
        const old = manifest[file];
        // A project file cut by an older chunker counts as changed: mining it again re-chunks it.
        const sameChunker = mode !== 'projects' || old?.chunker === PROJECT_CHUNKER;
        const samePlace = old !== undefined && sameChunker && old.wing === wing && old.mode === mode && (request.room === undefined || old.room === request.room);
        if (!request.force && samePlace && old.mtime_ms === stat.mtimeMs && old.size === stat.size) {
          report.files_unchanged++;
          continue;
        }
        warm();
        const binaryDocument = mode === 'extract' && isBinaryDocument(file);
        if (stat.size > (binaryDocument ? MAX_DOCUMENT_BYTES : MAX_FILE_BYTES)) {
          report.files_skipped++;
          continue;
        }
        const bytes = readFileSync(file);
        if (!binaryDocument && !looksText(bytes)) {
          report.files_skipped++;
          continue;
        }
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        if (!request.force && samePlace && old.sha256 === sha256) {
          changes.set(file, { ...old, mtime_ms: stat.mtimeMs, size: stat.size });
          report.files_unchanged++;
          continue;
        }
        const cut = binaryDocument
          ? documentChunks(await extractDocument(file, bytes, hooks.documentLoaders))
          : await chunksOfText(mode, base, file, bytes.toString('utf8').replace(/^\uFEFF/, ''), plan);
        if (!cut || cut.chunks.length === 0) {
          report.files_skipped++;
          continue;
        }
        const chunks = cut.chunks.slice(0, MAX_CHUNKS_PER_FILE).filter((c) => {
          if (!findSecret(c.text)) return true;
          report.chunks_with_secrets_skipped++;
          return false;
        });
        const room = request.room ?? request.adapter?.room ?? cut.room;
        const entry: MinedFileEntry = {
          mtime_ms: stat.mtimeMs,
          size: stat.size,
          sha256,
          wing,
          room,
          mode,
          root,
          drawers: chunks.length,
          mined_at: now,
          ...(mode === 'projects' ? { chunker: PROJECT_CHUNKER } : {}),
        };
        prepared.push({
          file,
          entry,
          filing: {
            source_file: file,
            wing,
            room,
            tags: [],
            added_by: addedBy,
            metadata: {
              mode,
              source_mtime: new Date(stat.mtimeMs).toISOString(),
              source_sha256: sha256,
              mine_root: base,
              rel_path: minedPath(base, file),
              ...(cut.format ? { format: cut.format } : {}),
              ...('language' in cut && cut.language ? { language: cut.language } : {}),
            },
            chunks,
            replace: old !== undefined,
          },
        });
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        report.errors.push({ file, error: (err as Error).message, ...(err instanceof HubError ? { code: String(code) } : {}) });
      }
    }
    if (dryRun) {
      for (const p of prepared) {
        report.files_mined++;
        report.drawers_filed += p.filing.chunks.length;
        if ((report.files?.length ?? 0) < LISTED_FILES) report.files?.push({ file: p.file, room: p.filing.room, chunks: p.filing.chunks.length });
      }
    } else if (prepared.length > 0 || changes.size > 0) {
      const m = prepared.length > 0 ? await open() : undefined;
      const vectors = m?.embedDocuments(prepared.flatMap((p) => p.filing.chunks.map((c) => embeddingInput(c.text, { ...p.filing.metadata, ...c.metadata }))));
      vectors?.catch(() => undefined); // awaited in write(), after the batch before it is written
      const previous = staged;
      staged = { prepared, changes, memory: m, vectors, done: Math.min(files.length, b + BATCH_FILES) };
      if (previous) await write(previous);
      continue;
    }
    if (staged) {
      staged.done = Math.min(files.length, b + BATCH_FILES);
      continue;
    }
    done = Math.min(files.length, b + BATCH_FILES);
    tell(files[done - 1]);
  }
  // The last batch (or the one under way when the mine was aborted) is written too.
  if (staged) await write(staged);

  // Files mined before from this source (same wing and mode) that this pass did not list: gone, or
  // now ignored. Their drawers are kept unless --prune (a limited pass prunes only the gone ones).
  const seen = new Set(files);
  // Only this wing's entries are looked at (a palace a year old has tens of thousands).
  const unlisted = indexed.filesOfWing(wing).filter((file) => !seen.has(file) && manifest[file]?.mode === mode && under(root, file));
  const gone = unlisted.filter((f) => !existsSync(f));
  report.files_vanished = gone.length;
  const targets = request.limit ? gone : unlisted;
  if (request.prune && targets.length > 0 && !report.aborted) {
    if (!dryRun) {
      const m = await open();
      report.drawers_removed += await hooks.step(async () => {
        const removed = await m.removeSources(targets);
        commitManifest(palacePath, new Map(targets.map((f) => [f, null])));
        return removed;
      });
    }
    report.files_pruned = targets.length;
  }
  return report;
}

/** A one-line summary of a mine for people. */
export function mineSummary(r: MineReport): string {
  const verb = r.dry_run ? 'would file' : 'filed';
  return (
    `${r.dry_run ? '[dry run] ' : ''}${basename(r.source)} → wing ${r.wing}: ${r.files_mined} files mined, ${verb} ${r.drawers_filed} drawers` +
    `; ${r.files_unchanged} unchanged, ${r.files_skipped} skipped` +
    (r.drawers_removed ? `; ${r.drawers_removed} old drawers replaced or removed` : '') +
    (r.chunks_with_secrets_skipped ? `; ${r.chunks_with_secrets_skipped} chunks with secrets left out` : '') +
    (r.files_vanished ? `; ${r.files_vanished} mined files are gone (drawers kept; --prune removes them)` : '') +
    (r.files_pruned ? `; ${r.files_pruned} files pruned` : '') +
    (r.errors.length ? `; ${r.errors.length} errors` : '')
  );
}
