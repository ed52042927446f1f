// Issue 6: `palace migrate --from-mempalace <dir>` through the real CLI, against a small MemPalace
// palace built here in its own formats (a Chroma-shaped chroma.sqlite3, knowledge_graph.sqlite3 and
// logstream.sqlite3): dry run writes nothing, the import keeps ids, text, validity and sha256, a
// second run changes nothing; then `migrate-wings` and `migrate` on the result.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { KgFact } from '../../hub/src/kg/knowledge-graph.js';
import type { DrawerView, SearchHit } from '../../hub/src/memory/drawers/memory.js';
import type { ImportReport } from '../../hub/src/migrate/mempalace-import.js';
import type { MigrateReport } from '../../hub/src/migrate/store-versions.js';
import { makeTempPalace, parseJson, type CliResult, type PageJson, type TempPalace } from '../helpers/cli.js';

const LEGACY_WING = 'wing_Acme Corp';
const DRAWERS = [
  { id: `drawer_${LEGACY_WING}_architecture_0123456789abcdef01234567`, room: 'architecture', text: 'Acme decided to run Postgres 16 on dedicated hosts because shared tenancy caused noisy-neighbour latency.' },
  { id: `drawer_${LEGACY_WING}_people_89abcdef0123456789abcdef`, room: 'people', text: 'Alice leads the payments team and prefers written design reviews over meetings.' },
  { id: 'weird id with "quotes"', room: 'ops', text: 'The on-call rotation changes every Tuesday at 10:00 local time.' },
];
const SECRET = { id: `drawer_${LEGACY_WING}_ops_fedcba9876543210fedcba98`, text: 'deploy with token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB please' };
const PATCH = 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n';
const ART_ID = 'art_20250301T101500_0a1b2c3d4e5f';
const EVT_ID = 'evt_20250301T101501_abcdefabcdef';

function buildChroma(path: string): void {
  const db = new Database(path);
  db.exec(`
    CREATE TABLE collections (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, dimension INTEGER, database_id TEXT, config_json_str TEXT);
    CREATE TABLE segments (id TEXT PRIMARY KEY, type TEXT NOT NULL, scope TEXT NOT NULL, collection TEXT NOT NULL);
    CREATE TABLE embeddings (id INTEGER PRIMARY KEY, segment_id TEXT NOT NULL, embedding_id TEXT NOT NULL, seq_id BLOB NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, UNIQUE (segment_id, embedding_id));
    CREATE TABLE embedding_metadata (id INTEGER REFERENCES embeddings(id), key TEXT NOT NULL, string_value TEXT, int_value INTEGER, float_value REAL, bool_value INTEGER, PRIMARY KEY (id, key));
    INSERT INTO collections VALUES ('c-drawers', 'mempalace_drawers', 384, 'db', '{}'), ('c-closets', 'mempalace_closets', 384, 'db', '{}');
    INSERT INTO segments VALUES ('s-vec', 'urn:chroma:segment/vector/hnsw-local-persisted', 'VECTOR', 'c-drawers'),
      ('s-meta', 'urn:chroma:segment/metadata/sqlite', 'METADATA', 'c-drawers'),
      ('s-closet', 'urn:chroma:segment/metadata/sqlite', 'METADATA', 'c-closets');
  `);
  const row = db.prepare('INSERT INTO embeddings (id, segment_id, embedding_id, seq_id) VALUES (?, ?, ?, ?)');
  const meta = db.prepare('INSERT INTO embedding_metadata (id, key, string_value, int_value, float_value, bool_value) VALUES (?, ?, ?, ?, ?, ?)');
  const put = (n: number, segment: string, id: string, text: string, room: string, extra: Array<[string, string | number]> = []): void => {
    row.run(n, segment, id, Buffer.from([n]));
    meta.run(n, 'chroma:document', text, null, null, null);
    meta.run(n, 'wing', LEGACY_WING, null, null, null);
    meta.run(n, 'room', room, null, null, null);
    meta.run(n, 'added_by', 'mempalace', null, null, null);
    meta.run(n, 'filed_at', '2025-02-01T09:30:00', null, null, null);
    meta.run(n, 'hall', 'hall_technical', null, null, null);
    for (const [k, v] of extra) meta.run(n, k, typeof v === 'number' ? null : v, typeof v === 'number' ? v : null, null, null);
  };
  DRAWERS.forEach((d, i) => put(i + 1, 's-meta', d.id, d.text, d.room, i === 0 ? [['source_file', '/src/acme/ADR-7.md'], ['chunk_index', 2]] : []));
  put(10, 's-meta', SECRET.id, SECRET.text, 'ops');
  put(11, 's-closet', 'closet_1', 'postgres|acme;alice|→drawer_x', 'architecture');
  db.close();
}

function buildKg(path: string): void {
  const db = new Database(path);
  db.exec(`
    CREATE TABLE entities (id TEXT PRIMARY KEY, name TEXT NOT NULL, type TEXT DEFAULT 'unknown', properties TEXT DEFAULT '{}', created_at TEXT DEFAULT CURRENT_TIMESTAMP);
    CREATE TABLE triples (id TEXT PRIMARY KEY, subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL, valid_from TEXT, valid_to TEXT,
      confidence REAL DEFAULT 1.0, source_closet TEXT, source_file TEXT, source_drawer_id TEXT, adapter_name TEXT, extracted_at TEXT DEFAULT CURRENT_TIMESTAMP);
    INSERT INTO entities (id, name, type) VALUES ('alice', 'Alice', 'person'), ('acme_corp', 'Acme Corp', 'organization'), ('globex', 'Globex', 'organization');
    INSERT INTO triples (id, subject, predicate, object, valid_from, valid_to, confidence, source_file) VALUES
      ('t_alice_works_at_acme_corp_aaaaaaaaaaaa', 'alice', 'works_at', 'acme_corp', '2023-01-01', '2025-06-30', 1.0, 'notes.md'),
      ('t_alice_works_at_globex_bbbbbbbbbbbb', 'alice', 'works_at', 'globex', '2025-07-01', NULL, 0.9, NULL);
  `);
  db.close();
}

function buildLog(path: string): void {
  const db = new Database(path);
  db.exec(`
    CREATE TABLE events (id TEXT PRIMARY KEY, type TEXT NOT NULL, stream TEXT NOT NULL, room TEXT NOT NULL, topic TEXT, from_agent TEXT NOT NULL, to_agent TEXT,
      correlation_id TEXT, branch TEXT, base_commit TEXT, status TEXT, body TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, metadata_json TEXT NOT NULL DEFAULT '{}',
      origin_replica TEXT, origin_seq INTEGER, hlc TEXT);
    CREATE TABLE artifacts (id TEXT PRIMARY KEY, kind TEXT NOT NULL, sha256 TEXT NOT NULL, size_bytes INTEGER NOT NULL, content TEXT NOT NULL, created_by TEXT NOT NULL,
      created_at TEXT NOT NULL, metadata_json TEXT NOT NULL DEFAULT '{}', origin_replica TEXT);
    CREATE TABLE event_artifacts (event_id TEXT NOT NULL, artifact_id TEXT NOT NULL, PRIMARY KEY(event_id, artifact_id));
  `);
  const sha = createHash('sha256').update(PATCH, 'utf8').digest('hex');
  db.prepare('INSERT INTO artifacts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)').run(ART_ID, 'patch', sha, Buffer.byteLength(PATCH), PATCH, 'box-codex', '2025-03-01T10:15:00Z', '{}', null);
  db.prepare(
    `INSERT INTO events (id, type, stream, room, topic, from_agent, to_agent, correlation_id, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(EVT_ID, 'patch.ready', 'project/acme', 'patches', 'db', 'box-codex', 'box-claude', 'task_db_12345678', 'ready', 'patch for the db task', '2025-03-01T10:15:01Z');
  db.prepare('INSERT INTO event_artifacts VALUES (?, ?)').run(EVT_ID, ART_ID);
  db.close();
}

/** A MemPalace palace (Chroma drawers, KG, logstream) under `root`; returns its directory. */
function buildLegacyPalace(root: string): string {
  const legacy = join(root, 'mempalace', 'palace');
  mkdirSync(legacy, { recursive: true });
  buildChroma(join(legacy, 'chroma.sqlite3'));
  buildKg(join(legacy, 'knowledge_graph.sqlite3'));
  buildLog(join(legacy, 'logstream.sqlite3'));
  return legacy;
}

function ok(result: CliResult): CliResult {
  if (result.code !== 0) throw new Error(`exit ${String(result.code)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

describe('issue 6: palace migrate --from-mempalace', { timeout: 240_000 }, () => {
  let palace: TempPalace;
  let legacy: string;

  beforeAll(() => {
    palace = makeTempPalace('palace-mempalace-');
    legacy = buildLegacyPalace(palace.root);
  });
  afterAll(async () => {
    await palace.cleanup();
  });

  it('--dry-run reports what it would bring over and writes nothing', async () => {
    const r = parseJson<ImportReport>(ok(await palace.run(['migrate', '--from-mempalace', legacy, '--dry-run', '--json'])));
    expect(r.dry_run).toBe(true);
    expect(r.drawers).toMatchObject({ total: 4, filed: 3, skipped_secret: [{ id: SECRET.id, kind: 'GitHub token' }] });
    expect(r.kg).toMatchObject({ triples_added: 2, entities_added: 3 });
    expect(r.logstream).toMatchObject({ events_applied: 1, artifacts_added: 1 });
    for (const f of ['vectors', 'knowledge_graph.sqlite3', 'logstream.sqlite3', 'memory-journal.sqlite3', 'embedder.json', 'hub.lock'])
      expect(existsSync(join(palace.dir, f)), f).toBe(false);
  });

  it('imports drawers, facts, events and artifacts, keeping ids, text, validity and sha256', async () => {
    const run = ok(await palace.run(['migrate', '--from-mempalace', legacy, '--json']));
    const r = parseJson<ImportReport>(run);
    expect(r.drawers).toMatchObject({ total: 4, filed: 3, renamed: 1, present: 0 });
    expect(r.drawers?.skipped_secret).toEqual([{ id: SECRET.id, kind: 'GitHub token', line: 1 }]);
    expect(r.kg).toMatchObject({ triples_added: 2, skipped: [] });
    expect(r.logstream).toMatchObject({ events_applied: 1, artifacts_added: 1, skipped: [] });
    // Not a terminal: progress comes as parseable lines on stderr.
    expect(run.stderr).toMatch(/^progress drawers 4\/4$/m);

    const first = DRAWERS[0]!;
    const drawer = parseJson<DrawerView>(ok(await palace.run(['drawer', 'get', first.id, '--json'])));
    expect(drawer).toMatchObject({ drawer_id: first.id, wing: LEGACY_WING, room: 'architecture', content: first.text, source_file: '/src/acme/ADR-7.md', chunk_index: 2, filed_at: '2025-02-01T09:30:00' });
    expect(drawer.metadata).toMatchObject({ hall: 'hall_technical', imported_from: 'mempalace' });
    const hits = parseJson<{ results: SearchHit[] }>(ok(await palace.run(['search', 'why does acme run postgres on dedicated hosts', '--json']))).results;
    expect(hits[0]?.drawer_id).toBe(first.id);
    const oncall = parseJson<{ results: SearchHit[] }>(ok(await palace.run(['search', 'when does the on-call rotation change', '--json']))).results;
    expect(oncall.find((h) => h.content === DRAWERS[2]!.text)?.drawer_id).toMatch(/^drawer_[0-9a-f]{24}$/);
    const secretHits = parseJson<{ results: SearchHit[] }>(ok(await palace.run(['search', 'deploy with token', '--json', '--limit', '10']))).results;
    expect(secretHits.some((h) => h.content.includes('ghp_'))).toBe(false);

    const timeline = parseJson<{ timeline: KgFact[] }>(ok(await palace.run(['kg', 'timeline', 'alice', '--json']))).timeline;
    expect(timeline.map((f) => [f.triple_id, f.object, f.valid_from, f.valid_to, f.current])).toEqual([
      ['t_alice_works_at_acme_corp_aaaaaaaaaaaa', 'Acme Corp', '2023-01-01', '2025-06-30', false],
      ['t_alice_works_at_globex_bbbbbbbbbbbb', 'Globex', '2025-07-01', null, true],
    ]);

    const page = parseJson<PageJson>(ok(await palace.run(['logstream', 'list', '--json'])));
    expect(page.events).toHaveLength(1);
    expect(page.events[0]).toMatchObject({ id: EVT_ID, type: 'patch.ready', from_agent: 'box-codex', to_agent: 'box-claude', status: 'ready', artifact_ids: [ART_ID] });
    expect(page.events[0]?.metadata).toMatchObject({ topic: 'db' });
    const art = parseJson<{ sha256: string; content: string }>(ok(await palace.run(['artifact', 'get', ART_ID, '--json'])));
    expect(art.sha256).toBe(createHash('sha256').update(PATCH, 'utf8').digest('hex'));
    expect(art.content).toBe(PATCH);
  });

  it('a second run changes nothing', async () => {
    const r = parseJson<ImportReport>(ok(await palace.run(['migrate', '--from-mempalace', legacy, '--json'])));
    expect(r.drawers).toMatchObject({ filed: 0, already_done: true });
    expect(r.kg).toMatchObject({ triples_added: 0, triples_present: 2, entities_added: 0 });
    expect(r.logstream).toMatchObject({ events_applied: 0, events_present: 1, artifacts_added: 0, artifacts_present: 1 });
    expect(parseJson<PageJson>(ok(await palace.run(['logstream', 'list', '--json']))).events).toHaveLength(1);
    expect(parseJson<{ timeline: KgFact[] }>(ok(await palace.run(['kg', 'timeline', 'alice', '--json']))).timeline).toHaveLength(2);
  });

  it('migrate-wings proposes the normalized names and moves the drawers with --apply', async () => {
    const dry = parseJson<{ moves: Array<{ from: string; to: string; drawers: number }> }>(ok(await palace.run(['migrate-wings', '--json'])));
    expect(dry.moves).toEqual([{ from: LEGACY_WING, to: 'acme-corp', drawers: 3, merges: false }]);
    const applied = parseJson<{ moved: number }>(ok(await palace.run(['migrate-wings', '--apply', '--json'])));
    expect(applied.moved).toBe(3);
    const drawer = parseJson<DrawerView>(ok(await palace.run(['drawer', 'get', DRAWERS[1]!.id, '--json'])));
    expect(drawer).toMatchObject({ wing: 'acme-corp', content: DRAWERS[1]!.text });
    expect(parseJson<{ moves: unknown[] }>(ok(await palace.run(['migrate-wings', '--json']))).moves).toEqual([]);
  });

  it('migrate reports every store at the current version', async () => {
    const r = parseJson<MigrateReport>(ok(await palace.run(['migrate', '--dry-run', '--json'])));
    expect(r.up_to_date).toBe(true);
    expect(r.stores.map((s) => s.store)).toEqual(['logstream', 'knowledge_graph', 'memory_journal', 'embedder_record', 'vectors', 'code_chunks']);
    expect(r.stores.every((s) => !s.pending && s.before !== null)).toBe(true);
    expect(ok(await palace.run(['migrate'])).stdout).toMatch(/No migration pending/);
  });
});

describe('issue 6: an interrupted import resumes; maintenance refuses beside a live hub', { timeout: 240_000 }, () => {
  let palace: TempPalace;
  let legacy: string;

  beforeAll(() => {
    palace = makeTempPalace('palace-mempalace-resume-');
    legacy = buildLegacyPalace(palace.root);
  });
  afterAll(async () => {
    await palace.cleanup();
  });

  it('an import killed between journal and index finishes on the next run without filing twice', async () => {
    const killed = await palace.run(['migrate', '--from-mempalace', legacy, '--json'], { env: { PALACE_FAULT_INJECT: 'memory.after-journal' } });
    expect(killed.signal).toBe('SIGKILL');
    const r = parseJson<ImportReport>(ok(await palace.run(['migrate', '--from-mempalace', legacy, '--json'])));
    // The journaled batch was replayed when the memory opened; the import then found those drawers held.
    expect(r.drawers).toMatchObject({ filed: 0, present: 3, already_done: false });
    expect(r.logstream).toMatchObject({ events_applied: 0, events_present: 1 });
    expect(r.kg).toMatchObject({ triples_added: 0, triples_present: 2 });
    const drawer = parseJson<DrawerView>(ok(await palace.run(['drawer', 'get', DRAWERS[0]!.id, '--json'])));
    expect(drawer.content).toBe(DRAWERS[0]!.text);
  });

  it('replay, migrate and migrate-wings --apply refuse while a live hub holds the lease, naming it', async () => {
    // A lease held by a live process (this test runner) stands in for a hub serving the palace.
    writeFileSync(join(palace.dir, 'hub.lock'), JSON.stringify({ pid: process.pid, address: 'http://127.0.0.1:8765', acquired_at: new Date().toISOString(), role: 'hub' }));
    for (const args of [['replay'], ['migrate'], ['migrate', '--from-mempalace', legacy], ['migrate-wings', '--apply']]) {
      const res = await palace.run([...args, '--json']);
      expect(res.code, args.join(' ')).toBe(1);
      const err = parseJson<{ error: { code: string; message: string } }>(res).error;
      expect(err.code).toBe('lease.held');
      expect(err.message).toContain(`pid ${process.pid} at http://127.0.0.1:8765`);
    }
    // Dry runs only read, so they still answer.
    expect(ok(await palace.run(['migrate', '--dry-run', '--json'])).code).toBe(0);
  });
});
