// `palace hook inbox --agent X`: what is new for an agent since its last look, as additional context
// for Claude Code / Codex SessionStart and UserPromptSubmit hooks. Reads the palace's log file
// directly (no hub needed), prints nothing when nothing is new, and keeps a cursor per agent so an
// item is shown once. It never fails or holds up the prompt: any error is logged and swallowed.

import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { PalaceConfig } from '../hub/src/config.js';
import type { LogEvent } from '../hub/src/core/types.js';
import type { Logstream } from '../hub/src/logstream/logstream.js';
import { defaultStatePath, readState, writeState } from './watch-state.js';

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

function oneLine(text: string, max: number): string {
  const line =
    text
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
export function collectInbox(ls: Logstream, agent: string, statePath: string): InboxResult {
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
    cursor = ls.tipId();
    // Only requests up to the tip the cursor starts at: a later one is reported by the next run.
    const tipSeq = cursor ? (ls.store.getEvent(cursor)?.seq ?? 0) : 0;
    const requests = ls.list({
      type: 'task.request',
      to_agent: agent,
      exclude_from_agent: agent,
      order: 'desc',
      limit: 50,
    }).events;
    for (const request of requests.reverse()) {
      if (request.seq > tipSeq) continue;
      const cid = request.correlation_id;
      if (!cid) continue;
      const task = ls.task(cid);
      if (task.status === 'open' || (task.status === 'claimed' && task.worker === agent))
        push(itemLine(request, agent, task.status));
    }
  } else {
    cursor = state.kind === 'ok' && ls.store.getEvent(state.cursor) ? state.cursor : null;
    const mine = new Map<string, boolean>();
    const isMine = (cid: string): boolean => {
      let v = mine.get(cid);
      if (v === undefined) {
        const t = ls.task(cid);
        v = t.requester === agent || t.worker === agent;
        mine.set(cid, v);
      }
      return v;
    };
    for (let scanned = 0; scanned < MAX_SCANNED; scanned += PAGE) {
      const page = ls.list({
        type: [...INBOX_TYPES],
        exclude_from_agent: agent,
        since_event_id: cursor ?? undefined,
        limit: PAGE,
      });
      for (const e of page.events) {
        const addressed = e.to_agent === agent || (e.to_agent === '*' && e.type === 'task.request');
        const worker = e.type === 'claim.expired' ? bodyField(e.body, 'worker') : undefined;
        if (
          addressed ||
          worker === agent ||
          (e.correlation_id !== null && e.type !== 'task.request' && isMine(e.correlation_id))
        )
          push(itemLine(e, agent));
      }
      cursor = page.events.at(-1)?.id ?? cursor;
      if (!page.has_more) break;
    }
  }
  if (items > lines.length)
    lines.push(`- … and ${items - lines.length} more: palace logstream list --to-agent ${agent} --json`);
  const text =
    items === 0
      ? ''
      : [
          `palace inbox for ${agent} (${items} new${firstLook ? ', first look: your open tasks' : ''}):`,
          ...lines,
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
