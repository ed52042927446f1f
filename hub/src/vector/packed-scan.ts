// A narrow scan (a few string columns: a wing's order for /list) packed for the process boundary
// between the hub and its LanceDB child: one NUL-joined string per column instead of a drawer object
// per row. At 200k drawers a wing's ~16k rows as objects took 36-61 ms of the hub's event loop to
// deserialize in one go (docs/evidence.md, "scale: /healthz"); strings cross as they are.

import { drawerFromRecord } from './drawer-record.js';
import { NO_VECTOR, type DrawerColumn, type ScanOptions, type StoredDrawer } from './vector-store.js';

const SEP = '\u0000';

/** Columns that may cross packed: strings that never hold a NUL (ids, place names, ISO times). */
const PACKABLE: ReadonlySet<DrawerColumn> = new Set<DrawerColumn>(['id', 'wing', 'room', 'filed_at']);

export interface PackedScan {
  columns: DrawerColumn[];
  /** Per column, the rows' values joined by NUL. */
  values: string[];
  rows: number;
}

/** Whether a scan with these options may cross packed (named packable columns only, no vectors). */
export function packableScan(options: ScanOptions | undefined): options is ScanOptions & { columns: readonly DrawerColumn[] } {
  return options?.columns !== undefined && options.columns.length > 0 && options.withVectors !== true && options.columns.every((c) => PACKABLE.has(c));
}

export function packScan(drawers: readonly StoredDrawer[], columns: readonly DrawerColumn[]): PackedScan {
  return { columns: [...columns], values: columns.map((c) => drawers.map((d) => String(d[c])).join(SEP)), rows: drawers.length };
}

/** The drawers as the store's own scan returns them for those columns: the rest defaulted. */
export function unpackScan(p: PackedScan): StoredDrawer[] {
  if (p.rows === 0) return [];
  const columns = p.values.map((v) => v.split(SEP));
  const out: StoredDrawer[] = [];
  for (let i = 0; i < p.rows; i++) {
    const record: Record<string, unknown> = {};
    for (let c = 0; c < p.columns.length; c++) record[p.columns[c] as string] = columns[c]?.[i];
    out.push(drawerFromRecord(record, { id: record.id, metadata: {}, tags: [], useful: null, vector: NO_VECTOR }));
  }
  return out;
}
