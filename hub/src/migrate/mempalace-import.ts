// `palace migrate --from-mempalace`: brings a Python MemPalace palace over. Logstream events and
// artifacts go through the sync ingest path (ids, sha256 and origin stamps kept), KG facts keep their
// ids and validity, drawers keep ids and placement and are re-embedded through the memory. Resumable:
// drawer progress is recorded in the journal db; every phase skips what is already held.

import { createHash } from 'node:crypto';

import { dict, own } from '../core/dict.js';
import { findSecret } from '../core/secrets.js';
import type { ReplicatedEvent } from '../core/replication.js';
import { toHubError } from '../errors.js';
import type { Logstream } from '../logstream/logstream.js';
import { SqliteEventStore } from '../logstream/sqlite-event-store.js';
import { readLogSchemaVersion } from '../logstream/schema-status.js';
import { LOGSTREAM_FILE } from '../logstream/logstream.js';
import { importKgFacts, type KgImportReport } from '../kg/kg-import.js';
import { IMPORTED_DRAWER_ID, MEMORY_LIMITS, placeName } from '../memory/drawers/drawer-input.js';
import type { Memory } from '../memory/drawers/memory.js';
import type { MemoryJournal } from '../memory/drawers/memory-journal.js';
import type { StoredDrawer } from '../vector/vector-store.js';
import { ChromaDrawerReader, readMemPalaceKg, readMemPalaceLog, type ChromaDrawer, type MemPalaceFiles } from './mempalace-reader.js';

const PAGE = 256;
const EVENT_CHUNK = 500;
const KNOWN_KEYS = new Set(['wing', 'room', 'source_file', 'chunk_index', 'filed_at', 'added_by']);

export type ImportedDrawer = Omit<StoredDrawer, 'vector' | 'embedder'>;

export interface DrawersReport {
  total: number;
  filed: number;
  present: number;
  /** Ids that were not usable as ours and were given a derived id (the original is in metadata.mempalace_id). */
  renamed: number;
  skipped_secret: Array<{ id: string; kind: string; line: number }>;
  skipped_invalid: Array<{ id: string; reason: string }>;
  resumed_after_row: number;
  already_done: boolean;
}

export interface LogImportReport {
  events_total: number;
  events_applied: number;
  events_present: number;
  artifacts_total: number;
  artifacts_added: number;
  artifacts_present: number;
  skipped: Array<{ id: string; reason: string }>;
}

export interface ImportReport {
  source: string;
  palace: string;
  dry_run: boolean;
  files: MemPalaceFiles;
  drawers: DrawersReport | null;
  kg: KgImportReport | null;
  logstream: LogImportReport | null;
}

/** Where the import writes; each is opened only when its phase runs (and never on a dry run). */
export interface ImportTargets {
  palacePath: string;
  memory: () => Promise<Memory>;
  logstream: () => Logstream;
  /** The journal db, for drawer progress (absent on a dry run). */
  journal: MemoryJournal | undefined;
}

export interface ImportOptions {
  dryRun: boolean;
  /** Legacy wing name → wing in this palace (`--wing-map old=new`). */
  wingMap: Readonly<Record<string, string>>;
  onProgress?: (phase: 'drawers' | 'kg' | 'logstream', done: number, total: number) => void;
  now?: () => Date;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : typeof value === 'number' ? String(value) : null;
}

/** A MemPalace Chroma row as one of our drawers, or why it cannot be one. */
export function mapChromaDrawer(
  c: ChromaDrawer,
  wingMap: Readonly<Record<string, string>>,
  now: Date,
): { drawer: ImportedDrawer; renamed: boolean } | { secret: { kind: string; line: number } } | { invalid: string } {
  const content = c.document;
  if (content === null || content.trim() === '') return { invalid: 'no document text' };
  if (content.includes('\u0000')) return { invalid: 'document contains a NUL byte' };
  if (Buffer.byteLength(content, 'utf8') > MEMORY_LIMITS.contentBytes) return { invalid: `document is over ${MEMORY_LIMITS.contentBytes} bytes` };
  const secret = findSecret(content);
  if (secret) return { secret };
  const legacyWing = text(c.metadata.wing) ?? 'mempalace';
  let wing: string;
  let room: string;
  try {
    wing = placeName('wing', own(wingMap, legacyWing) ?? legacyWing);
    room = placeName('room', text(c.metadata.room) ?? 'general');
  } catch (err) {
    return { invalid: toHubError(err).message };
  }
  const keep = /^drawer_[0-9a-f]{24}$/.test(c.id) || IMPORTED_DRAWER_ID.test(c.id);
  const id = keep ? c.id : `drawer_${createHash('sha256').update(`mempalace\u0000${c.id}`).digest('hex').slice(0, 24)}`;
  const metadata = dict<unknown>();
  metadata.imported_from = 'mempalace';
  for (const [k, v] of Object.entries(c.metadata)) if (!KNOWN_KEYS.has(k)) metadata[k] = v;
  if (!keep) metadata.mempalace_id = c.id;
  const chunk = Number(c.metadata.chunk_index);
  return {
    renamed: !keep,
    drawer: {
      id,
      wing,
      room,
      tags: [],
      content,
      source_file: text(c.metadata.source_file),
      chunk_index: Number.isInteger(chunk) && chunk >= 0 ? chunk : 0,
      parent_id: null,
      filed_at: text(c.metadata.filed_at) ?? now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      added_by: text(c.metadata.added_by) ?? 'mempalace',
      useful: null,
      metadata,
    },
  };
}

async function importDrawers(path: string, targets: ImportTargets, options: ImportOptions, source: string): Promise<DrawersReport> {
  const reader = new ChromaDrawerReader(path);
  const now = (options.now ?? (() => new Date()))();
  try {
    const total = reader.count();
    const state = targets.journal?.importState(source, 'drawers');
    const report: DrawersReport = {
      total,
      filed: 0,
      present: state?.counts.present ?? 0,
      renamed: 0,
      skipped_secret: [],
      skipped_invalid: [],
      resumed_after_row: state?.cursor ?? 0,
      already_done: state?.done ?? false,
    };
    if (state?.done) {
      report.present = total - (state.counts.skipped ?? 0);
      options.onProgress?.('drawers', total, total);
      return report;
    }
    const memory = options.dryRun ? undefined : await targets.memory();
    let cursor = state?.cursor ?? 0;
    let seen = total - reader.countAfter(cursor);
    for (;;) {
      const page = reader.page(cursor, PAGE);
      if (page.length === 0) break;
      const batch: ImportedDrawer[] = [];
      for (const c of page) {
        const mapped = mapChromaDrawer(c, options.wingMap, now);
        if ('secret' in mapped) report.skipped_secret.push({ id: c.id, ...mapped.secret });
        else if ('invalid' in mapped) report.skipped_invalid.push({ id: c.id, reason: mapped.invalid });
        else {
          batch.push(mapped.drawer);
          if (mapped.renamed) report.renamed++;
        }
      }
      if (memory) {
        const r = await memory.restoreDrawers(batch);
        report.filed += r.imported.length;
        report.present += r.skipped.length;
      } else report.filed += batch.length;
      cursor = page[page.length - 1]?.row ?? cursor;
      seen += page.length;
      targets.journal?.saveImportState(source, 'drawers', {
        cursor,
        done: false,
        counts: { present: report.present + report.filed, skipped: (state?.counts.skipped ?? 0) + report.skipped_secret.length + report.skipped_invalid.length },
      });
      options.onProgress?.('drawers', Math.min(total, seen), total);
    }
    const prior = targets.journal?.importState(source, 'drawers');
    if (prior) targets.journal?.saveImportState(source, 'drawers', { ...prior, done: true });
    return report;
  } finally {
    reader.close();
  }
}

/** Events and artifacts through the sync ingest path; each once. A dry run only counts. */
function importLog(path: string, targets: ImportTargets, options: ImportOptions): LogImportReport {
  const { events, artifacts } = readMemPalaceLog(path);
  const report: LogImportReport = {
    events_total: events.length,
    events_applied: 0,
    events_present: 0,
    artifacts_total: artifacts.length,
    artifacts_added: 0,
    artifacts_present: 0,
    skipped: [],
  };
  if (options.dryRun) {
    const exists = readLogSchemaVersion(targets.palacePath) !== null;
    const store = exists ? new SqliteEventStore(`${targets.palacePath}/${LOGSTREAM_FILE}`, { readonly: true, mintReplicaId: () => 'rep_000000000000' }) : undefined;
    try {
      for (const a of artifacts) if (store?.replica.hasArtifact(a.id)) report.artifacts_present++;
      else report.artifacts_added++;
      for (const e of events) if (store?.getEvent(e.id)) report.events_present++;
      else report.events_applied++;
    } finally {
      store?.close();
    }
    return report;
  }
  const replica = targets.logstream().store.replica;
  for (const a of artifacts) {
    try {
      if (replica.applyRemoteArtifact(a)) report.artifacts_added++;
      else report.artifacts_present++;
    } catch (err) {
      report.skipped.push({ id: a.id, reason: toHubError(err).message });
    }
  }
  options.onProgress?.('logstream', 0, events.length);
  let done = 0;
  // Events arrive sorted by origin, then origin_seq: apply each origin's run in order, stepping over
  // (and reporting) an event that cannot be stored rather than stopping the whole import there.
  let rest: ReplicatedEvent[] = events;
  while (rest.length > 0) {
    const chunk = rest.slice(0, EVENT_CHUNK);
    const result = replica.applyRemoteEvents(chunk);
    report.events_applied += result.applied;
    report.events_present += result.duplicates;
    if (result.failed) {
      const at = chunk.findIndex((e) => e.id === result.failed?.event_id);
      report.skipped.push({ id: result.failed.event_id, reason: result.failed.error.message });
      const consumed = at < 0 ? chunk.length : at + 1;
      rest = rest.slice(consumed);
      done += consumed;
    } else {
      rest = rest.slice(chunk.length);
      done += chunk.length;
    }
    options.onProgress?.('logstream', done, events.length);
  }
  return report;
}

/** Runs every phase whose source file exists; returns what was (or, dry, would be) brought over. */
export async function importMemPalace(files: MemPalaceFiles, targets: ImportTargets, options: ImportOptions): Promise<ImportReport> {
  const source = files.dir;
  const report: ImportReport = { source, palace: targets.palacePath, dry_run: options.dryRun, files, drawers: null, kg: null, logstream: null };
  if (files.logstream) report.logstream = importLog(files.logstream, targets, options);
  if (files.kg) {
    const { entities, triples } = readMemPalaceKg(files.kg);
    options.onProgress?.('kg', 0, triples.length);
    report.kg = importKgFacts(targets.palacePath, entities, triples, { dryRun: options.dryRun });
    options.onProgress?.('kg', triples.length, triples.length);
  }
  if (files.chroma) report.drawers = await importDrawers(files.chroma, targets, options, source);
  return report;
}
