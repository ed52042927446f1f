// `palace hook inbox --agent X`: what is new for an agent since its last look, as additional context
// for Claude Code / Codex SessionStart and UserPromptSubmit hooks. Reads through the live hub's
// palace_event_list, or with no hub the log file directly (read-only, see openDirectInboxLog), prints
// nothing when nothing is new, and keeps a cursor per agent so an item is shown once.

import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { PalaceConfig } from '../hub/src/config.js';
import { LOGSTREAM_FILE } from '../hub/src/core/palace-files.js';
import { projectTask } from '../hub/src/core/task-state.js';
import { fenceUntrusted, terminalLine, terminalText } from '../hub/src/core/terminal-text.js';
import type { EventPage, LogEvent } from '../hub/src/core/types.js';
import { eventQuery, type RawQuery } from '../hub/src/core/validate.js';
import { HubError } from '../hub/src/errors.js';
import { defaultStatePath, readState, writeState } from './watch-state.js';

/** What the inbox reads: one page of events, as palace_event_list answers it. */
export type InboxLog = (query: RawQuery) => Promise<EventPage>;

/** The inbox over a tool caller (runTool: the live hub, or the MCP server in-process). */
export function toolInboxLog(call: (name: string, args: Record<string, unknown>) => Promise<unknown>): InboxLog {
  return async (query) => (await call('palace_event_list', query as Record<string, unknown>)) as EventPage;
}

/**
 * With no hub: the log file opened read-only in this process. The in-process MCP road opens the
 * whole palace per call (measured ~5x `node -e 0` per call, several calls a run); a prompt hook
 * must stay near node's start-up time, so this one path reads SQLite itself. It never writes,
 * never migrates (an old log is the next hub's job) and never creates a palace.
 */
export async function openDirectInboxLog(palacePath: string): Promise<{ log: InboxLog; close: () => void }> {
  const { SqliteEventStore } = await import('../hub/src/logstream/sqlite-event-store.js');
  const store = new SqliteEventStore(join(palacePath, LOGSTREAM_FILE), { readonly: true, mintReplicaId: () => 'rep_000000000000' });
  return { log: (query) => Promise.resolve(store.query(eventQuery(query))), close: () => store.close() };
}

/** Every event of one task, in append order. */
async function eventsOf(log: InboxLog, correlationId: string): Promise<LogEvent[]> {
  const out: LogEvent[] = [];
  let since: string | undefined;
  for (;;) {
    const page = await log({ correlation_id: correlationId, limit: PAGE, ...(since ? { since_event_id: since } : {}) });
    out.push(...page.events);
    if (!page.has_more) return out;
    since = page.events.at(-1)?.id;
  }
}

/** A page after the cursor; a cursor the log no longer knows (a restored log) restarts from the start. */
async function pageAfter(log: InboxLog, query: RawQuery, cursor: string | null): Promise<{ page: EventPage; cursor: string | null }> {
  try {
    return { page: await log({ ...query, ...(cursor ? { since_event_id: cursor } : {}) }), cursor };
  } catch (err) {
    if (!(cursor && err instanceof HubError && err.code === 'log.unknown_cursor')) throw err;
    return { page: await log(query), cursor: null };
  }
}

/** The event types an inbox reports. */
export const INBOX_TYPES = [
  'task.request',
  'task.reply',
  'patch.ready',
  'event.ack',
  'claim.expired',
] as const;
/** At most this many items are spelled out; the rest are counted. */
const MAX_ITEMS = 20;
/** At most this many events are examined per run (the cursor stops there; the next run goes on). */
const MAX_SCANNED = 5_000;
const PAGE = 500;

export interface InboxResult {
  /** The additional-context text, or '' when nothing is new. */
  text: string;
  items: number;
  cursor: string | null;
}

/** The first non-empty line of text another agent wrote (every line end counts: \r, U+2028…), controls removed. */
function oneLine(text: string, max: number): string {
  const line =
    terminalText(text)
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function bodyField(body: string, key: string): string | undefined {
  try {
    const v: unknown = JSON.parse(body);
    const field = v && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
    return typeof field === 'string' ? field : undefined;
  } catch {
    return undefined;
  }
}

/** One compact line per item: what happened, on which task, and the id to act on. */
function itemLine(e: LogEvent, agent: string, status: string | null = e.status): string {
  const task = e.correlation_id ?? e.id;
  const note = e.body ? `: ${oneLine(e.body, 140)}` : '';
  switch (e.type) {
    case 'task.request':
      return `- new task ${task} from ${e.from_agent}${e.to_agent === '*' ? ' (to anyone)' : ''} [${status ?? 'open'}] request ${e.id}${note}`;
    case 'patch.ready':
      return `- patch ready on ${task} from ${e.from_agent} (artifact ${e.artifact_ids.join(', ') || 'none'}); apply: palace patch apply ${e.id} --agent ${agent}${note}`;
    case 'event.ack':
      return `- ${e.status ?? 'ack'} on ${task} by ${e.from_agent} (${e.id})${note}`;
    case 'claim.expired': {
      const worker = bodyField(e.body, 'worker');
      return `- claim expired on ${task}${worker ? ` (worker ${worker})` : ''}; the task is open again (${e.id})`;
    }
    default:
      return `- ${e.type}${e.status ? ` ${e.status}` : ''} on ${task} from ${e.from_agent} (${e.id})${note}`;
  }
}

/** The inbox state file: `~/.palace/inbox/<agent>.json` (same format as the watch cursors). */
export function inboxStatePath(home: string, agent: string): string {
  return defaultStatePath(home, agent, 'inbox');
}

/**
 * Collects what is new for `agent` after its cursor and moves the cursor past what was examined.
 * A first run (no cursor) reports the agent's open tasks and starts the cursor at the tip.
 */
export async function collectInbox(log: InboxLog, agent: string, statePath: string): Promise<InboxResult> {
  const state = readState(statePath);
  const lines: string[] = [];
  let items = 0;
  const push = (line: string): void => {
    items += 1;
    if (lines.length < MAX_ITEMS) lines.push(line);
  };
  let cursor: string | null;
  const firstLook = state.kind === 'absent' || state.kind === 'corrupt'; // never flood a prompt with the whole log
  if (firstLook) {
    const tip = (await log({ order: 'desc', limit: 1 })).events[0];
    cursor = tip?.id ?? null;
    // Only requests up to the tip the cursor starts at: a later one is reported by the next run.
    const tipSeq = tip?.seq ?? 0;
    const requests = (
      await log({ type: 'task.request', to_agent: agent, exclude_from_agent: agent, order: 'desc', limit: 50 })
    ).events;
    for (const request of requests.reverse()) {
      if (request.seq > tipSeq) continue;
      const cid = request.correlation_id;
      if (!cid) continue;
      const task = projectTask(cid, await eventsOf(log, cid));
      if (task.status === 'open' || (task.status === 'claimed' && task.worker === agent))
        push(itemLine(request, agent, task.status));
    }
  } else {
    cursor = state.kind === 'ok' ? state.cursor : null;
    const mine = new Map<string, boolean>();
    const isMine = async (cid: string): Promise<boolean> => {
      let v = mine.get(cid);
      if (v === undefined) {
        const t = projectTask(cid, await eventsOf(log, cid));
        v = t.requester === agent || t.worker === agent;
        mine.set(cid, v);
      }
      return v;
    };
    for (let scanned = 0; scanned < MAX_SCANNED; scanned += PAGE) {
      const read = await pageAfter(log, { type: [...INBOX_TYPES], exclude_from_agent: agent, limit: PAGE }, cursor);
      const page = read.page;
      cursor = read.cursor;
      for (const e of page.events) {
        const addressed = e.to_agent === agent || (e.to_agent === '*' && e.type === 'task.request');
        const worker = e.type === 'claim.expired' ? bodyField(e.body, 'worker') : undefined;
        if (
          addressed ||
          worker === agent ||
          (e.correlation_id !== null && e.type !== 'task.request' && (await isMine(e.correlation_id)))
        )
          push(itemLine(e, agent));
      }
      cursor = page.events.at(-1)?.id ?? cursor;
      if (!page.has_more) break;
    }
  }
  if (items > lines.length)
    lines.push(`- … and ${items - lines.length} more: palace logstream list --to-agent ${agent} --json`);
  // Every item quotes other agents' words (bodies, names): fenced, one line each, as data.
  const text =
    items === 0
      ? ''
      : [
          `palace inbox for ${terminalLine(agent)} (${items} new${firstLook ? ', first look: your open tasks' : ''}):`,
          ...fenceUntrusted(lines),
        ].join('\n');
  writeState(statePath, cursor, agent);
  return { text, items, cursor };
}

/** Whether the palace has a log yet (a hook never creates a palace). */
export function hasLog(config: Readonly<PalaceConfig>, file: string): boolean {
  return existsSync(join(config.palacePath, file));
}

/** Claude Code's (and Codex's) hook output for additional context. */
export function hookContextJson(event: string, text: string): string {
  return JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: text } });
}
