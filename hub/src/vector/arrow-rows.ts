// Drawer rows as one Arrow record batch of the table's own schema, built column by column: a write
// hands LanceDB a table instead of row objects it would transpose and type-infer value by value, and
// the vectors are copied once into one Float32Array (not spread into a JS array per row first).

import { DataType, makeData, RecordBatch, Struct, Table, vectorFromArray, type Data, type Field, type Schema } from 'apache-arrow';

/** The column of `field` for `rows`: a vector column from Float32Arrays, any other through Arrow's builder. */
function column(field: Field, rows: readonly Record<string, unknown>[]): Data {
  const type: unknown = field.type;
  if (DataType.isFixedSizeList(type)) {
    const size = type.listSize;
    const flat = new Float32Array(rows.length * size);
    rows.forEach((row, i) => {
      const vector = row[field.name];
      if (!(vector instanceof Float32Array) || vector.length !== size) throw new Error(`row ${i}: '${field.name}' must be a Float32Array of ${size} values`);
      flat.set(vector, i * size);
    });
    const child = makeData({ type: type.children[0]?.type, length: flat.length, nullCount: 0, data: flat });
    return makeData({ type, length: rows.length, nullCount: 0, child });
  }
  const data = vectorFromArray(
    rows.map((r) => r[field.name] ?? null),
    field.type,
  ).data[0];
  if (!data) throw new Error(`column '${field.name}' has no data`);
  return data;
}

/** `rows` (values keyed by field name; vectors as Float32Array) as a one-batch table of `schema`. */
export function arrowTable(schema: Schema, rows: readonly Record<string, unknown>[]): Table {
  const children = schema.fields.map((f) => column(f, rows));
  return new Table([new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children }))]);
}
