// Wake-up context: what an agent loads at session start. L0 = identity (<PALACE_HOME>/identity.txt),
// L1 = the most important drawers grouped by room, hard-capped in size. Reads only; never embeds.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { invalid } from '../errors.js';
import { optionalPlace } from './drawer-input.js';
import { DIARY_TYPE } from './diary.js';
import type { DrawerView, Memory } from './memory.js';

export const WAKEUP_LIMITS = { identityChars: 1_200, l1Chars: 3_200, l1Drawers: 15, scanned: 2_000, lineChars: 240 } as const;

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

/**
 * L0 + L1. With `aaak: true` and a summary reader (palace compress output), an L1 line is the
 * drawer's AAAK body line where one exists; drawers without a summary keep their verbatim line.
 */
export async function wakeUp(memory: Memory, home: string, raw: { wing?: unknown; aaak?: unknown }, summaryOf?: (drawerId: string) => string | undefined) {
  const wing = optionalPlace('wing', raw.wing);
  if (raw.aaak !== undefined && typeof raw.aaak !== 'boolean') throw invalid('aaak', 'aaak must be true or false');
  const summary = raw.aaak === true ? summaryOf : undefined;
  let summaries = 0;
  const filter = wing ? { wing } : {};
  const total = await memory.countDrawers(filter);
  // The newest rows are the likeliest to matter; the scan is bounded so wake-up stays fast.
  // Ranking reads metadata only; the content of the few shown drawers is fetched afterwards.
  const rows = await memory.scanDrawers(filter, {
    offset: Math.max(0, total - WAKEUP_LIMITS.scanned),
    limit: WAKEUP_LIMITS.scanned,
    columns: ['id', 'wing', 'room', 'filed_at', 'useful', 'metadata'],
  });
  const top = rows
    .filter((d) => d.metadata.type !== DIARY_TYPE)
    .map((d) => ({ d, score: importanceOf(d) }))
    .sort((a, b) => b.score - a.score || b.d.filed_at.localeCompare(a.d.filed_at) || a.d.drawer_id.localeCompare(b.d.drawer_id))
    .slice(0, WAKEUP_LIMITS.l1Drawers);
  const contents = new Map((await memory.scanDrawers({ ids: top.map((t) => t.d.drawer_id) }, { columns: ['id', 'content'] })).map((d) => [d.drawer_id, d.content]));
  const ranked = top.map(({ d, score }) => ({ d: { ...d, content: contents.get(d.drawer_id) ?? '' }, score }));
  const groups = new Map<string, string[]>();
  for (const { d } of ranked) {
    const key = `${d.wing}/${d.room}`;
    const aaak = summary?.(d.drawer_id)?.split('\n')[1];
    if (aaak) summaries++;
    groups.set(key, [...(groups.get(key) ?? []), `- ${aaak ? oneLine(aaak) : oneLine(d.content)} (${d.drawer_id})`]);
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
  const l0 = identity(home);
  const l1 = l1Lines.length ? l1Lines.join('\n') : 'No drawers yet.';
  const text = `## L0 — IDENTITY\n${l0.text}\n\n## L1 — ESSENTIAL${wing ? ` (${wing})` : ''}\n${l1}`;
  return {
    wing: wing ?? null,
    identity_configured: l0.configured,
    l0: l0.text,
    l1,
    text,
    drawers_considered: rows.length,
    drawers_shown: shown,
    aaak_lines: summaries,
    chars: text.length,
    token_estimate: Math.ceil(text.length / 3.8),
  };
}
