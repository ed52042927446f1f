// `palace logstream watch`: a background watcher whose whole state is the id of the last event it
// processed. Exit 0 on a match, 2 when --idle-exit-ms passes with nothing matched, 130 on Ctrl-C.

import { invalid } from '../hub/src/errors.js';
import type { Logstream } from '../hub/src/logstream/logstream.js';
import { LIMITS } from '../hub/src/core/validate.js';
import type { CommandContext } from './context.js';
import { eventsText } from './format.js';
import { EXIT } from './output.js';
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

/** Where to start: explicit cursor > stored cursor > the tip (first run) > the beginning. */
function startCursor(ls: Logstream, ctx: CommandContext, statePath: string | undefined): { cursor: string | null; fresh: boolean } {
  const o = ctx.opts;
  if (typeof o.sinceEventId === 'string') {
    if (!ls.store.getEvent(o.sinceEventId))
      throw invalid('--since-event-id', `--since-event-id '${o.sinceEventId}' is not an event in this log. Nothing was written to the state file.`);
    return { cursor: o.sinceEventId, fresh: false };
  }
  const state = statePath ? readState(statePath) : ({ kind: 'absent' } as const);
  switch (state.kind) {
    case 'ok':
      if (ls.store.getEvent(state.cursor)) return { cursor: state.cursor, fresh: false };
      ctx.out.note(`Stored cursor ${state.cursor} no longer exists in this log; replaying from the start rather than skipping events.`);
      return { cursor: null, fresh: false };
    case 'empty':
      return { cursor: null, fresh: false };
    case 'corrupt':
      ctx.out.note(`State file ${statePath} is unreadable (${state.reason}); replaying from the start rather than skipping events.`);
      return { cursor: null, fresh: false };
    case 'absent': {
      if (o.fromStart) return { cursor: null, fresh: true };
      const tip = ls.tipId();
      if (tip)
        ctx.out.note(`Starting at the latest event (${tip}); earlier events are not replayed. Use --from-start to replay the log.`);
      return { cursor: tip, fresh: true };
    }
  }
}

export async function runWatch(ls: Logstream, ctx: CommandContext): Promise<number> {
  const o = ctx.opts;
  const idleMs = nonNegative('--idle-exit-ms', o.idleExitMs, true);
  const pollMs = Math.min(nonNegative('--poll-timeout-ms', o.pollTimeoutMs, false), LIMITS.waitMaxMs);
  const agent = typeof o.agent === 'string' ? o.agent : undefined;
  const filters = {
    to_agent: [...list(o.toAgent), ...(agent ? [agent] : [])],
    exclude_from_agent: [...list(o.excludeFromAgent), ...(agent ? [agent] : [])],
    from_agent: o.fromAgent,
    type: o.type,
    status: o.status,
    correlation_id: o.correlationId,
    stream: o.stream,
    room: o.room,
    limit: o.limit,
  };
  ls.list({ ...filters, limit: 1 }); // validate every filter before touching the state file
  const statePath =
    typeof o.stateFile === 'string' ? (o.stateFile === '' ? undefined : o.stateFile) : agent ? defaultStatePath(ctx.config.home, agent) : undefined;
  const start = startCursor(ls, ctx, statePath);
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
  let deadline = idleMs > 0 ? Date.now() + idleMs : Infinity;
  try {
    for (;;) {
      const remaining = deadline - Date.now();
      const timeout = Math.max(0, Math.min(pollMs, remaining));
      const result = await ls.wait({ ...filters, since_event_id: cursor, timeout_ms: timeout }, { signal: abort.signal });
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
