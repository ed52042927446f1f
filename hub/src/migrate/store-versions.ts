// `palace migrate`: the version of each of the palace's own stores against the version this build
// writes, and bringing them current through each store's own migration code (opening a store
// migrates it). Nothing here knows a schema; a dry run only reads.

import type { PalaceConfig } from '../config.js';
import { readEmbedderRecord } from '../embed/select.js';
import type { Logger } from '../log.js';
import { Logstream } from '../logstream/logstream.js';
import { SCHEMA_VERSION } from '../logstream/schema.js';
import { readLogSchemaVersion } from '../logstream/schema-status.js';
import { KG_SCHEMA_VERSION } from '../kg/kg-schema.js';
import { readKgSchemaVersion } from '../kg/kg-import.js';
import { KnowledgeGraph } from '../kg/knowledge-graph.js';
import { JOURNAL_SCHEMA_VERSION, MemoryJournal, readJournalPending, readJournalVersion } from '../memory/drawers/memory-journal.js';
import { openMemory } from '../memory/drawers/open-memory.js';
import type { Memory } from '../memory/drawers/memory.js';
import { IN_PLACE_COLUMNS } from '../vector/lancedb-vector-store.js';
import { readLanceLayout } from '../vector/lancedb-layout.js';
import { rechunkProjectDrawers, type RechunkReport } from './code-drawers.js';

/** One store: its version before and after, and the version this build writes. */
export interface StoreVersion {
  store: 'logstream' | 'knowledge_graph' | 'memory_journal' | 'embedder_record' | 'vectors' | 'code_chunks';
  file: string;
  before: string | number | null;
  after: string | number | null;
  current: string | number;
  /** Whether a migration was (or, dry, would be) applied. */
  pending: boolean;
  note?: string;
}

export interface MigrateReport {
  palace: string;
  dry_run: boolean;
  stores: StoreVersion[];
  /** No store needed a migration. */
  up_to_date: boolean;
  /** Something a migration cannot do by itself (e.g. a vectors layout that needs a rebuild). */
  actions: string[];
  /** Mined project drawers from before code-aware chunking, re-chunked (code-drawers.ts). */
  code_chunks?: RechunkReport;
}

function schemaStore(
  store: StoreVersion['store'],
  file: string,
  before: number | null,
  current: number,
  migrate: () => void,
  dryRun: boolean,
): StoreVersion {
  // An absent file is created at the current version on first use: nothing to migrate.
  if (before === null) return { store, file, before, after: null, current, pending: false, note: 'not created yet (made at the current version on first use)' };
  if (before > current) return { store, file, before, after: before, current, pending: false, note: 'written by a newer palace; upgrade palace' };
  const pending = before < current;
  if (pending && !dryRun) migrate();
  return { store, file, before, after: pending && !dryRun ? current : before, current, pending };
}

export async function migratePalaceStores(config: Readonly<PalaceConfig>, palacePath: string, log: Logger, dryRun: boolean): Promise<MigrateReport> {
  const actions: string[] = [];
  const stores: StoreVersion[] = [
    schemaStore('logstream', 'logstream.sqlite3', readLogSchemaVersion(palacePath), SCHEMA_VERSION, () => Logstream.open(palacePath, { durability: config.durability }).close(), dryRun),
    schemaStore('knowledge_graph', 'knowledge_graph.sqlite3', readKgSchemaVersion(palacePath), KG_SCHEMA_VERSION, () => new KnowledgeGraph(palacePath).close(), dryRun),
    schemaStore('memory_journal', 'memory-journal.sqlite3', readJournalVersion(palacePath), JOURNAL_SCHEMA_VERSION, () => MemoryJournal.open(palacePath).close(), dryRun),
  ];
  const waiting = readJournalPending(palacePath);
  if (waiting > 0) actions.push(`${waiting} memory write(s) are journaled but not indexed: run \`palace replay\``);

  const layout = config.backend === 'lancedb' ? await readLanceLayout(palacePath) : null;
  const record = readEmbedderRecord(palacePath);
  const recordText = record ? `${record.model}/${record.dimensions}` : null;
  const hasDrawers = (layout?.rows ?? 0) > 0;
  const embedderStore: StoreVersion = { store: 'embedder_record', file: 'embedder.json', before: recordText, after: recordText, current: 'recorded', pending: !record && hasDrawers };
  if (!record && !hasDrawers) embedderStore.note = 'recorded with the first drawer';
  if (embedderStore.pending && !dryRun) {
    // Opening the memory is what records the embedder of a palace that has drawers but no record.
    const memory = await openMemory(config, palacePath, log);
    await memory.close();
    const after = readEmbedderRecord(palacePath);
    embedderStore.after = after ? `${after.model}/${after.dimensions}` : null;
  }
  stores.push(embedderStore);

  if (config.backend !== 'lancedb') {
    stores.push({ store: 'vectors', file: config.backend, before: 'managed by the backend', after: 'managed by the backend', current: 'managed by the backend', pending: false });
  } else if (!layout) {
    stores.push({ store: 'vectors', file: 'vectors/', before: null, after: null, current: 'current', pending: false, note: 'not created yet' });
  } else {
    // Columns added in place when the table opens (keywords) are a migration; others need a rebuild.
    const inPlace = layout.missing.filter((c) => IN_PLACE_COLUMNS.includes(c));
    const rebuild = layout.missing.filter((c) => !IN_PLACE_COLUMNS.includes(c));
    const state = layout.missing.length === 0 ? 'current' : `missing ${layout.missing.join(', ')}`;
    const after = inPlace.length > 0 && !dryRun ? (rebuild.length === 0 ? 'current' : `missing ${rebuild.join(', ')}`) : state;
    stores.push({
      store: 'vectors',
      file: 'vectors/',
      before: state,
      after,
      current: 'current',
      pending: inPlace.length > 0,
      ...(rebuild.length ? { note: 'no in-place migration exists for the vectors table' } : inPlace.length ? { note: `${inPlace.join(', ')} added in place` } : {}),
    });
    if (inPlace.length > 0 && !dryRun) await (await openMemory(config, palacePath, log)).close();
    if (rebuild.length) actions.push('the vectors table lacks columns this palace writes: run `palace repair --mode rebuild` (re-embeds every drawer into the current layout)');
    const keys = Object.keys(layout.by_embedder);
    if (record && keys.some((k) => k !== `${record.model}/${record.dimensions}`))
      actions.push(`some drawers were embedded by another model (${keys.join(', ')}): run \`palace repair --mode rebuild\``);
  }
  // Mined project drawers chunked before code-aware chunking: re-chunk the files still unchanged.
  let codeChunks: RechunkReport | undefined;
  const hasMemory = config.backend !== 'lancedb' || (layout?.rows ?? 0) > 0;
  // Opening the memory writes what the migrations above would: a dry run counts only when none is pending.
  if (hasMemory && dryRun && stores.some((s) => s.pending))
    stores.push({ store: 'code_chunks', file: 'mined project drawers', before: null, after: null, current: 'current', pending: false, note: 'counted once the migrations above have run' });
  else if (hasMemory) {
    let memory: Memory | undefined;
    try {
      memory = await openMemory(config, palacePath, log);
      codeChunks = await rechunkProjectDrawers(memory, palacePath, dryRun);
    } finally {
      await memory?.close();
    }
    const c = codeChunks;
    const left = c.files_old - c.files_rechunked;
    stores.push({
      store: 'code_chunks',
      file: 'mined project drawers',
      before: c.files_old === 0 ? 'current' : `${c.files_old} files in character chunks`,
      after: dryRun || c.files_rechunked === 0 ? (c.files_old === 0 ? 'current' : `${c.files_old} files in character chunks`) : left === 0 ? 'current' : `${left} files in character chunks`,
      current: 'current',
      pending: c.files_rechunked > 0,
      ...(c.files_old > 0 ? { note: `${c.files_rechunked} unchanged files re-chunked${dryRun ? ' (dry run: would be)' : ''}; ${c.files_changed} changed, ${c.files_gone} gone` } : {}),
    });
    if (c.files_changed > 0) actions.push(`${c.files_changed} mined file(s) changed since they were mined: run \`palace mine\` on their folders to re-chunk them`);
  }
  return { palace: palacePath, dry_run: dryRun, stores, up_to_date: stores.every((s) => !s.pending), actions, ...(codeChunks ? { code_chunks: codeChunks } : {}) };
}
