// The census's load read column by column from LanceDB's Arrow reply, with no object per row. Read
// as rows (`toArray()`: a proxy per row, a visitor lookup per field), the 200k drawers of the scale
// palace took ~0.8-1.1 s of the LanceDB process's CPU while a hub opened its memory, on the same 2
// cores as the hub's event loop (docs/evidence.md, "scale: a cold page cache"); this way ~0.15 s.

import type { Table, Vector } from 'apache-arrow';

import type { PackedPlacementSummary, PlacementSummary } from './vector-store.js';

/** A Utf8 column's chunk as Arrow lays it out: row i is values[valueOffsets[i] .. valueOffsets[i + 1]). */
interface Utf8Chunk {
  length: number;
  values: Uint8Array;
  valueOffsets: Int32Array;
}

function sameBytes(bytes: Uint8Array, a: number, b: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (bytes[a + k] !== bytes[b + k]) return false;
  return true;
}

function utf8Column(table: Table, name: string): Vector | undefined {
  return table.getChild(name) ?? undefined;
}

/**
 * Rows per (wing, room), places in the order first met. Rows of one place mostly come together (a
 * mined file, a wing filed at once), so a row whose bytes equal the previous row's is counted
 * without decoding its strings.
 */
export function countPlaces(table: Table): PlacementSummary['places'] {
  const counts = new Map<string, { wing: string; room: string; rows: number }>();
  const wings = utf8Column(table, 'wing');
  const rooms = utf8Column(table, 'room');
  if (!wings || !rooms) return [];
  const decoder = new TextDecoder();
  const chunks = (v: Vector): Utf8Chunk[] => v.data as unknown as Utf8Chunk[];
  // Large (64-bit) offsets, or chunks that do not line up: the strings decoded row by row instead.
  if (![...chunks(wings), ...chunks(rooms)].every((d) => d.valueOffsets instanceof Int32Array) || wings.data.length !== rooms.data.length) {
    const [w, r] = [wings.toArray() as unknown[], rooms.toArray() as unknown[]];
    for (let i = 0; i < w.length; i++) {
      const [wing, room] = [String(w[i] ?? ''), String(r[i] ?? '')];
      const key = `${wing}\u0000${room}`;
      const place = counts.get(key);
      if (place) place.rows++;
      else counts.set(key, { wing, room, rows: 1 });
    }
    return [...counts.values()];
  }
  for (let c = 0; c < wings.data.length; c++) {
    const w = chunks(wings)[c] as Utf8Chunk;
    const r = chunks(rooms)[c] as Utf8Chunk;
    if (w.length !== r.length) throw new Error('the wing and room columns differ in length');
    let place: { wing: string; room: string; rows: number } | undefined;
    let [ws0, wl0, rs0, rl0] = [0, -1, 0, -1];
    for (let i = 0; i < w.length; i++) {
      const ws = w.valueOffsets[i] ?? 0;
      const wl = (w.valueOffsets[i + 1] ?? 0) - ws;
      const rs = r.valueOffsets[i] ?? 0;
      const rl = (r.valueOffsets[i + 1] ?? 0) - rs;
      if (!place || wl !== wl0 || rl !== rl0 || !sameBytes(w.values, ws, ws0, wl) || !sameBytes(r.values, rs, rs0, rl)) {
        const wing = decoder.decode(w.values.subarray(ws, ws + wl));
        const room = decoder.decode(r.values.subarray(rs, rs + rl));
        const key = `${wing}\u0000${room}`;
        place = counts.get(key);
        if (!place) counts.set(key, (place = { wing, room, rows: 0 }));
        [ws0, wl0, rs0, rl0] = [ws, wl, rs, rl];
      }
      place.rows++;
    }
  }
  return [...counts.values()];
}

function joined(table: Table, name: string): string {
  const column = table.getChild(name);
  return column ? (column.toArray() as unknown[]).map((v) => String(v ?? '')).join('\u0000') : '';
}

/** The marked rows (read with CENSUS_COLUMNS) packed as the process boundary carries them. */
export function packMarked(places: PlacementSummary['places'], marked: Table): PackedPlacementSummary {
  const useful = marked.getChild('useful');
  const chunk = marked.getChild('chunk_index');
  let rated = '';
  for (let i = 0; i < marked.numRows; i++) rated += useful?.isValid(i) ? (Number(useful.get(i)) === 1 ? '1' : '0') : '-';
  return {
    places,
    ids: joined(marked, 'id'),
    wings: joined(marked, 'wing'),
    rooms: joined(marked, 'room'),
    filedAt: joined(marked, 'filed_at'),
    useful: rated,
    chunkIndex: chunk ? Array.from(chunk.toArray() as ArrayLike<number>, Number) : [],
  };
}
