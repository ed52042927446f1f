// What is new for an agent after a cursor: the inbox `palace hook inbox` prints and the MCP resource
// palace://inbox/{agent} serves. Reads through one query function (palace_event_list's page), so the
// hub, the in-process road and the hook's read-only SQLite road compute it the same way. Pure: the
// caller keeps the cursor (the hook in its state file, a resource reader in its URI).

import { projectTask } from './task-state.js';
import { fenceUntrusted, terminalLine, terminalText } from './terminal-text.js';
import type { EventPage, LogEvent } from './types.js';
import type { RawQuery } from './validate.js';
import { HubError } from '../errors.js';

/** What the inbox reads: one page of events, as palace_event_list answers it. */
export type InboxLog = (query: RawQuery) => Promise<EventPage>;

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

export interface InboxResult {
  /** The additional-context text, or '' when nothing is new. */
  text: string;
  items: number;
  cursor: string | null;
  /** No cursor was given: the agent's open tasks up to the tip, and the cursor starts there. */
  first_look: boolean;
}

/**
 * Collects what is new for `agent` after `cursor` (undefined: a first look, which reports the agent's
 * open tasks and starts the cursor at the tip) and says where the next look starts.
 */
export async function computeInbox(log: InboxLog, agent: string, cursorIn: string | null | undefined): Promise<InboxResult> {
  const lines: string[] = [];
  let items = 0;
  const push = (line: string): void => {
    items += 1;
    if (lines.length < MAX_ITEMS) lines.push(line);
  };
  let cursor: string | null;
  const firstLook = cursorIn === undefined; // never flood a prompt with the whole log
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
    cursor = cursorIn ?? null;
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
  return { text, items, cursor, first_look: firstLook };
}


/**
 * Whether `e` is an inbox item for `agent` without looking at its task (addressed to it, a request to
 * anyone, its claim expired); `mineTask` decides the rest (a reply, ack or patch on a task it requested
 * or works on). The same rule computeInbox applies.
 */
export function inboxAddressed(e: LogEvent, agent: string): boolean | 'task' {
  if (!(INBOX_TYPES as readonly string[]).includes(e.type) || e.from_agent === agent) return false;
  if (e.to_agent === agent || (e.to_agent === '*' && e.type === 'task.request')) return true;
  if (e.type === 'claim.expired' && bodyField(e.body, 'worker') === agent) return true;
  return e.correlation_id !== null && e.type !== 'task.request' ? 'task' : false;
}
