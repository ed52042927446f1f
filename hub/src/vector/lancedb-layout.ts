// Inspects the layout of a palace's LanceDB table (columns, vector size, rows, embedder census)
// without creating anything, for `palace migrate`. Opens its own short-lived connection.

import { existsSync } from 'node:fs';
import { join } from 'node:path';

import * as lancedb from '@lancedb/lancedb';

import { countBy, dict } from '../core/dict.js';
import { halfCreatedTable, schemaFor } from './lancedb-vector-store.js';

export interface LanceLayout {
  columns: string[];
  /** Columns the current palace writes that the table lacks. */
  missing: string[];
  dimensions: number | null;
  rows: number;
  /** Rows per embedder key (`model/dimensions`). */
  by_embedder: Record<string, number>;
}

/** The drawers table's layout, or null when the palace has no vectors table yet. */
export async function readLanceLayout(palacePath: string): Promise<LanceLayout | null> {
  const dir = join(palacePath, 'vectors');
  if (!existsSync(dir) || halfCreatedTable(dir)) return null;
  const db = await lancedb.connect(dir);
  try {
    if (!(await db.tableNames()).includes('drawers')) return null;
    const table = await db.openTable('drawers');
    try {
      const schema = await table.schema();
      const columns = schema.fields.map((f) => f.name);
      const vector = schema.fields.find((f) => f.name === 'vector');
      const dimensions = (vector?.type as { listSize?: number } | undefined)?.listSize ?? null;
      const expected = schemaFor(dimensions ?? 1).fields.map((f) => f.name);
      const by = columns.includes('embedder')
        ? countBy((await table.query().select(['embedder']).toArray()) as Array<{ embedder?: unknown }>, (row) => String(row.embedder ?? ''))
        : dict<number>();
      return { columns, missing: expected.filter((c) => !columns.includes(c)), dimensions, rows: await table.countRows(), by_embedder: by };
    } finally {
      table.close();
    }
  } finally {
    db.close();
  }
}
