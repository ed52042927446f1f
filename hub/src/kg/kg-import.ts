// Imports facts from another knowledge graph (a MemPalace `knowledge_graph.sqlite3`) into ours,
// keeping triple ids and validity, each once (idempotent by triple id); and reads our KG's schema
// version without migrating it. SQL to our KG file stays in this folder.

import { join } from 'node:path';
import Database from 'better-sqlite3';

import { toHubError } from '../errors.js';
import { migrateKg } from './kg-schema.js';
import { parseWhen } from './kg-time.js';
import { entityId, KG_FILE } from './knowledge-graph.js';
import { readUserVersion } from '../sqlite-user-version.js';

/** An entity as the other graph has it (id = its normalized name). */
export interface ForeignEntity {
  id: string;
  name: string;
  type: string | null;
  created_at: string | null;
}

/** A triple as the other graph has it: subject and object are entity ids there. */
export interface ForeignTriple {
  id: string;
  subject: string;
  predicate: string;
  object: string;
  valid_from: string | null;
  valid_to: string | null;
  confidence: number | null;
  source_file: string | null;
  source_drawer_id: string | null;
  added_by: string | null;
  created_at: string | null;
}

export interface KgImportReport {
  entities_added: number;
  triples_added: number;
  triples_present: number;
  skipped: Array<{ triple_id: string; reason: string }>;
}

/** Our KG's schema version (PRAGMA user_version) without migrating it; null when the file is absent. */
export function readKgSchemaVersion(palacePath: string): number | null {
  return readUserVersion(join(palacePath, KG_FILE));
}

function typeWord(value: string | null): string {
  const t = (value ?? '').trim().toLowerCase();
  return /^[a-z][\w-]{0,63}$/.test(t) ? t : 'unknown';
}

/**
 * Adds the foreign facts to the palace's KG in one transaction. Dry: counts what would be added and
 * writes nothing (the KG file is not even created).
 */
export function importKgFacts(palacePath: string, entities: readonly ForeignEntity[], triples: readonly ForeignTriple[], options: { dryRun?: boolean; now?: () => Date } = {}): KgImportReport {
  const now = (options.now ?? (() => new Date()))().toISOString();
  const report: KgImportReport = { entities_added: 0, triples_added: 0, triples_present: 0, skipped: [] };
  const path = join(palacePath, KG_FILE);
  let db: Database.Database | undefined;
  if (options.dryRun) {
    try {
      db = new Database(path, { readonly: true, fileMustExist: true });
    } catch {
      db = undefined;
    }
  } else {
    db = new Database(path, { timeout: 10_000 });
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    migrateKg(db);
  }
  const names = new Map(entities.map((e) => [e.id, e]));
  try {
    const has = (sql: string, id: string): boolean => {
      if (!db) return false;
      try {
        return db.prepare(sql).get(id) !== undefined;
      } catch {
        return false; // dry run on a file without the tables yet
      }
    };
    const seenEntities = new Set<string>();
    const ensureEntity = (foreignId: string): string => {
      const e = names.get(foreignId);
      const name = e?.name?.trim() || foreignId;
      const id = entityId('entity', name);
      if (!seenEntities.has(id) && !has('SELECT 1 FROM entities WHERE id = ?', id)) {
        if (!options.dryRun) db?.prepare('INSERT INTO entities(id, name, type, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO NOTHING').run(id, name, typeWord(e?.type ?? null), e?.created_at ?? now);
        report.entities_added++;
      }
      seenEntities.add(id);
      return id;
    };
    const run = (): void => {
      for (const t of triples) {
        try {
          if (has('SELECT 1 FROM triples WHERE id = ?', t.id)) {
            report.triples_present++;
            continue;
          }
          const from = parseWhen('valid_from', t.valid_from, 'start');
          const to = parseWhen('valid_to', t.valid_to, 'end');
          if (from && to && to.ts < from.ts) throw new Error(`valid_to (${to.text}) is before valid_from (${from.text})`);
          const predicate = t.predicate.trim().toLowerCase().replace(/\s+/g, '_');
          if (predicate === '') throw new Error('empty predicate');
          const confidence = typeof t.confidence === 'number' && t.confidence >= 0 && t.confidence <= 1 ? t.confidence : 1;
          const subjectId = ensureEntity(t.subject);
          const objectId = ensureEntity(t.object);
          if (!options.dryRun)
            db?.prepare(
              `INSERT OR IGNORE INTO triples(id, subject_id, predicate, object_id, valid_from, valid_to, from_ts, to_ts, confidence, source_file, source_drawer_id, added_by, created_at, invalidated_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
            ).run(t.id, subjectId, predicate, objectId, from?.text ?? null, to?.text ?? null, from?.ts ?? '', to?.ts ?? null, confidence, t.source_file, t.source_drawer_id, t.added_by ?? 'mempalace-import', t.created_at ?? now, null);
          report.triples_added++;
        } catch (err) {
          report.skipped.push({ triple_id: t.id, reason: toHubError(err).message });
        }
      }
    };
    if (db && !options.dryRun) db.transaction(run).immediate();
    else run();
  } finally {
    db?.close();
  }
  return report;
}
