// Per-agent diaries: each entry is an ordinary drawer in the agent's wing, room `diary`, with
// metadata.type = 'diary_entry', so search finds it like any drawer. Never deduplicated away.

import { invalid } from '../../errors.js';
import type { Memory } from './memory.js';
import { DIARY_ROOM, DIARY_TYPE } from './room-names.js';

// The names live in room-names.ts (memory.ts needs them too and must not import this module).
export { DECISIONS_ROOM, DIARY_ROOM, DIARY_TYPE } from './room-names.js';

/** The agent's wing: its name with whitespace runs as `_` (e.g. `laptop-claude`). */
export function agentWing(agent: string): string {
  return agent.trim().replace(/\s+/g, '_');
}

function agentOf(value: unknown, fallback: string | undefined): string {
  const agent = typeof value === 'string' && value.trim() ? value.trim() : fallback;
  if (!agent) throw invalid('agent_name', 'agent_name is required (or set PALACE_AGENT_NAME on the hub)');
  if (agent.length > 128) throw invalid('agent_name', 'agent_name is longer than 128 characters');
  return agent;
}

export interface DiaryEntry {
  entry_id: string;
  agent: string;
  wing: string;
  topic: string;
  timestamp: string;
  content: string;
}

export async function writeDiary(
  memory: Memory,
  raw: { agent_name?: unknown; entry?: unknown; topic?: unknown; wing?: unknown },
  defaultAgent: string | undefined,
): Promise<{ success: true; entry_id: string; agent: string; wing: string; topic: string }> {
  const agent = agentOf(raw.agent_name, defaultAgent);
  const topic = typeof raw.topic === 'string' && raw.topic.trim() ? raw.topic.trim().slice(0, 64) : 'general';
  const wing = typeof raw.wing === 'string' && raw.wing.trim() ? raw.wing : agentWing(agent);
  const r = await memory.addDrawer({
    wing,
    room: DIARY_ROOM,
    content: raw.entry,
    tags: ['diary'],
    added_by: agent,
    metadata: { type: DIARY_TYPE, agent, topic },
    force: true,
  });
  return { success: true, entry_id: r.drawer_id, agent, wing: r.wing, topic };
}

/** The newest `last_n` entries (default 10), newest first, each with its full verbatim text. */
export async function readDiary(
  memory: Memory,
  raw: { agent_name?: unknown; last_n?: unknown; wing?: unknown },
  defaultAgent: string | undefined,
): Promise<{ agent: string; wing: string; entries: DiaryEntry[]; total: number; showing: number }> {
  const agent = agentOf(raw.agent_name, defaultAgent);
  const lastN = raw.last_n ?? 10;
  if (typeof lastN !== 'number' || !Number.isInteger(lastN) || lastN < 1 || lastN > 100) throw invalid('last_n', 'last_n must be a whole number from 1 to 100');
  const wing = typeof raw.wing === 'string' && raw.wing.trim() ? raw.wing : agentWing(agent);
  const rows = (await memory.scanDrawers({ wing, room: DIARY_ROOM })).filter((d) => d.metadata.type === DIARY_TYPE && d.chunk_index === 0);
  rows.sort((a, b) => b.filed_at.localeCompare(a.filed_at) || b.drawer_id.localeCompare(a.drawer_id));
  const entries: DiaryEntry[] = [];
  for (const d of rows.slice(0, lastN)) {
    const whole = d.parent_id ? await memory.getDrawer(d.parent_id) : d;
    entries.push({
      entry_id: d.parent_id ?? d.drawer_id,
      agent: typeof d.metadata.agent === 'string' ? d.metadata.agent : agent,
      wing,
      topic: typeof d.metadata.topic === 'string' ? d.metadata.topic : 'general',
      timestamp: d.filed_at,
      content: whole.content,
    });
  }
  return { agent, wing, entries, total: rows.length, showing: entries.length };
}
