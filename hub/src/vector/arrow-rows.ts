// Drawer rows as one Arrow record batch of the table's own schema, built column by column: a write
// hands LanceDB a table instead of row objects it would transpose and type-infer value by value, and
// the vectors are copied once into one Float32Array (not spread into a JS array per row first).
// Strings and integers are laid out here directly: Arrow's builders compile a fresh null-check
// function per builder (new Function), which kept V8's optimizing compiler busy on every write.

import { DataType, makeData, RecordBatch, Struct, Table, vectorFromArray, type Data, type Field, type Schema } from 'apache-arrow';

const encoder = new TextEncoder();

/** Validity bitmap of `values` (bit i set: value i is not null), or undefined when none is null. */
function validity(values: readonly unknown[]): { bitmap: Uint8Array | undefined; nulls: number } {
  let nulls = 0;
  for (const v of values) if (v === null || v === undefined) nulls++;
  if (nulls === 0) return { bitmap: undefined, nulls };
  const bitmap = new Uint8Array(Math.ceil(values.length / 8));
  values.forEach((v, i) => {
    if (v !== null && v !== undefined) bitmap[i >> 3] = (bitmap[i >> 3] ?? 0) | (1 << (i & 7));
  });
  return { bitmap, nulls };
}

function utf8Column(type: DataType, values: readonly unknown[]): Data {
  const { bitmap, nulls } = validity(values);
  const offsets = new Int32Array(values.length + 1);
  const parts = values.map((v) => (v === null || v === undefined ? new Uint8Array(0) : encoder.encode(String(v))));
  let at = 0;
  parts.forEach((p, i) => {
    at += p.length;
    offsets[i + 1] = at;
  });
  const bytes = new Uint8Array(at);
  parts.forEach((p, i) => bytes.set(p, offsets[i]));
  return makeData({ type, length: values.length, nullCount: nulls, nullBitmap: bitmap, valueOffsets: offsets, data: bytes } as Parameters<typeof makeData>[0]);
}

function intColumn(type: DataType, values: readonly unknown[], ArrayType: Int32ArrayConstructor | Int8ArrayConstructor): Data {
  const { bitmap, nulls } = validity(values);
  const data = new ArrayType(values.length);
  values.forEach((v, i) => (data[i] = v === null || v === undefined ? 0 : Number(v)));
  return makeData({ type, length: values.length, nullCount: nulls, nullBitmap: bitmap, data } as Parameters<typeof makeData>[0]);
}

/** The column of `field` for `rows`: vectors from Float32Arrays, strings and small integers laid out directly. */
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
  const values = rows.map((r) => r[field.name] ?? null);
  if (DataType.isUtf8(type)) return utf8Column(type, values);
  if (DataType.isInt(type) && type.bitWidth === 32 && type.isSigned) return intColumn(type, values, Int32Array);
  if (DataType.isInt(type) && type.bitWidth === 8 && type.isSigned) return intColumn(type, values, Int8Array);
  const data = vectorFromArray(values, field.type).data[0];
  if (!data) throw new Error(`column '${field.name}' has no data`);
  return data;
}

/** `rows` (values keyed by field name; vectors as Float32Array) as a one-batch table of `schema`. */
export function arrowTable(schema: Schema, rows: readonly Record<string, unknown>[]): Table {
  const children = schema.fields.map((f) => column(f, rows));
  return new Table([new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children }))]);
}
