// `palace logstream watch`: a background watcher whose whole state is the id of the last event it
// processed, reading through one tool road (the live hub, or the MCP server in-process). Exit 0 on a
// match, 2 when --idle-exit-ms passes with nothing matched, 130 on Ctrl-C.

import type { WaitResult } from '../hub/src/core/types.js';
import { HubError, invalid } from '../hub/src/errors.js';
import { LIMITS } from '../hub/src/core/validate.js';
import type { CommandContext } from './context.js';
import { eventsText } from './format.js';
import { EXIT } from './output.js';
import { wholeNumberArg } from './read-input.js';
import { flag } from './tool-args.js';
import { openToolSession, type ToolSession } from './tool-runner.js';
import { defaultStatePath, readState, writeState } from './watch-state.js';

function nonNegative(flag: string, value: unknown, allowZero: boolean): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0) || !Number.isInteger(n))
    throw invalid(flag, `${flag} must be ${allowZero ? 'zero or ' : ''}a positive whole number of milliseconds; got '${String(value)}'`);
  return n;
}

function list(value: unknown): string[] {
  return Array.isArray(value) ? (value as string[]) : [];
}

type Filters = Record<string, unknown>;

const WATCH_TOOLS = ['palace_event_list', 'palace_event_wait'];
const REOPEN_PAUSE_MS = 250;
const REOPEN_TRIES = 20;
/** The hub's retry_after_ms on http.busy. */
const BUSY_PAUSE_MS = 1_000;

/** Waits `ms`, or less when `signal` aborts (Ctrl-C). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** A hub that is shutting down (or, right after one did, not answering yet): worth a new road. */
function roadGone(err: unknown, reopened: number): boolean {
  if (!(err instanceof HubError) || reopened >= REOPEN_TRIES) return false;
  return err.code === 'hub.shutting_down' || (reopened > 0 && err.code === 'hub.unreachable');
}

/** Whether `cursor` is an event of this log (palace_event_list refuses an unknown since_event_id). */
async function exists(road: ToolSession, filters: Filters, cursor: string): Promise<boolean> {
  try {
    await road.call('palace_event_list', { ...filters, since_event_id: cursor, limit: 1 });
    return true;
  } catch (err) {
    const e = err as HubError;
    if (e instanceof HubError && e.field === 'since_event_id' && (e.code === 'log.unknown_cursor' || e.code === 'input.invalid')) return false;
    throw err;
  }
}

/**
 * Where to start: explicit cursor > --from-start (the beginning, every run: the stored cursor is
 * ignored and then overwritten) > stored cursor > the tip (first run).
 */
async function startCursor(road: ToolSession, filters: Filters, ctx: CommandContext, statePath: string | undefined): Promise<{ cursor: string | null; fresh: boolean }> {
  const o = ctx.opts;
  if (typeof o.sinceEventId === 'string' && o.fromStart)
    throw invalid('--from-start', '--from-start and --since-event-id both say where to start; give one');
  if (o.fromStart) return { cursor: null, fresh: true };
  if (typeof o.sinceEventId === 'string') {
    if (!(await exists(road, filters, o.sinceEventId)))
      throw invalid('--since-event-id', `--since-event-id '${o.sinceEventId}' is not an event in this log. Nothing was written to the state file.`);
    return { cursor: o.sinceEventId, fresh: false };
  }
  const state = statePath ? readState(statePath) : ({ kind: 'absent' } as const);
  switch (state.kind) {
    case 'ok':
      if (await exists(road, filters, state.cursor)) return { cursor: state.cursor, fresh: false };
      ctx.out.note(`Stored cursor ${state.cursor} no longer exists in this log; replaying from the start rather than skipping events.`);
      return { cursor: null, fresh: false };
    case 'empty':
      return { cursor: null, fresh: false };
    case 'corrupt':
      ctx.out.note(`State file ${statePath} is unreadable (${state.reason}); replaying from the start rather than skipping events.`);
      return { cursor: null, fresh: false };
    case 'absent': {
      const latest = await road.call('palace_event_list', { order: 'desc', limit: 1 });
      const tip = latest.events[0]?.id ?? null;
      if (tip)
        ctx.out.note(`Starting at the latest event (${tip}); earlier events are not replayed. Use --from-start to replay the log.`);
      return { cursor: tip, fresh: true };
    }
  }
}

/** A whole-number flag as a number for the tool's schema; anything else is passed on for it to refuse. */
/**
 * Watches through the CLI's one road: palace_event_wait on the live hub (which wakes the moment a
 * matching event is appended) or on the in-process server (woken by the log's change poll).
 */
export async function runWatch(ctx: CommandContext): Promise<number> {
  let road = await openToolSession(ctx.config, WATCH_TOOLS);
  try {
    return await watch(ctx, road, async () => {
      // The hub went away mid-watch: take the road again (the next hub, or in-process) and resume.
      await road.close();
      road = await openToolSession(ctx.config, WATCH_TOOLS);
      return road;
    });
  } finally {
    await road.close();
  }
}

async function watch(ctx: CommandContext, first: ToolSession, reopen: () => Promise<ToolSession>): Promise<number> {
  let road = first;
  const o = ctx.opts;
  const idleMs = nonNegative('--idle-exit-ms', o.idleExitMs, true);
  const pollMs = Math.min(nonNegative('--poll-timeout-ms', o.pollTimeoutMs, false), LIMITS.waitMaxMs);
  const agent = typeof o.agent === 'string' ? o.agent : undefined;
  const filters = {
    to_agent: [...list(o.toAgent), ...(agent ? [agent] : [])],
    exclude_from_agent: [...list(o.excludeFromAgent), ...(agent ? [agent] : [])],
    from_agent: flag(o.fromAgent),
    type: flag(o.type),
    status: flag(o.status),
    correlation_id: flag(o.correlationId),
    stream: flag(o.stream),
    room: flag(o.room),
  };
  const limit = flag(wholeNumberArg(o.limit));
  await road.call('palace_event_list', { ...filters, limit }); // validate every filter before touching the state file
  const statePath =
    typeof o.stateFile === 'string' ? (o.stateFile === '' ? undefined : o.stateFile) : agent ? defaultStatePath(ctx.config.home, agent) : undefined;
  const start = await startCursor(road, filters, ctx, statePath);
  let cursor = start.cursor;
  if (statePath && start.fresh) writeState(statePath, cursor, agent); // the first checkpoint is mandatory

  const abort = new AbortController();
  let interrupted = false;
  const onSigint = (): void => {
    interrupted = true;
    abort.abort();
  };
  process.once('SIGINT', onSigint);
  process.once('SIGTERM', onSigint);
  // Announce only once Ctrl-C is handled, so a Ctrl-C right after the message still stops cleanly.
  if (!ctx.out.json) ctx.out.note(`Watching ${agent ?? 'the log'} from ${cursor ?? 'the start'}; Ctrl-C to stop.`);
  let matched = false;
  let reopened = 0;
  let deadline = idleMs > 0 ? Date.now() + idleMs : Infinity;
  try {
    for (;;) {
      const remaining = deadline - Date.now();
      const timeout = Math.max(0, Math.min(pollMs, remaining));
      let result: WaitResult;
      try {
        const args = { ...filters, limit, ...(cursor ? { since_event_id: cursor } : {}), timeout_ms: timeout };
        result = await road.call('palace_event_wait', args, { signal: abort.signal });
      } catch (err) {
        const busy = err instanceof HubError && err.code === 'http.busy';
        if (interrupted || (busy && Date.now() >= deadline)) result = { events: [], count: 0, has_more: false, cursor, timed_out: true };
        else if (busy) {
          // The hub is at its cap of concurrent waits (PALACE_WAIT_MAX_CONCURRENT): retry as it asks.
          await pause(BUSY_PAUSE_MS, abort.signal);
          continue;
        } else if (roadGone(err, reopened)) {
          // The hub stopped mid-watch: take the road again (the next hub, or in-process) from the same
          // cursor (nothing after it was printed), a few times while the old hub finishes closing.
          reopened++;
          await pause(REOPEN_PAUSE_MS, abort.signal);
          road = await reopen();
          continue;
        } else throw err;
      }
      reopened = 0;
      if (interrupted) {
        ctx.out.note('Stopped.');
        return EXIT.interrupted;
      }
      if (result.events.length > 0) {
        cursor = result.events.at(-1)?.id ?? cursor;
        if (o.follow && ctx.out.json) ctx.out.line(JSON.stringify({ ...result, cursor }));
        else ctx.out.result({ ...result, cursor }, () => eventsText(result.events));
        if (statePath) writeState(statePath, cursor, agent); // checkpoint after printing
        matched = true;
        if (!o.follow) return EXIT.ok;
        deadline = idleMs > 0 ? Date.now() + idleMs : Infinity;
        continue;
      }
      if (result.cursor && result.cursor !== cursor) {
        cursor = result.cursor; // nothing matched up to here: advance past examined events
        if (statePath) writeState(statePath, cursor, agent);
      }
      if (Date.now() >= deadline) {
        const timedOut = { events: [], count: 0, cursor, timed_out: true };
        if (o.follow && ctx.out.json) ctx.out.line(JSON.stringify(timedOut));
        else ctx.out.result(timedOut, () => 'Idle timeout; no matching events.');
        return matched ? EXIT.ok : EXIT.timeout;
      }
    }
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
  }
}
