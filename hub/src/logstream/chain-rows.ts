// The chain columns of an event row, shared by the two writers of the events table: local appends
// (local-append.ts) and verified remote pages (replica-apply.ts).

import type { ChainedEventFields } from '../core/chain.js';
import { GENESIS_CHAIN } from './signatures.js';
import { EVENT_COLUMNS, type EventRow } from './sqlite-rows.js';

/** Rows with the chain columns trusted sync adds. */
export type ChainedRow = EventRow & { chain: Buffer | null; origin_pos: number | null };

/** Where an origin's chain stands: its newest origin_seq, that event's position and chain value. */
export interface ChainHead {
  seq: number;
  pos: number;
  chain: Buffer;
}

export const EMPTY_HEAD: ChainHead = { seq: 0, pos: 0, chain: GENESIS_CHAIN };

/** Every stored column of an event but `seq`, then its chain value and origin position. */
const CHAINED_COLUMNS = `${EVENT_COLUMNS.replace(/^seq, /, '')}, chain, origin_pos`;
const placeholders = (columns: string): string => columns.split(',').map(() => '?').join(',');
/** A local append: `seq` given (the next one), then chainedParams. */
export const INSERT_LOCAL_SQL = `INSERT INTO events (seq, ${CHAINED_COLUMNS}) VALUES (?, ${placeholders(CHAINED_COLUMNS)})`;
/** A remote event: `seq` is the next rowid; an event already held (id or origin stamps) is ignored. */
export const INSERT_REMOTE_SQL = `INSERT OR IGNORE INTO events (${CHAINED_COLUMNS}) VALUES (${placeholders(CHAINED_COLUMNS)})`;

/** The values of CHAINED_COLUMNS for one event, in order. */
export function chainedParams(e: ChainedEventFields, chain: Buffer, pos: number): unknown[] {
  return localParams(undefined, e, chain, pos);
}

/**
 * INSERT_LOCAL_SQL's values: `seq`, then chainedParams (one array, bound as it is: no spread per
 * append). With `seq` undefined, chainedParams alone.
 */
export function localParams(seq: number | undefined, e: ChainedEventFields, chain: Buffer, pos: number): unknown[] {
  const params = [
    e.id,
    e.type,
    e.stream,
    e.room,
    e.from_agent,
    e.to_agent,
    e.correlation_id,
    e.branch,
    e.base_commit,
    e.status,
    e.artifact_ids.length === 0 ? '[]' : JSON.stringify(e.artifact_ids),
    e.body,
    e.metadata_json,
    e.created_at,
    e.origin_replica,
    e.origin_seq,
    e.hlc,
    chain,
    pos,
  ];
  if (seq !== undefined) params.unshift(seq);
  return params;
}
