// Wake-up context: what an agent loads at session start. L0 = identity (<PALACE_HOME>/identity.txt);
// then the palace's wings and rooms with their sizes, open tasks, the latest decisions and diary
// entries; L1 = the most important drawers grouped by room. Hard-capped in size; never embeds; never
// quotes mined code (a code drawer is named by its path and lines).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { invalid } from '../../errors.js';
import { optionalPlace } from '../drawers/drawer-input.js';
import { boilerplateKind } from '../../search/rank.js';
import { DECISIONS_ROOM, DIARY_ROOM, DIARY_TYPE } from '../drawers/diary.js';
import type { DrawerView, Memory } from '../drawers/memory.js';

/** The room decisions are filed in (palace init proposes it; agents file decisions there). */

export const WAKEUP_LIMITS = {
  identityChars: 1_200,
  l1Chars: 2_400,
  l1Drawers: 15,
  scanned: 2_000,
  /** In a large palace, L1 ranks the newest this-many useful rows (and the latest decisions). */
  usefulConsidered: 200,
  lineChars: 240,
  overviewChars: 1_400,
  wingsShown: 12,
  roomsPerWing: 8,
  tasksShown: 5,
  decisionsShown: 4,
  diaryShown: 3,
} as const;

/** Files whose drawers are source code: wake-up names them by path and lines, never quotes them. */
const CODE_FILE = /\.(?:[cm]?[jt]sx?|py|go|rs|java|kt|kts|scala|c|cc|cpp|cxx|h|hh|hpp|cs|rb|php|swift|m|mm|sh|bash|zsh|ps1|lua|sql|r|dart|ex|exs|erl|hs|ml|clj|vue|svelte|css|scss|less|json|ya?ml|toml|xml|gradle|proto)$/i;

/** Whether a drawer holds mined source code (its content is a fragment of a code file). */
export function isCodeDrawer(d: Pick<DrawerView, 'source_file'>): boolean {
  return d.source_file !== null && CODE_FILE.test(d.source_file);
}

/** A code drawer as a reference: the last path segments and its lines. */
function codeReference(d: Pick<DrawerView, 'source_file' | 'metadata' | 'chunk_index'>): string {
  const path = (d.source_file ?? '').split(/[\\/]/).slice(-3).join('/');
  const { line_start: a, line_end: b } = d.metadata;
  return typeof a === 'number' && typeof b === 'number' ? `${path}:${a}-${b} (code)` : `${path} chunk ${d.chunk_index} (code)`;
}

/** What wake-up shows of the open tasks; the caller reads them from the logstream. */
export interface WakeTask {
  correlation_id: string;
  status: string | null;
  requester: string | null;
  worker: string | null;
  last_event_at: string | null;
}

/** An open task's line: who asked, and who claimed it (or whom it is addressed to while nobody has). */
export function taskLine(t: WakeTask): string {
  const status = t.status ?? 'open';
  const who = [t.requester ? `requested by ${t.requester}` : '', t.worker ? (status === 'open' ? `for ${t.worker}, not claimed yet` : `claimed by ${t.worker}`) : status === 'open' ? 'not claimed yet' : ''].filter((p) => p !== '');
  return `* ${t.correlation_id} ${status}${who.length > 0 ? `: ${who.join(', ')}` : ''}${t.last_event_at ? ` (${t.last_event_at})` : ''}`;
}

/** A mined drawer's path in its project (metadata.rel_path), else its source file. */
function relPathOf(d: Pick<DrawerView, 'source_file' | 'metadata'>): string | undefined {
  return typeof d.metadata.rel_path === 'string' ? d.metadata.rel_path : (d.source_file ?? undefined);
}

/**
 * The ranked drawers spread across wings: wings in order of usefulness (drawers rated useful) then
 * recent activity (their newest drawer), and one drawer per wing in turn, each wing's best first, so
 * one freshly mined project cannot fill the section. Keeps each wing's own order.
 */
export function spreadAcrossWings<T extends { d: Pick<DrawerView, 'wing' | 'filed_at' | 'useful'> }>(ranked: readonly T[], n: number): T[] {
  const byWing = new Map<string, T[]>();
  for (const r of ranked) byWing.set(r.d.wing, [...(byWing.get(r.d.wing) ?? []), r]);
  const stats = (list: readonly T[]): { useful: number; newest: string } => ({
    useful: list.filter((r) => r.d.useful === true).length,
    newest: list.reduce((m, r) => (r.d.filed_at > m ? r.d.filed_at : m), ''),
  });
  const wings = [...byWing.entries()]
    .map(([wing, list]) => ({ wing, list, ...stats(list) }))
    .sort((a, b) => b.useful - a.useful || b.newest.localeCompare(a.newest) || a.wing.localeCompare(b.wing));
  const out: T[] = [];
  for (let i = 0; out.length < n; i++) {
    let took = false;
    for (const w of wings) {
      const r = w.list[i];
      if (r && out.length < n) {
        out.push(r);
        took = true;
      }
    }
    if (!took) break;
  }
  return out;
}

/**
 * Importance of a drawer for L1: metadata.importance (else weight, else emotional_weight; default 3),
 * +1 when rated useful, -2 when rated not useful. Ties go to the most recently filed.
 */
export function importanceOf(d: Pick<DrawerView, 'metadata' | 'useful'>): number {
  const m = d.metadata;
  const raw = [m.importance, m.weight, m.emotional_weight].find((v) => typeof v === 'number' && Number.isFinite(v));
  const base = typeof raw === 'number' ? raw : 3;
  return base + (d.useful === true ? 1 : d.useful === false ? -2 : 0);
}

function identity(home: string): { text: string; configured: boolean } {
  const path = join(home, 'identity.txt');
  try {
    const text = readFileSync(path, 'utf8').trim();
    if (text) return { text: text.length > WAKEUP_LIMITS.identityChars ? `${text.slice(0, WAKEUP_LIMITS.identityChars)}…` : text, configured: true };
  } catch {
    // missing: say how to configure it
  }
  return { text: `No identity configured. Write a few lines about who you are and how you work to ${path}.`, configured: false };
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > WAKEUP_LIMITS.lineChars ? `${flat.slice(0, WAKEUP_LIMITS.lineChars - 1)}…` : flat;
}

function fmt(n: number): string {
  return n.toLocaleString('en');
}

/** Lines of `lines` that fit in `budget` characters (each line costs its length + 1). */
function within(lines: readonly string[], budget: number): string[] {
  const out: string[] = [];
  let used = 0;
  for (const line of lines) {
    if (used + line.length + 1 > budget) break;
    out.push(line);
    used += line.length + 1;
  }
  return out;
}

/** Wings (largest first) with their largest rooms and sizes, from the placement census. */
async function palaceSection(memory: Memory, wing: string | undefined): Promise<string[]> {
  const places = await memory.placements();
  const wings = [...places]
    .filter(([w]) => !wing || w === wing)
    .map(([w, rooms]) => ({ w, rooms: [...rooms].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])), total: [...rooms.values()].reduce((a, b) => a + b, 0) }))
    .sort((a, b) => b.total - a.total || a.w.localeCompare(b.w));
  const drawers = wings.reduce((n, x) => n + x.total, 0);
  const rooms = wings.reduce((n, x) => n + x.rooms.length, 0);
  const lines = [`${fmt(drawers)} drawers in ${fmt(wings.length)} wing${wings.length === 1 ? '' : 's'}, ${fmt(rooms)} room${rooms === 1 ? '' : 's'}`];
  for (const { w, rooms: rs, total } of wings.slice(0, WAKEUP_LIMITS.wingsShown)) {
    const shown = rs.slice(0, WAKEUP_LIMITS.roomsPerWing).map(([r, n]) => `${r} ${fmt(n)}`);
    const more = rs.length > shown.length ? ` · +${rs.length - shown.length} more` : '';
    lines.push(oneLine(`${w} (${fmt(total)}): ${shown.join(' · ')}${more}`));
  }
  if (wings.length > WAKEUP_LIMITS.wingsShown) lines.push(`+${wings.length - WAKEUP_LIMITS.wingsShown} more wings`);
  return lines;
}

/** The newest `n` drawer rows of a room (across wings unless one is given), content included. */
async function latestIn(memory: Memory, room: string, wing: string | undefined, n: number): Promise<DrawerView[]> {
  // The census keeps the filing times of the decisions and diary rooms: no scan of the room.
  const newest = await memory.newestInRoom(room, wing, n);
  if (newest.length === 0) return [];
  const rows = new Map((await memory.scanDrawers({ ids: newest.map((d) => d.id) })).map((d) => [d.drawer_id, d]));
  return newest.map((d) => rows.get(d.id)).filter((d): d is DrawerView => d !== undefined);
}

/**
 * Drawers considered for L1: every row of the scope when it is small (at most WAKEUP_LIMITS.scanned
 * rows); otherwise the newest rows rated useful and the latest decisions (both from the census, a
 * few hundred rows read by id), so a large palace is never scanned.
 */
async function candidates(memory: Memory, wing: string | undefined, total: number): Promise<DrawerView[]> {
  const columns = ['id', 'wing', 'room', 'filed_at', 'useful', 'metadata', 'source_file', 'chunk_index'] as const;
  if (total <= WAKEUP_LIMITS.scanned) return memory.scanDrawers(wing ? { wing } : {}, { columns: [...columns] });
  const ids = new Set((await memory.newestUseful(wing, WAKEUP_LIMITS.usefulConsidered)).map((d) => d.id));
  for (const d of await memory.newestInRoom(DECISIONS_ROOM, wing, WAKEUP_LIMITS.l1Drawers)) ids.add(d.id);
  if (ids.size === 0) return [];
  return memory.scanDrawers({ ids: [...ids] }, { columns: [...columns] });
}

/**
 * The wake-up text. With `aaak: true` and a summary reader (palace compress output), an L1 line is
 * the drawer's AAAK body line where one exists; drawers without a summary keep their verbatim line.
 * `openTasks` (the latest of the logstream's tasks that are not done, and how many there are) adds an
 * open-tasks section.
 */
export async function wakeUp(
  memory: Memory,
  home: string,
  raw: { wing?: unknown; aaak?: unknown },
  summaryOf?: (drawerId: string) => string | undefined,
  openTasks?: () => Promise<{ tasks: WakeTask[]; total: number }>,
) {
  const wing = optionalPlace('wing', raw.wing);
  if (raw.aaak !== undefined && typeof raw.aaak !== 'boolean') throw invalid('aaak', 'aaak must be true or false');
  const summary = raw.aaak === true ? summaryOf : undefined;
  let summaries = 0;
  // The overview's reads (places, open tasks, latest decisions and diary) do not depend on L1: they run
  // meanwhile instead of after it (each is a round trip to the store; in sequence they made most of
  // wake-up's time on the scale palace).
  const overview = Promise.all([
    palaceSection(memory, wing),
    openTasks?.() ?? Promise.resolve({ tasks: [], total: 0 }),
    latestIn(memory, DECISIONS_ROOM, wing, WAKEUP_LIMITS.decisionsShown),
    latestIn(memory, DIARY_ROOM, wing, WAKEUP_LIMITS.diaryShown),
  ]);
  overview.catch(() => undefined); // awaited below; an L1 failure first must not leave it unhandled
  const total = await memory.countDrawers(wing ? { wing } : {});
  // Ranking reads metadata only; the content of the few shown drawers is fetched afterwards.
  const rows = await candidates(memory, wing, total);
  // Licence, badge, vendored and generated text never earns a line (by path here, by content below).
  const ranked = rows
    .filter((d) => d.metadata.type !== DIARY_TYPE && d.chunk_index === 0 && boilerplateKind(relPathOf(d), '') === undefined)
    .map((d) => ({ d, score: importanceOf(d) }))
    .sort((a, b) => b.score - a.score || b.d.filed_at.localeCompare(a.d.filed_at) || a.d.drawer_id.localeCompare(b.d.drawer_id));
  // Twice the lines are taken before the content check, so a dropped boilerplate drawer leaves room for the next.
  const spread = spreadAcrossWings(ranked, WAKEUP_LIMITS.l1Drawers * 2);
  const prose = spread.filter(({ d }) => !isCodeDrawer(d)).map(({ d }) => d.drawer_id);
  const contents = new Map(prose.length === 0 ? [] : (await memory.scanDrawers({ ids: prose }, { columns: ['id', 'content'] })).map((d) => [d.drawer_id, d.content]));
  const top = spread.filter(({ d }) => isCodeDrawer(d) || boilerplateKind(undefined, contents.get(d.drawer_id) ?? '') === undefined).slice(0, WAKEUP_LIMITS.l1Drawers);
  const groups = new Map<string, string[]>();
  for (const { d } of top) {
    const key = `${d.wing}/${d.room}`;
    const aaak = isCodeDrawer(d) ? undefined : summary?.(d.drawer_id)?.split('\n')[1];
    if (aaak) summaries++;
    const text = isCodeDrawer(d) ? codeReference(d) : (aaak ?? contents.get(d.drawer_id) ?? '');
    groups.set(key, [...(groups.get(key) ?? []), `- ${oneLine(text)} (${d.drawer_id})`]);
  }
  const l1Lines: string[] = [];
  let used = 0;
  let shown = 0;
  for (const [room, lines] of groups) {
    const header = `[${room}]`;
    // A room header is shown only with at least one of its drawers.
    if (used + header.length + 1 + (lines[0]?.length ?? 0) + 1 > WAKEUP_LIMITS.l1Chars) break;
    l1Lines.push(header);
    used += header.length + 1;
    for (const line of lines) {
      if (used + line.length + 1 > WAKEUP_LIMITS.l1Chars) break;
      l1Lines.push(line);
      used += line.length + 1;
      shown++;
    }
  }

  // The overview: the palace's shape, open tasks, the latest decisions and diary entries.
  const [palace, open, decisions, diary] = await overview;
  const tasks = open.tasks
    .slice()
    .sort((a, b) => (b.last_event_at ?? '').localeCompare(a.last_event_at ?? ''))
    .slice(0, WAKEUP_LIMITS.tasksShown)
    .map((t) => oneLine(taskLine(t)));
  const recent = [
    ...decisions.map((d) => `* ${d.filed_at.slice(0, 10)} [${d.wing}/${d.room}] ${isCodeDrawer(d) ? codeReference(d) : d.content}`),
    ...diary.map((d) => `* ${d.filed_at.slice(0, 10)} diary of ${typeof d.metadata.agent === 'string' ? d.metadata.agent : d.wing}: ${d.content}`),
  ].map(oneLine);
  const sections: string[] = [];
  let budget = WAKEUP_LIMITS.overviewChars;
  for (const [title, lines] of [
    [`## PALACE${wing ? ` (${wing})` : ''}`, palace],
    [`## OPEN TASKS (${fmt(open.total)})`, tasks],
    ['## LATEST DECISIONS AND DIARY', recent],
  ] as const) {
    if (lines.length === 0) continue;
    const fit = within(lines, budget - title.length - 2);
    if (fit.length === 0) continue;
    sections.push(`${title}\n${fit.join('\n')}`);
    budget -= title.length + 2 + fit.reduce((n, l) => n + l.length + 1, 0);
  }

  const l0 = identity(home);
  const l1 = l1Lines.length ? l1Lines.join('\n') : 'No drawers yet.';
  const text = [`## L0 — IDENTITY\n${l0.text}`, ...sections, `## L1 — ESSENTIAL${wing ? ` (${wing})` : ''}\n${l1}`].join('\n\n');
  return {
    wing: wing ?? null,
    identity_configured: l0.configured,
    l0: l0.text,
    l1,
    palace,
    open_tasks: tasks,
    recent,
    text,
    drawers_considered: rows.length,
    drawers_shown: shown,
    aaak_lines: summaries,
    chars: text.length,
    token_estimate: Math.ceil(text.length / 3.8),
  };
}
