// The knowledge graph's fact origin (issue 34): a palace written before origins existed (schema 1)
// migrates with every fact counted as this hub's own, and such a fact then conflicts with a different
// current object replicated from another hub, until that one is closed.

import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { KG_FILE, KnowledgeGraph } from '../../hub/src/kg/knowledge-graph.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

const dirs: TmpDir[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));

describe('fact origins', () => {
  it('migrates a schema-1 graph with its facts as local, and marks a conflict with a replicated fact', () => {
    const dir = makeTmpDir('palace-kg-origin-');
    dirs.push(dir);
    const old = new KnowledgeGraph(dir.path);
    const stated = old.add({ subject: 'Alice', predicate: 'works_at', object: 'Acme' }).triple_id;
    old.close();
    // Back to schema 1, as an older palace wrote it.
    const db = new Database(join(dir.path, KG_FILE));
    db.exec('DROP INDEX triples_subject_predicate_idx; ALTER TABLE triples DROP COLUMN origin; PRAGMA user_version = 1');
    db.close();

    const kg = new KnowledgeGraph(dir.path, { origin: 'rep_aaaaaaaaaaaa' });
    const before = kg.query({ entity: 'Alice' }).facts;
    expect(before).toHaveLength(1);
    expect(before[0]).not.toHaveProperty('origin');
    expect(before[0]).not.toHaveProperty('conflicting');

    const remote = { ...before[0], triple_id: 't_remote1', object: 'Globex', valid_from: null, valid_to: null };
    expect(kg.applyReplicatedFact(remote as never, 'rep_bbbbbbbbbbbb')).toBe('added');
    const both = kg.query({ entity: 'Alice', direction: 'outgoing' }).facts.map((f) => [f.triple_id, f.origin, f.conflicting]);
    expect(both).toEqual([
      [stated, 'rep_aaaaaaaaaaaa', true],
      ['t_remote1', 'rep_bbbbbbbbbbbb', true],
    ]);
    // The remote hub closes its fact: the mark clears.
    expect(kg.applyReplicatedFact({ ...remote, valid_to: '2020-01-01' } as never, 'rep_bbbbbbbbbbbb')).toBe('closed');
    const after = kg.query({ entity: 'Alice', direction: 'outgoing' }).facts.map((f) => [f.triple_id, f.origin ?? null, f.conflicting ?? false]);
    expect(after).toEqual([
      [stated, null, false],
      ['t_remote1', 'rep_bbbbbbbbbbbb', false],
    ]);
    kg.close();
  });
});
