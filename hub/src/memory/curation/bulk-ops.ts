// Bulk curation of drawers: bulk move, purge (delete by source_file/wing/room), prune by age and
// rename-wing. Selection always works on whole drawers: a selected chunk brings every chunk of its
// parent, so a long drawer is never torn. Relocation goes through Memory.relocateRows (content and
// vectors untouched, previous placement appended to metadata.placement_history).
//
// Decisions: bulk move, purge and prune preview by default (dry_run true) and list at most
// LIST_MAX drawers; an unfiltered bulk move or purge is refused. Prune only removes drawers whose
// every row has a parseable filed_at older than the cutoff; unparseable or missing ones are reported
// as skipped and never pruned. Rename-wing applies unless dry_run, merges into an existing wing and
// carries the wing's declared rooms (rooms.json) along.

import { HubError, invalid } from '../../errors.js';
import type { DrawerFilter } from '../../vector/vector-store.js';
import { DIARY_TYPE } from '../drawers/diary.js';
import { drawerId, optionalPlace, placeName, tagList } from '../drawers/drawer-input.js';
import type { DrawerView, Memory } from '../drawers/memory.js';
import { moveDeclaredWing } from '../navigation/rooms.js';

/** Most drawers a result lists by name (counts are always complete). */
export const LIST_MAX = 200;
const ID_BATCH = 500;
const LIGHT = ['id', 'wing', 'room', 'parent_id', 'chunk_index', 'filed_at', 'source_file', 'tags', 'metadata'] as const;

/** One whole drawer: its id (the parent id of a chunked one) and its rows. */
export interface DrawerGroup {
  drawer_id: string;
  wing: string;
  room: string;
  source_file: string | null;
  rows: DrawerView[];
}

export interface Selector {
  wing?: string;
  room?: string;
  source_file?: string;
  tags?: string[];
  ids?: string[];
}

function batches<T>(list: readonly T[], size = ID_BATCH): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

function sourceOf(field: string, raw: unknown): string | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string' || raw.length > 4096) throw invalid(field, `${field} must be a file path string`);
  return raw;
}

function idsOf(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw invalid('ids', 'ids must be a list of drawer ids');
  if (raw.length === 0) return undefined;
  return [...new Set(raw.map((id) => drawerId(id)))];
}

/** Every whole drawer matching the selector (all conditions hold; tags and ids mean "any of"). */
export async function selectDrawers(memory: Memory, sel: Selector): Promise<DrawerGroup[]> {
  const base: DrawerFilter = {
    ...(sel.wing === undefined ? {} : { wing: sel.wing }),
    ...(sel.room === undefined ? {} : { room: sel.room }),
    ...(sel.source_file === undefined ? {} : { source_file: sel.source_file }),
    ...(sel.tags && sel.tags.length > 0 ? { tags: sel.tags } : {}),
  };
  const rows = new Map<string, DrawerView>();
  const add = (list: DrawerView[]): void => list.forEach((r) => rows.set(r.drawer_id, r));
  if (sel.ids) {
    for (const batch of batches(sel.ids)) add(await memory.scanDrawers({ ...base, ids: batch }, { columns: LIGHT }));
    // An id that is no row may be the parent id of a chunked drawer.
    for (const id of sel.ids.filter((i) => !rows.has(i))) add(await memory.scanDrawers({ ...base, parent_id: id }, { columns: LIGHT }));
  } else {
    add(await memory.scanDrawers(base, { columns: LIGHT }));
  }
  const groups = new Map<string, DrawerGroup>();
  for (const r of rows.values()) {
    const key = r.parent_id ?? r.drawer_id;
    const g = groups.get(key) ?? { drawer_id: key, wing: r.wing, room: r.room, source_file: r.source_file, rows: [] };
    g.rows.push(r);
    groups.set(key, g);
  }
  // A partly selected chunked drawer brings the rest of its chunks.
  for (const g of groups.values()) {
    const head = g.rows[0];
    const expected = Number(head?.metadata.chunks ?? 1);
    if (head?.parent_id && g.rows.length < expected) {
      const all = await memory.scanDrawers({ parent_id: head.parent_id }, { columns: LIGHT });
      g.rows = all;
    }
    g.rows.sort((a, b) => a.chunk_index - b.chunk_index);
  }
  return [...groups.values()].sort((a, b) => (a.rows[0]?.filed_at ?? '').localeCompare(b.rows[0]?.filed_at ?? '') || a.drawer_id.localeCompare(b.drawer_id));
}

const rowIds = (groups: readonly DrawerGroup[]): string[] => groups.flatMap((g) => g.rows.map((r) => r.drawer_id));

async function deleteGroups(memory: Memory, groups: readonly DrawerGroup[]): Promise<number> {
  let deleted = 0;
  for (const batch of batches(rowIds(groups))) deleted += await memory.deleteDrawers({ ids: batch });
  return deleted;
}

function dryRunOf(raw: unknown, fallback: boolean): boolean {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw !== 'boolean') throw invalid('dry_run', 'dry_run must be true or false');
  return raw;
}

export interface BulkMoveInput {
  from_wing?: unknown;
  from_room?: unknown;
  source_file?: unknown;
  tags?: unknown;
  ids?: unknown;
  to_wing?: unknown;
  to_room?: unknown;
  dry_run?: unknown;
}

/** Moves every selected drawer to to_wing and/or to_room (preview unless dry_run is false). */
export async function bulkMove(memory: Memory, raw: BulkMoveInput) {
  const sel: Selector = {};
  const wing = optionalPlace('wing', raw.from_wing);
  const room = optionalPlace('room', raw.from_room);
  const source = sourceOf('source_file', raw.source_file);
  const tags = tagList(raw.tags);
  const ids = idsOf(raw.ids);
  if (wing !== undefined) sel.wing = wing;
  if (room !== undefined) sel.room = room;
  if (source !== undefined) sel.source_file = source;
  if (tags.length > 0) sel.tags = tags;
  if (ids !== undefined) sel.ids = ids;
  if (Object.keys(sel).length === 0) throw invalid('from_wing', 'select drawers with from_wing, from_room, source_file, tags or ids (an unfiltered bulk move is refused)');
  const toWing = optionalPlace('wing', raw.to_wing);
  const toRoom = optionalPlace('room', raw.to_room);
  if (toWing === undefined && toRoom === undefined) throw invalid('to_wing', 'give to_wing and/or to_room');
  const dryRun = dryRunOf(raw.dry_run, true);
  const groups = await selectDrawers(memory, sel);
  const moving = groups.filter((g) => g.rows.some((r) => (toWing !== undefined && r.wing !== toWing) || (toRoom !== undefined && r.room !== toRoom)));
  let moved = 0;
  if (!dryRun) for (const batch of batches(rowIds(moving))) moved += await memory.relocateRows({ ids: batch }, { ...(toWing ? { wing: toWing } : {}), ...(toRoom ? { room: toRoom } : {}) }, 'bulk-move');
  return {
    dry_run: dryRun,
    selector: sel,
    target: { wing: toWing ?? null, room: toRoom ?? null },
    matched: groups.length,
    already_there: groups.length - moving.length,
    drawers_to_move: moving.length,
    rows_to_move: rowIds(moving).length,
    ...(dryRun ? {} : { moved_drawers: moving.length, moved_rows: moved }),
    drawers: moving.slice(0, LIST_MAX).map((g) => ({
      drawer_id: g.drawer_id,
      from: { wing: g.wing, room: g.room },
      to: { wing: toWing ?? g.wing, room: toRoom ?? g.room },
      rows: g.rows.length,
    })),
    listed_all: moving.length <= LIST_MAX,
  };
}

/** Deletes every drawer from a source file and/or in a wing/room (preview unless dry_run is false). */
export async function purge(memory: Memory, raw: { source_file?: unknown; wing?: unknown; room?: unknown; dry_run?: unknown }) {
  const sel: Selector = {};
  const wing = optionalPlace('wing', raw.wing);
  const room = optionalPlace('room', raw.room);
  const source = sourceOf('source_file', raw.source_file);
  if (wing !== undefined) sel.wing = wing;
  if (room !== undefined) sel.room = room;
  if (source !== undefined) sel.source_file = source;
  if (Object.keys(sel).length === 0) throw invalid('source_file', 'give source_file, wing and/or room (an unfiltered purge is refused)');
  const dryRun = dryRunOf(raw.dry_run, true);
  const groups = await selectDrawers(memory, sel);
  const deleted = dryRun ? 0 : await deleteGroups(memory, groups);
  return {
    dry_run: dryRun,
    filter: sel,
    drawers: groups.length,
    rows: rowIds(groups).length,
    ...(dryRun ? {} : { deleted_drawers: groups.length, deleted_rows: deleted }),
    sample: groups.slice(0, LIST_MAX).map((g) => ({ drawer_id: g.drawer_id, wing: g.wing, room: g.room, source_file: g.source_file, rows: g.rows.length })),
    listed_all: groups.length <= LIST_MAX,
  };
}

const FILED_AT = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** Milliseconds of a filed_at timestamp, or undefined when it is missing or not a date. */
export function filedAtMs(value: string): number | undefined {
  const text = value.trim();
  if (!FILED_AT.test(text)) return undefined;
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text.replace(' ', 'T'));
  return Number.isNaN(ms) ? undefined : ms;
}

/** Removes drawers filed more than stale_days ago (preview unless dry_run is false). */
export async function prune(memory: Memory, raw: { stale_days?: unknown; wing?: unknown; room?: unknown; dry_run?: unknown }, now: Date = new Date()) {
  const days = raw.stale_days;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 100_000) throw invalid('stale_days', 'stale_days must be a whole number of days ≥ 1');
  const wing = optionalPlace('wing', raw.wing);
  const room = optionalPlace('room', raw.room);
  const dryRun = dryRunOf(raw.dry_run, true);
  const cutoff = now.getTime() - days * 86_400_000;
  const groups = await selectDrawers(memory, { ...(wing ? { wing } : {}), ...(room ? { room } : {}) });
  const stale: DrawerGroup[] = [];
  const skipped: Array<{ drawer_id: string; filed_at: string }> = [];
  for (const g of groups) {
    const times = g.rows.map((r) => filedAtMs(r.filed_at));
    if (times.some((t) => t === undefined)) skipped.push({ drawer_id: g.drawer_id, filed_at: g.rows.find((_r, i) => times[i] === undefined)?.filed_at ?? '' });
    else if (times.every((t) => (t as number) < cutoff)) stale.push(g);
  }
  const deleted = dryRun ? 0 : await deleteGroups(memory, stale);
  return {
    dry_run: dryRun,
    stale_days: days,
    cutoff: new Date(cutoff).toISOString(),
    filter: { wing: wing ?? null, room: room ?? null },
    scanned: groups.length,
    stale: stale.length,
    rows: rowIds(stale).length,
    ...(dryRun ? {} : { pruned_drawers: stale.length, pruned_rows: deleted }),
    drawers: stale.slice(0, LIST_MAX).map((g) => ({ drawer_id: g.drawer_id, wing: g.wing, room: g.room, filed_at: g.rows[0]?.filed_at ?? '' })),
    listed_all: stale.length <= LIST_MAX,
    skipped_unparseable: skipped.length,
    skipped: skipped.slice(0, LIST_MAX),
  };
}

/** Moves every drawer (diary entries included) and the declared rooms of a wing to a new name. */
export async function renameWing(memory: Memory, palacePath: string, raw: { wing?: unknown; new_wing?: unknown; dry_run?: unknown }) {
  const wing = placeName('wing', raw.wing);
  const newWing = placeName('wing', raw.new_wing);
  if (newWing === wing) throw invalid('new_wing', 'new_wing is the same as wing');
  const dryRun = dryRunOf(raw.dry_run, false);
  const groups = await selectDrawers(memory, { wing });
  const declared = moveDeclaredWing(palacePath, wing, newWing, true);
  if (groups.length === 0 && declared.length === 0) throw new HubError('memory.not_found', `no wing '${wing}'`, { field: 'wing' });
  const merged = (await memory.countDrawers({ wing: newWing })) > 0;
  const diaryEntries = groups.filter((g) => g.rows[0]?.metadata.type === DIARY_TYPE).length;
  let moved = 0;
  if (!dryRun) {
    moved = await memory.relocateRows({ wing }, { wing: newWing }, 'rename-wing');
    moveDeclaredWing(palacePath, wing, newWing);
  }
  return {
    dry_run: dryRun,
    wing,
    new_wing: newWing,
    merged_into_existing: merged,
    drawers: groups.length,
    rows: rowIds(groups).length,
    ...(dryRun ? {} : { moved_rows: moved }),
    declared_rooms: declared,
    diary_entries: diaryEntries,
    ...(diaryEntries > 0 ? { note: `diary entries moved too: read them with diary read --wing ${newWing}` } : {}),
  };
}
