// `palace hook inbox --agent X`: what is new for an agent since its last look, as additional context
// for Claude Code / Codex SessionStart and UserPromptSubmit hooks. Reads through the live hub's
// palace_event_list, or with no hub the log file directly (read-only, see openDirectInboxLog), prints
// nothing when nothing is new, and keeps a cursor per agent so an item is shown once.

import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { PalaceConfig } from '../hub/src/config.js';
import { LOGSTREAM_FILE } from '../hub/src/core/palace-files.js';
import { computeInbox, type InboxLog, type InboxResult } from '../hub/src/core/inbox.js';
import type { ArgsOf, ResultOf } from '../hub/src/mcp/contract.js';
import { eventQuery } from '../hub/src/core/validate.js';
import { defaultStatePath, readState, writeState } from './watch-state.js';

export { INBOX_TYPES, type InboxLog, type InboxResult } from '../hub/src/core/inbox.js';

/** The inbox over palace_event_list (runTool: the live hub, or the MCP server in-process). */
export function toolInboxLog(list: (args: ArgsOf<'palace_event_list'>) => Promise<ResultOf<'palace_event_list'>>): InboxLog {
  // The inbox's query (core/inbox.ts) is an event filter: the names palace_event_list takes.
  return (query) => list(query as ArgsOf<'palace_event_list'>);
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

/** The inbox state file: `~/.palace/inbox/<agent>.json` (same format as the watch cursors). */
export function inboxStatePath(home: string, agent: string): string {
  return defaultStatePath(home, agent, 'inbox');
}

/**
 * Collects what is new for `agent` after its cursor (core/inbox.ts) and moves the cursor past what
 * was examined. A first run (no cursor) reports the agent's open tasks and starts the cursor at the tip.
 */
export async function collectInbox(log: InboxLog, agent: string, statePath: string): Promise<InboxResult> {
  const state = readState(statePath);
  const cursor = state.kind === 'absent' || state.kind === 'corrupt' ? undefined : state.kind === 'ok' ? state.cursor : null;
  const result = await computeInbox(log, agent, cursor);
  writeState(statePath, result.cursor, agent);
  return result;
}

/** Whether the palace has a log yet (a hook never creates a palace). */
export function hasLog(config: Readonly<PalaceConfig>, file: string): boolean {
  return existsSync(join(config.palacePath, file));
}

/** Claude Code's (and Codex's) hook output for additional context. */
export function hookContextJson(event: string, text: string): string {
  return JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: text } });
}
