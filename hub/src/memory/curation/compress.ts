// `compress`: writes one AAAK summary per drawer row into <palace>/aaak.json (keyed by drawer id,
// written atomically), beside the drawers. Idempotent upsert; drops summaries of vanished drawers.
// Never touches a drawer: content, placement and metadata stay as they are.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { writeFileAtomic } from '../../atomic-file.js';
import { isoSeconds } from '../../core/ids.js';
import { invalid } from '../../errors.js';
import { encodeAaak, tokenEstimate, AAAK_VERSION, type AaakSummary } from './aaak.js';
import { optionalPlace } from '../drawers/drawer-input.js';
import type { Memory } from '../drawers/memory.js';

export interface StoredSummary extends Omit<AaakSummary, 'drawer_id'> {
  /** sha256 of the verbatim content the summary was made from. */
  source_sha256: string;
  compressed_at: string;
}

type Store = Record<string, StoredSummary>;

const SAMPLE = 3;

function file(palacePath: string): string {
  return join(palacePath, 'aaak.json');
}

function readStore(palacePath: string): Store {
  try {
    const value = JSON.parse(readFileSync(file(palacePath), 'utf8')) as { summaries?: unknown };
    if (value.summaries && typeof value.summaries === 'object') return value.summaries as Store;
  } catch {
    // absent or unreadable: no summaries yet
  }
  return {};
}

function writeStore(palacePath: string, summaries: Store): void {
  const sorted = Object.fromEntries(Object.entries(summaries).sort(([a], [b]) => a.localeCompare(b)));
  writeFileAtomic(file(palacePath), JSON.stringify({ version: AAAK_VERSION, summaries: sorted }) + '\n');
}

/** The stored AAAK summary of one drawer row, if `compress` made one. */
export function readSummary(palacePath: string, drawerId: string): StoredSummary | undefined {
  return readStore(palacePath)[drawerId];
}

/** Reads the summary store once; returns each drawer row's AAAK text (wake-up's `aaak` lines). */
export function summaryReader(palacePath: string): (drawerId: string) => string | undefined {
  const store = readStore(palacePath);
  return (drawerId) => store[drawerId]?.text;
}

export async function compress(memory: Memory, palacePath: string, raw: { wing?: unknown; room?: unknown; dry_run?: unknown }, now: Date = new Date()) {
  const wing = optionalPlace('wing', raw.wing);
  const room = optionalPlace('room', raw.room);
  if (raw.dry_run !== undefined && typeof raw.dry_run !== 'boolean') throw invalid('dry_run', 'dry_run must be true or false');
  const dryRun = raw.dry_run === true;
  const rows = await memory.scanDrawers({ ...(wing ? { wing } : {}), ...(room ? { room } : {}) });
  const store = readStore(palacePath);
  const next: Store = { ...store };
  const at = isoSeconds(now);
  let written = 0;
  let unchanged = 0;
  let sourceBytes = 0;
  let summaryBytes = 0;
  const sample: Array<{ drawer_id: string; text: string }> = [];
  const present = new Set<string>();
  for (const d of rows) {
    present.add(d.drawer_id);
    const { drawer_id: _id, ...summary } = encodeAaak(d);
    const sha = createHash('sha256').update(d.content).digest('hex');
    const old = store[d.drawer_id];
    sourceBytes += Buffer.byteLength(d.content, 'utf8');
    summaryBytes += Buffer.byteLength(summary.text, 'utf8');
    if (sample.length < SAMPLE) sample.push({ drawer_id: d.drawer_id, text: summary.text });
    if (old && old.source_sha256 === sha && old.text === summary.text && old.wing === d.wing && old.room === d.room) {
      unchanged++;
      continue;
    }
    next[d.drawer_id] = { ...summary, source_sha256: sha, compressed_at: at };
    written++;
  }
  // Summaries of drawers that are gone (within the scope compressed) go too.
  let removed = 0;
  for (const [id, s] of Object.entries(store))
    if (!present.has(id) && (!wing || s.wing === wing) && (!room || s.room === room)) {
      delete next[id];
      removed++;
    }
  if (!dryRun && (written > 0 || removed > 0)) writeStore(palacePath, next);
  return {
    dry_run: dryRun,
    wing: wing ?? null,
    room: room ?? null,
    drawers: rows.length,
    written,
    unchanged,
    removed,
    source_bytes: sourceBytes,
    summary_bytes: summaryBytes,
    bytes_saved: sourceBytes - summaryBytes,
    ratio: summaryBytes === 0 ? null : Number((sourceBytes / summaryBytes).toFixed(2)),
    token_estimate: { verbatim: tokenEstimate(sourceBytes), aaak: tokenEstimate(summaryBytes) },
    store: file(palacePath),
    sample,
  };
}
