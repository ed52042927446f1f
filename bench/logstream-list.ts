// Logstream list latency: `list({to_agent, since_event_id, limit: 50})` at 10k and 100k events,
// with a cursor near the tip (the inbox sweep) and one far back, against the same SQL run raw.

import Database from 'better-sqlite3';

import { E_REST, WATERMARK_SQL } from '../hub/src/logstream/event-routes.js';
import type { Logstream } from '../hub/src/logstream/logstream.js';
import { AGENTS, makeTraffic } from './event-fixtures.js';
import type { Figure, SuiteContext } from './figure.js';
import { percentile, timeEach } from './stats.js';

export const LIST_SIZES = [10_000, 100_000] as const;
const QUERIES = 2_000;
const WARMUP = 200;
const LIMIT = 50;
/** The tip cursor sits this many events behind the newest one. */
const TIP_LAG = 200;
/** The far cursor sits at this fraction of the log. */
const FAR_AT = 0.1;
const BATCH = 1_000;

export interface CursorCase {
  key: 'tip' | 'far';
  label: string;
  cursorId: string;
}

export interface ListSample {
  size: number;
  cursor: CursorCase;
  /** Per-query ms through Logstream.list. */
  palace: number[];
  /** Per-query ms of the same SQL through a second raw better-sqlite3 connection. */
  raw: number[];
}

/** Appends generated events through the store in batches until the log holds `size` events. */
export function growLog(log: Logstream, size: number, next: ReturnType<typeof makeTraffic>): void {
  let have = log.store.countEvents();
  while (have < size) {
    const n = Math.min(BATCH, size - have);
    const results = log.store.append(Array.from({ length: n }, () => log.prepareEvent(next())));
    const failed = results.find((r) => r instanceof Error);
    if (failed) throw failed;
    have += n;
  }
}

function idAtSeq(db: Database.Database, seq: number): string {
  const row = db.prepare('SELECT id FROM events WHERE seq = ?').get(seq) as { id: string } | undefined;
  if (!row) throw new Error(`no event at seq ${seq}`);
  return row.id;
}

function cursorCases(db: Database.Database, size: number): CursorCase[] {
  return [
    { key: 'tip', label: `cursor ${TIP_LAG} behind tip`, cursorId: idAtSeq(db, size - TIP_LAG) },
    {
      key: 'far',
      label: `cursor at ${FAR_AT * 100}% of log`,
      cursorId: idAtSeq(db, Math.round(size * FAR_AT)),
    },
  ];
}

/** Measures both cursor cases at the log's current size. */
export function measureList(log: Logstream, dbPath: string, size: number): ListSample[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    const seqOf = db.prepare('SELECT seq FROM events WHERE id = ?');
    // The statements the palace runs for this page (event-queries.ts): the watermark and tip, then an arm
    // per routed value over the routing table up to the watermark, merged under ORDER BY and LIMIT (the
    // log is caught up here, so there is no pending tail to read).
    const bounds = db.prepare(`SELECT ${WATERMARK_SQL} AS w, (SELECT coalesce(max(seq), 0) FROM events) AS top`);
    const arm = `SELECT r.seq AS seq, ${E_REST} FROM event_routes_agent r CROSS JOIN events e ON e.seq = r.seq WHERE r.to_agent = ? AND r.seq > ? AND r.seq <= ?`;
    const select = db.prepare(`${arm} UNION ALL ${arm} ORDER BY 1 ASC LIMIT ?`);
    const agents = Array.from({ length: WARMUP + QUERIES }, (_, i) => AGENTS[i % AGENTS.length] ?? 'alice');
    return cursorCases(db, size).map((cursor) => {
      const viaPalace = (agent: string): unknown =>
        log.list({ to_agent: agent, since_event_id: cursor.cursorId, limit: LIMIT });
      const viaRaw = (agent: string): unknown => {
        const { seq } = seqOf.get(cursor.cursorId) as { seq: number };
        const { w } = bounds.get() as { w: number; top: number };
        return select.all(agent, seq, w, '*', seq, w, LIMIT + 1);
      };
      const palace: number[] = [];
      const raw: number[] = [];
      agents.forEach((agent, i) => {
        // Alternate per query (and which goes first) so both see the same machine state.
        const order = i % 2 === 0 ? ([viaPalace, viaRaw] as const) : ([viaRaw, viaPalace] as const);
        const [first, second] = timeEach(order, (fn) => fn(agent));
        if (i < WARMUP) return;
        palace.push((i % 2 === 0 ? first : second) ?? Number.NaN);
        raw.push((i % 2 === 0 ? second : first) ?? Number.NaN);
      });
      return { size, cursor, palace, raw };
    });
  } finally {
    db.close();
  }
}

function sizeLabel(size: number): string {
  return `${size / 1000}k`;
}

export function listFigures(samples: readonly ListSample[]): Figure[] {
  const figures: Figure[] = [];
  const rawRef = (value: number): Figure['reference'] => ({
    value,
    label: 'same SQL, raw better-sqlite3, same file',
    measured: true,
  });
  for (const s of samples) {
    const at100k = s.size === 100_000;
    figures.push(
      {
        name: `list p50 @${sizeLabel(s.size)}, ${s.cursor.label}`,
        value: percentile(s.palace, 50),
        unit: 'ms',
        reference: rawRef(percentile(s.raw, 50)),
        ...(at100k ? { target: { op: '<=' as const, value: 0.3 } } : {}),
      },
      {
        name: `list p99 @${sizeLabel(s.size)}, ${s.cursor.label}`,
        value: percentile(s.palace, 99),
        unit: 'ms',
        reference: rawRef(percentile(s.raw, 99)),
      },
    );
  }
  for (const key of ['tip', 'far'] as const) {
    const small = samples.find((s) => s.size === LIST_SIZES[0] && s.cursor.key === key);
    const large = samples.find((s) => s.size === LIST_SIZES[1] && s.cursor.key === key);
    if (!small || !large) continue;
    figures.push({
      name: `list p50 growth 100k/10k, ${large.cursor.label}`,
      value: percentile(large.palace, 50) / percentile(small.palace, 50),
      unit: 'x',
      reference: {
        value: percentile(large.raw, 50) / percentile(small.raw, 50),
        label: 'growth of the raw query',
        measured: true,
      },
      target: { op: '<=', value: 1.5, note: '"flat as the log grows", read as at most 1.5x for 10x events' },
    });
  }
  return figures;
}

export async function listSamples(
  ctx: SuiteContext,
  log: Logstream,
  dbPath: string,
): Promise<{ samples: ListSample[]; matchesPerQuery: number }> {
  const next = makeTraffic(7);
  const samples: ListSample[] = [];
  for (const size of LIST_SIZES) {
    ctx.progress(`list: growing the log to ${size} events`);
    growLog(log, size, next);
    ctx.progress(`list: ${QUERIES} queries per case at ${size} events`);
    samples.push(...measureList(log, dbPath, size));
    await new Promise((resolve) => setImmediate(resolve));
  }
  const tip = samples.filter((s) => s.cursor.key === 'tip').at(-1);
  const agent = AGENTS[0] ?? 'alice';
  const matchesPerQuery = tip ? log.list({ to_agent: agent, since_event_id: tip.cursor.cursorId }).count : 0;
  return { samples, matchesPerQuery };
}
