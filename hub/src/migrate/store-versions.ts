// `palace migrate`: the version of each of the palace's own stores against the version this build
// writes, and bringing them current through each store's own migration code (opening a store
// migrates it). Nothing here knows a schema; a dry run only reads.

import type { PalaceConfig } from '../config.js';
import { readEmbedderRecord } from '../embed/select.js';
import type { Logger } from '../log.js';
import { Logstream } from '../logstream/logstream.js';
import { SCHEMA_VERSION } from '../logstream/schema.js';
import { readLogSchemaVersion } from '../logstream/schema-status.js';
import { KG_SCHEMA_VERSION } from '../memory/kg/kg-schema.js';
import { readKgSchemaVersion } from '../memory/kg/kg-import.js';
import { KnowledgeGraph } from '../memory/kg/knowledge-graph.js';
import { JOURNAL_SCHEMA_VERSION, MemoryJournal, readJournalPending, readJournalVersion } from '../memory/memory-journal.js';
import { openMemory } from '../memory/open-memory.js';
import { readLanceLayout } from '../vector/lancedb-layout.js';

/** One store: its version before and after, and the version this build writes. */
export interface StoreVersion {
  store: 'logstream' | 'knowledge_graph' | 'memory_journal' | 'embedder_record' | 'vectors';
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
    const state = layout.missing.length === 0 ? 'current' : `missing ${layout.missing.join(', ')}`;
    stores.push({ store: 'vectors', file: 'vectors/', before: state, after: state, current: 'current', pending: false, ...(layout.missing.length ? { note: 'no in-place migration exists for the vectors table' } : {}) });
    if (layout.missing.length) actions.push('the vectors table lacks columns this palace writes: run `palace repair --mode rebuild` (re-embeds every drawer into the current layout)');
    const keys = Object.keys(layout.by_embedder);
    if (record && keys.some((k) => k !== `${record.model}/${record.dimensions}`))
      actions.push(`some drawers were embedded by another model (${keys.join(', ')}): run \`palace repair --mode rebuild\``);
  }
  return { palace: palacePath, dry_run: dryRun, stores, up_to_date: stores.every((s) => !s.pending), actions };
}
