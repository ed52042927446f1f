// The knowledge graph over `<palace>/knowledge_graph.sqlite3`: temporal triples between typed
// entities. Facts are closed (valid_to), never deleted; the only SQL to this file lives in this folder.

import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

import { HubError, invalid } from '../errors.js';
import { statementCache, type StatementCache } from '../sqlite-statements.js';
import { migrateKg } from './kg-schema.js';
import { parseInstant, parseWhen, type When } from './kg-time.js';

export const KG_FILE = 'knowledge_graph.sqlite3';
/** Most rows one timeline call returns; page on with `cursor`. */
export const KG_TIMELINE_MAX = 100;

/** One fact as tools and the CLI show it. */
export interface KgFact {
  triple_id: string;
  subject: string;
  subject_type: string;
  predicate: string;
  object: string;
  object_type: string;
  valid_from: string | null;
  valid_to: string | null;
  /** Valid now: not closed, or closed at a time still ahead. */
  current: boolean;
  confidence: number;
  source_file: string | null;
  source_drawer_id: string | null;
  /** Who added the fact (the spec's name). */
  created_by: string | null;
  /** Deprecated alias of created_by, still returned for one release; read created_by. */
  added_by: string | null;
  created_at: string;
  /** The hub the fact was first stated on (replica id): shown for replicated facts and conflicting ones. */
  origin?: string;
  /**
   * Another hub states a different current object for the same subject and predicate (docs/memory-replication.md):
   * both are kept, marked, until one is superseded or invalidated.
   */
  conflicting?: true;
}

export interface KgAddInput {
  subject?: unknown;
  predicate?: unknown;
  object?: unknown;
  subject_type?: unknown;
  object_type?: unknown;
  valid_from?: unknown;
  valid_to?: unknown;
  confidence?: unknown;
  source_file?: unknown;
  source_drawer_id?: unknown;
  added_by?: unknown;
}

interface FactRow {
  seq: number;
  id: string;
  subject_id: string;
  subject: string;
  subject_type: string;
  predicate: string;
  object: string;
  object_type: string;
  valid_from: string | null;
  valid_to: string | null;
  from_ts: string;
  to_ts: string | null;
  confidence: number;
  source_file: string | null;
  source_drawer_id: string | null;
  added_by: string | null;
  created_at: string;
  origin: string | null;
}

const FACT_SELECT = `
  SELECT t.seq, t.id, t.subject_id, t.origin, s.name AS subject, s.type AS subject_type, t.predicate, o.name AS object, o.type AS object_type,
         t.valid_from, t.valid_to, t.from_ts, t.to_ts, t.confidence, t.source_file, t.source_drawer_id, t.added_by, t.created_at
  FROM triples t JOIN entities s ON s.id = t.subject_id JOIN entities o ON o.id = t.object_id`;

const VALID_AT = `(t.from_ts <= @at AND (t.to_ts IS NULL OR t.to_ts > @at))`;

/** Entity id: lower case, whitespace runs → `_`, apostrophes dropped. */
export function entityId(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid(field, `${field} must be a non-empty string`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw invalid(field, `${field} contains a control character`);
  if (value.length > 256) throw invalid(field, `${field} is longer than 256 characters`);
  const id = value.trim().toLowerCase().replace(/['’]/g, '').replace(/\s+/g, '_');
  if (id === '') throw invalid(field, `${field} must contain a letter or digit`);
  return id;
}

function predicateOf(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid('predicate', 'predicate must be a non-empty string');
  if (value.length > 128) throw invalid('predicate', 'predicate is longer than 128 characters');
  return value.trim().toLowerCase().replace(/\s+/g, '_');
}

function optionalText(field: string, value: unknown, max = 1024): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || value.length > max) throw invalid(field, `${field} must be a string of at most ${max} characters`);
  return value;
}

function typeOf(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !/^[A-Za-z][\w-]{0,63}$/.test(value)) throw invalid(field, `${field} must be a short word such as person, project, tool`);
  return value.toLowerCase();
}

function cursorOf(row: { from_ts: string; seq: number }): string {
  return Buffer.from(JSON.stringify([row.from_ts, row.seq])).toString('base64url');
}

function parseCursor(value: unknown): [string, number] | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(String(value), 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(parsed) && typeof parsed[0] === 'string' && Number.isInteger(parsed[1])) return [parsed[0], parsed[1] as number];
  } catch {
    // fall through
  }
  throw invalid('cursor', 'cursor is not one this hub handed out; start again without it');
}

export class KnowledgeGraph {
  readonly path: string;
  private readonly db: Database.Database;
  private readonly now: () => Date;
  private readonly stmt: StatementCache;

  /** Hears every fact this hub states or closes itself (memory replication, docs/memory-replication.md); not replicated ones. */
  private readonly onChange: ((facts: readonly KgFact[]) => void) | undefined;
  /** This hub's replica id: the origin of the facts stated here (stored as NULL). */
  private readonly localOrigin: string | undefined;

  constructor(palacePath: string, options: { now?: () => Date; onChange?: (facts: readonly KgFact[]) => void; origin?: string } = {}) {
    this.onChange = options.onChange;
    this.localOrigin = options.origin;
    mkdirSync(palacePath, { recursive: true, mode: 0o700 });
    this.path = join(palacePath, KG_FILE);
    this.now = options.now ?? (() => new Date());
    try {
      this.db = new Database(this.path, { timeout: 10_000 });
      this.stmt = statementCache(this.db);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma('foreign_keys = ON');
      migrateKg(this.db);
    } catch (err) {
      throw new HubError('store.failed', `cannot open the knowledge graph at ${this.path}: ${(err as Error).message}`, { cause: err });
    }
  }

  private nowIso(): string {
    return this.now().toISOString();
  }

  private originOf(r: { origin: string | null }): string {
    return r.origin ?? this.localOrigin ?? 'local';
  }

  /**
   * The ids among `rows` of current facts in conflict: another origin holds a current fact with the
   * same subject and predicate and a different object. A predicate one origin itself uses with two
   * current objects for that subject is multi-valued there, and marks nothing.
   */
  private conflictsAmong(rows: readonly FactRow[]): Set<string> {
    const now = this.nowIso();
    const out = new Set<string>();
    const seen = new Set<string>();
    for (const r of rows) {
      const key = `${r.subject_id}\u0000${r.predicate}`;
      if (seen.has(key) || !(r.from_ts <= now && (r.to_ts === null || r.to_ts > now))) continue;
      seen.add(key);
      const open = this.stmt(`SELECT id, object_id, origin FROM triples WHERE subject_id = ? AND predicate = ? AND from_ts <= ? AND (to_ts IS NULL OR to_ts > ?)`).all(
        r.subject_id,
        r.predicate,
        now,
        now,
      ) as Array<{ id: string; object_id: string; origin: string | null }>;
      if (open.length < 2) continue;
      const byOrigin = new Map<string, Set<string>>();
      for (const o of open) {
        const origin = this.originOf(o);
        byOrigin.set(origin, (byOrigin.get(origin) ?? new Set()).add(o.object_id));
      }
      if (byOrigin.size < 2 || [...byOrigin.values()].some((objects) => objects.size > 1)) continue;
      if (new Set(open.map((o) => o.object_id)).size < 2) continue; // every hub agrees
      for (const o of open) out.add(o.id);
    }
    return out;
  }

  private toFacts(rows: readonly FactRow[]): KgFact[] {
    const conflicts = this.conflictsAmong(rows);
    return rows.map((r) => this.toFact(r, conflicts));
  }

  private toFact(r: FactRow, conflicts?: ReadonlySet<string>): KgFact {
    const now = this.nowIso();
    const conflicting = conflicts?.has(r.id) === true;
    const replicated = r.origin !== null && r.origin !== this.localOrigin;
    return {
      triple_id: r.id,
      subject: r.subject,
      subject_type: r.subject_type,
      predicate: r.predicate,
      object: r.object,
      object_type: r.object_type,
      valid_from: r.valid_from,
      valid_to: r.valid_to,
      current: r.from_ts <= now && (r.to_ts === null || r.to_ts > now),
      confidence: r.confidence,
      source_file: r.source_file,
      source_drawer_id: r.source_drawer_id,
      created_by: r.added_by,
      added_by: r.added_by,
      created_at: r.created_at,
      ...(replicated || conflicting ? { origin: this.originOf(r) } : {}),
      ...(conflicting ? { conflicting: true as const } : {}),
    };
  }

  private upsertEntity(id: string, name: string, type: string | undefined): void {
    this.stmt(`INSERT INTO entities(id, name, type, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO NOTHING`).run(id, name.trim(), type ?? 'unknown', this.nowIso());
    if (type) this.stmt(`UPDATE entities SET type = ? WHERE id = ?`).run(type, id);
  }

  private factById(id: string): KgFact {
    const row = this.stmt(`${FACT_SELECT} WHERE t.id = ?`).get(id) as FactRow | undefined;
    if (!row) throw new HubError('kg.not_found', `triple '${id}' not found`);
    return this.toFacts([row])[0] as KgFact;
  }

  private openMatches(subjectId: string, predicate: string, objectId: string): FactRow[] {
    return this.stmt(`${FACT_SELECT} WHERE t.subject_id = ? AND t.predicate = ? AND t.object_id = ? AND t.valid_to IS NULL ORDER BY t.seq`).all(
      subjectId,
      predicate,
      objectId,
    ) as FactRow[];
  }

  private addRaw(input: KgAddInput, from: When | undefined, to: When | undefined): { triple_id: string; fact: KgFact; existing: boolean } {
    const subjectId = entityId('subject', input.subject);
    const objectId = entityId('object', input.object);
    const predicate = predicateOf(input.predicate);
    const confidence = input.confidence ?? 1;
    if (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1)) throw invalid('confidence', 'confidence must be a number from 0 to 1');
    if (from && to && to.ts < from.ts) throw invalid('valid_to', `valid_to (${to.text}) is before valid_from (${from.text})`);
    const subjectType = typeOf('subject_type', input.subject_type);
    const objectType = typeOf('object_type', input.object_type);
    const source = optionalText('source_file', input.source_file);
    const drawer = optionalText('source_drawer_id', input.source_drawer_id, 128);
    const addedBy = optionalText('added_by', input.added_by, 256);
    this.upsertEntity(subjectId, String(input.subject), subjectType);
    this.upsertEntity(objectId, String(input.object), objectType);
    // The same still-open fact is not stated twice.
    const open = to ? undefined : this.openMatches(subjectId, predicate, objectId)[0];
    if (open) return { triple_id: open.id, fact: this.toFacts([open])[0] as KgFact, existing: true };
    const id = `t_${randomBytes(8).toString('hex')}`;
    this.stmt(
      `INSERT INTO triples(id, subject_id, predicate, object_id, valid_from, valid_to, from_ts, to_ts, confidence, source_file, source_drawer_id, added_by, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(id, subjectId, predicate, objectId, from?.text ?? null, to?.text ?? null, from?.ts ?? '', to?.ts ?? null, confidence, source, drawer, addedBy, this.nowIso());
    return { triple_id: id, fact: this.factById(id), existing: false };
  }

  /** States a fact. An identical fact still open is returned (existing: true) instead of a second copy. */
  add(input: KgAddInput): { triple_id: string; fact: KgFact; existing: boolean } {
    const from = parseWhen('valid_from', input.valid_from, 'start');
    const to = parseWhen('valid_to', input.valid_to, 'end');
    const r = this.db.transaction(() => this.addRaw(input, from, to)).immediate();
    if (!r.existing) this.onChange?.([r.fact]);
    return r;
  }

  private closeRaw(subject: unknown, predicate: unknown, object: unknown, ended: When): KgFact[] {
    const subjectId = entityId('subject', subject);
    const objectId = entityId('object', object);
    const pred = predicateOf(predicate);
    const open = this.openMatches(subjectId, pred, objectId);
    if (open.length === 0)
      throw new HubError('kg.not_found', `no open fact ${String(subject)} —${pred}→ ${String(object)} to invalidate`, { field: 'object' });
    for (const row of open) {
      if (ended.ts < row.from_ts) throw invalid('ended', `ended (${ended.text}) is before the fact's valid_from (${row.valid_from ?? ''})`);
      this.stmt(`UPDATE triples SET valid_to = ?, to_ts = ?, invalidated_at = ? WHERE seq = ?`).run(ended.text, ended.ts, this.nowIso(), row.seq);
    }
    return open.map((r) => this.factById(r.id));
  }

  /** Closes the open fact(s) subject —predicate→ object at `ended` (default now). Never deletes. */
  invalidate(raw: { subject?: unknown; predicate?: unknown; object?: unknown; ended?: unknown }): { facts: KgFact[]; ended: string } {
    const ended = parseWhen('ended', raw.ended, 'end') ?? parseInstant('ended', undefined, this.now());
    const facts = this.db.transaction(() => this.closeRaw(raw.subject, raw.predicate, raw.object, ended)).immediate();
    this.onChange?.(facts);
    return { facts, ended: ended.text };
  }

  /** Changes a fact atomically: closes subject —predicate→ old_object and opens → new_object at one instant. */
  supersede(raw: { subject?: unknown; predicate?: unknown; old_object?: unknown; new_object?: unknown; at?: unknown; added_by?: unknown; object_type?: unknown }) {
    const at = parseInstant('at', raw.at, this.now());
    const r = this.db
      .transaction(() => {
        const invalidated = this.closeRaw(raw.subject, raw.predicate, raw.old_object, at);
        const added = this.addRaw({ subject: raw.subject, predicate: raw.predicate, object: raw.new_object, object_type: raw.object_type, added_by: raw.added_by }, at, undefined);
        return { at: at.text, invalidated, added: added.fact };
      })
      .immediate();
    this.onChange?.([...r.invalidated, r.added]);
    return r;
  }

  /** Facts touching an entity. With as_of: only those valid then; without: all, each marked current or not. */
  query(raw: { entity?: unknown; as_of?: unknown; direction?: unknown }): { entity: string; as_of: string | null; direction: string; facts: Array<KgFact & { direction: 'outgoing' | 'incoming' }>; count: number } {
    const id = entityId('entity', raw.entity);
    const direction = raw.direction ?? 'both';
    if (direction !== 'outgoing' && direction !== 'incoming' && direction !== 'both') throw invalid('direction', "direction must be 'outgoing', 'incoming' or 'both'");
    const asOf = parseWhen('as_of', raw.as_of, 'as_of');
    const sides: ReadonlyArray<'outgoing' | 'incoming'> = direction === 'both' ? ['outgoing', 'incoming'] : [direction];
    const facts: Array<KgFact & { direction: 'outgoing' | 'incoming' }> = [];
    for (const side of sides) {
      const column = side === 'outgoing' ? 't.subject_id' : 't.object_id';
      const rows = this.stmt(`${FACT_SELECT} WHERE ${column} = @id ${asOf ? `AND ${VALID_AT}` : ''} ORDER BY t.from_ts, t.seq`).all(
        asOf ? { id, at: asOf.ts } : { id },
      ) as FactRow[];
      for (const f of this.toFacts(rows)) facts.push({ direction: side, ...f });
    }
    return { entity: id, as_of: asOf?.text ?? null, direction, facts, count: facts.length };
  }

  /** Facts in chronological order of valid_from (optionally one entity's, up to as_of), ≤100 per page. */
  timeline(raw: { entity?: unknown; as_of?: unknown; limit?: unknown; cursor?: unknown }) {
    const id = raw.entity === undefined || raw.entity === null || raw.entity === '' ? undefined : entityId('entity', raw.entity);
    const asOf = parseWhen('as_of', raw.as_of, 'as_of');
    const limit = raw.limit ?? KG_TIMELINE_MAX;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > KG_TIMELINE_MAX)
      throw invalid('limit', `limit must be a whole number from 1 to ${KG_TIMELINE_MAX}`);
    const after = parseCursor(raw.cursor);
    const where: string[] = [];
    const params: Record<string, unknown> = { limit: limit + 1 };
    if (id) {
      where.push('(t.subject_id = @id OR t.object_id = @id)');
      params.id = id;
    }
    if (asOf) {
      where.push('t.from_ts <= @at');
      params.at = asOf.ts;
    }
    const filtered = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const { limit: _l, ...countParams } = params;
    const total = (this.stmt(`SELECT COUNT(*) AS n FROM triples t ${filtered}`).get(countParams) as { n: number }).n;
    if (after) {
      where.push('(t.from_ts > @after_ts OR (t.from_ts = @after_ts AND t.seq > @after_seq))');
      params.after_ts = after[0];
      params.after_seq = after[1];
    }
    const rows = this.stmt(`${FACT_SELECT} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY t.from_ts, t.seq LIMIT @limit`).all(params) as FactRow[];
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      entity: id ?? null,
      as_of: asOf?.text ?? null,
      timeline: this.toFacts(page),
      count: page.length,
      total,
      next_cursor: rows.length > limit && last ? cursorOf(last) : null,
    };
  }

  /** Counts: entities, triples, current and expired facts, and facts per relationship type. */
  stats(): { entities: number; triples: number; current_facts: number; expired_facts: number; relationship_types: Record<string, number> } {
    const now = this.nowIso();
    const n = (sql: string, ...args: unknown[]): number => (this.stmt(sql).get(...args) as { n: number }).n;
    const triples = n(`SELECT COUNT(*) AS n FROM triples`);
    const current = n(`SELECT COUNT(*) AS n FROM triples WHERE from_ts <= ? AND (to_ts IS NULL OR to_ts > ?)`, now, now);
    const types = this.stmt(`SELECT predicate, COUNT(*) AS n FROM triples GROUP BY predicate ORDER BY n DESC, predicate`).all() as Array<{ predicate: string; n: number }>;
    return {
      entities: n(`SELECT COUNT(*) AS n FROM entities`),
      triples,
      current_facts: current,
      expired_facts: n(`SELECT COUNT(*) AS n FROM triples WHERE to_ts IS NOT NULL AND to_ts <= ?`, now),
      relationship_types: Object.fromEntries(types.map((t) => [t.predicate, t.n])),
    };
  }

  /** The entities in the most facts. */
  topEntities(limit: number): Array<{ entity: string; name: string; type: string; facts: number }> {
    return (
      this.stmt(
        `SELECT e.id AS entity, e.name, e.type, COUNT(*) AS facts
         FROM (SELECT subject_id AS id FROM triples UNION ALL SELECT object_id AS id FROM triples) x JOIN entities e ON e.id = x.id
         GROUP BY e.id ORDER BY facts DESC, e.id LIMIT ?`,
      ).all(limit) as Array<{ entity: string; name: string; type: string; facts: number }>
    );
  }

  /** The most recently stated facts. */
  recentFacts(limit: number): KgFact[] {
    return this.toFacts(this.stmt(`${FACT_SELECT} ORDER BY t.seq DESC LIMIT ?`).all(limit) as FactRow[]);
  }

  /** Every fact in statement order, paged: what `palace export` writes. */
  exportFacts(offset: number, limit: number): { facts: KgFact[]; total: number } {
    const total = (this.stmt(`SELECT COUNT(*) AS n FROM triples`).get() as { n: number }).n;
    const rows = this.stmt(`${FACT_SELECT} ORDER BY t.seq LIMIT ? OFFSET ?`).all(limit, offset) as FactRow[];
    return { facts: rows.map((r) => this.toFact(r)), total };
  }

  /**
   * Restores an exported fact under its own triple id; false when that id is already stored (re-import
   * changes nothing). `origin`: the hub it was first stated on (replication); none = this hub.
   */
  restoreFact(raw: Partial<Record<keyof KgFact, unknown>>, origin?: string): boolean {
    if (typeof raw.triple_id !== 'string' || !/^t_[A-Za-z0-9_-]{1,128}$/.test(raw.triple_id)) throw invalid('triple_id', 'triple_id must look like t_<id>');
    const id = raw.triple_id;
    const from = parseWhen('valid_from', raw.valid_from, 'start');
    const to = parseWhen('valid_to', raw.valid_to, 'end');
    const subjectId = entityId('subject', raw.subject);
    const objectId = entityId('object', raw.object);
    const predicate = predicateOf(raw.predicate);
    const confidence = typeof raw.confidence === 'number' && raw.confidence >= 0 && raw.confidence <= 1 ? raw.confidence : 1;
    const createdAt = typeof raw.created_at === 'string' && raw.created_at ? raw.created_at : this.nowIso();
    return this.db
      .transaction(() => {
        if (this.stmt(`SELECT 1 FROM triples WHERE id = ?`).get(id)) return false;
        this.upsertEntity(subjectId, String(raw.subject), typeOf('subject_type', raw.subject_type === 'unknown' ? undefined : raw.subject_type));
        this.upsertEntity(objectId, String(raw.object), typeOf('object_type', raw.object_type === 'unknown' ? undefined : raw.object_type));
        this.stmt(
          `INSERT INTO triples(id, subject_id, predicate, object_id, valid_from, valid_to, from_ts, to_ts, confidence, source_file, source_drawer_id, added_by, created_at, origin)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          id,
          subjectId,
          predicate,
          objectId,
          from?.text ?? null,
          to?.text ?? null,
          from?.ts ?? '',
          to?.ts ?? null,
          confidence,
          optionalText('source_file', raw.source_file),
          optionalText('source_drawer_id', raw.source_drawer_id, 128),
          optionalText('added_by', raw.added_by, 256),
          createdAt,
          origin === undefined || origin === this.localOrigin ? null : origin,
        );
        return true;
      })
      .immediate();
  }

  /**
   * A fact replicated from another hub: stored under its own id when new; when held open and the
   * incoming copy is closed, the interval is closed here too (closing is the only change a fact
   * sees, so copies converge whatever the order). Never heard by onChange.
   */
  applyReplicatedFact(raw: KgFact, origin: string): 'added' | 'closed' | 'same' {
    if (this.restoreFact(raw as unknown as Partial<Record<keyof KgFact, unknown>>, origin)) return 'added';
    if (raw.valid_to === null) return 'same';
    const to = parseWhen('valid_to', raw.valid_to, 'end');
    if (!to) return 'same';
    const changed = this.stmt(`UPDATE triples SET valid_to = ?, to_ts = ?, invalidated_at = ? WHERE id = ? AND (to_ts IS NULL OR to_ts > ?)`).run(to.text, to.ts, this.nowIso(), raw.triple_id, to.ts).changes;
    return changed > 0 ? 'closed' : 'same';
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** The palace's knowledge graph, opened on first use. */
export interface KgHandle {
  get(): KnowledgeGraph;
  isOpen(): boolean;
  close(): void;
}

export function createKgHandle(palacePath: string, options: { onChange?: (facts: readonly KgFact[]) => void; origin?: string } = {}): KgHandle {
  let kg: KnowledgeGraph | undefined;
  return {
    get: () => (kg ??= new KnowledgeGraph(palacePath, options)),
    isOpen: () => kg !== undefined,
    close: () => {
      kg?.close();
      kg = undefined;
    },
  };
}
