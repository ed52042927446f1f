// Drawer rows laid out as one Arrow batch by hand (arrow-rows.ts) read back exactly as Arrow's own
// builders lay them out: strings with unicode and nulls, signed 32- and 8-bit integers with nulls,
// and vectors, in the drawers table's schema.

import { tableFromArrays, vectorFromArray } from 'apache-arrow';
import { describe, expect, it } from 'vitest';

import { arrowTable } from '../../hub/src/vector/arrow-rows.js';
import { schemaFor } from '../../hub/src/vector/lancedb-vector-store.js';

const DIMENSIONS = 4;

function row(i: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `drawer_${i}`,
    wing: 'wïng ☃',
    room: i % 2 === 0 ? 'decisions' : '',
    tags: i % 3 === 0 ? '|a|b|' : '',
    content: `line one\nline two — ${'ü'.repeat(i)} 'quoted' \\ ${i}`,
    source_file: i % 2 === 0 ? null : `src/file-${i}.ts`,
    chunk_index: i * 1000 - 7,
    parent_id: i % 4 === 0 ? `drawer_parent_${i}` : null,
    filed_at: '2026-11-28T10:00:00Z',
    added_by: 'agent',
    useful: i % 3 === 0 ? null : i % 3 === 1 ? 1 : 0,
    metadata_json: JSON.stringify({ n: i }),
    embedder: 'bundled:use-lite:512',
    vector: Float32Array.from({ length: DIMENSIONS }, (_, k) => i + k / 10),
    keywords: '',
    identifiers: null,
    context: '',
    doc: i === 2 ? 'doc words' : '',
    ...overrides,
  };
}

describe('arrowTable', () => {
  it('reads back every value of every column as Arrow builders give them', () => {
    const schema = schemaFor(DIMENSIONS);
    const rows = Array.from({ length: 11 }, (_, i) => row(i));
    const table = arrowTable(schema, rows);
    expect(table.numRows).toBe(rows.length);
    expect(table.schema.fields.map((f) => f.name)).toEqual(schema.fields.map((f) => f.name));
    for (const field of schema.fields) {
      const got = table.getChild(field.name);
      if (field.name === 'vector') {
        rows.forEach((r, i) => expect(Array.from(got?.get(i) as Iterable<number>)).toEqual(Array.from(r.vector as Float32Array)));
        continue;
      }
      const built = vectorFromArray(rows.map((r) => r[field.name] ?? null), field.type);
      expect(got?.nullCount).toBe(built.nullCount);
      expect(Array.from(got ?? [])).toEqual(Array.from(built));
    }
  });

  it('takes an empty batch and a batch of one', () => {
    const schema = schemaFor(DIMENSIONS);
    expect(arrowTable(schema, []).numRows).toBe(0);
    const one = arrowTable(schema, [row(3)]);
    expect(one.getChild('content')?.get(0)).toBe(row(3).content);
    expect(one.getChild('useful')?.get(0)).toBeNull();
  });

  it('refuses a vector of the wrong size or type by name', () => {
    const schema = schemaFor(DIMENSIONS);
    expect(() => arrowTable(schema, [row(1, { vector: new Float32Array(DIMENSIONS + 1) })])).toThrow(/'vector' must be a Float32Array of 4 values/);
    expect(() => arrowTable(schema, [row(1, { vector: [0, 0, 0, 0] })])).toThrow(/'vector'/);
  });

  it('lays out a column of another type through Arrow itself', () => {
    const other = tableFromArrays({ n: new Float64Array([1.5, 2.5]) }).schema;
    expect(Array.from(arrowTable(other, [{ n: 1.5 }, { n: null }]).getChild('n') ?? [])).toEqual([1.5, null]);
  });
});
