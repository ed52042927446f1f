// `palace logstream append|list|wait|ack|renew|release|ready|watch|task|tasks`: the coordination log from the shell.
// Every command is a tool call (runTool: the live hub, or the MCP server in-process); task and tasks read
// palace_tasks, watch long-polls palace_event_wait (cli/watch.ts).

import type { Command } from 'commander';

import { stalledFilter } from '../../hub/src/core/task-state.js';
import type { EventPage, LogEvent } from '../../hub/src/core/types.js';
import type { TaskView } from '../../hub/src/logstream/coordination.js';
import type { TaskPage } from '../../hub/src/logstream/task-projection.js';

import { LIMITS } from '../../hub/src/core/validate.js';
import { HubError, invalid } from '../../hub/src/errors.js';
import { action, collect, writerName, type CommandContext } from '../context.js';
import { eventLine, eventsText, taskLine, taskText, workOrderLines } from '../format.js';
import { EXIT } from '../output.js';
import { jsonObject, readText, wholeNumberArg } from '../read-input.js';
import { flag } from '../tool-args.js';
import { openToolSession, runTool, type ToolSession } from '../tool-runner.js';
import { runWatch } from '../watch.js';

type Opts = Record<string, unknown>;

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The read filters shared by list and wait; repeated flags mean "any of". */
/** The repeatable filters every reader (list, wait, watch) shares; a repeated flag means "any of". */
function addRepeatableFilters(cmd: Command): Command {
  return cmd
    .option('--to-agent <agent>', 'events addressed to this agent (or to * broadcasts); repeatable', collect)
    .option('--from-agent <agent>', 'events written by this agent; repeatable', collect)
    .option('--exclude-from-agent <agent>', 'skip events written by this agent; repeatable', collect)
    .option('--type <type>', 'event type; repeatable', collect)
    .option('--status <status>', 'event status; repeatable', collect)
    .option('--correlation-id <id>', 'correlation id; repeatable', collect)
    .option('--stream <stream>', 'stream; repeatable', collect)
    .option('--room <room>', 'room; repeatable', collect);
}

function addFilters(cmd: Command): Command {
  return addRepeatableFilters(cmd)
    .option('--since-event-id <id>', 'only events after this one in append order (the resume cursor)')
    .option('--since-created-at <time>', 'only events created at or after this time (a window, not a cursor)')
    .option('--limit <n>', 'at most this many events (1-500, default 50)')
    .option('--preview', 'truncate bodies to 200 characters')
    .option('--json', 'machine-readable output');
}

/** A whole-number flag as a number for the tool's schema; anything else is passed on for it to refuse. */
function filtersOf(o: Opts): Record<string, unknown> {
  return {
    to_agent: o.toAgent,
    from_agent: o.fromAgent,
    exclude_from_agent: o.excludeFromAgent,
    type: o.type,
    status: o.status,
    correlation_id: o.correlationId,
    stream: o.stream,
    room: o.room,
    since_event_id: o.sinceEventId,
    since_created_at: o.sinceCreatedAt,
    limit: wholeNumberArg(o.limit),
    preview: Boolean(o.preview),
  };
}

function bodyOf(o: Opts): string | undefined {
  if (o.body !== undefined && o.bodyFile !== undefined)
    throw invalid('--body', 'pass --body or --body-file, not both');
  return o.bodyFile !== undefined ? readText(String(o.bodyFile), '--body-file') : str(o.body);
}

/** Every task matching `filters`, oldest first: palace_tasks page by page (the hub's projection). */
async function everyTask(ctx: CommandContext, filters: Record<string, unknown>): Promise<TaskView[]> {
  const session = await openToolSession(ctx.config, ['palace_tasks']);
  try {
    const tasks: TaskView[] = [];
    for (let cursor: string | null = null; ; ) {
      const page: TaskPage = await session.call('palace_tasks', { ...filters, limit: LIMITS.listMax, ...(cursor ? { cursor } : {}) });
      tasks.push(...(page.tasks as TaskView[]));
      if (!page.has_more || page.cursor === null) return tasks;
      cursor = page.cursor;
    }
  } finally {
    await session.close();
  }
}

/** One task's state and history: palace_tasks filtered to its correlation id. */
async function oneTask(session: ToolSession, correlationId: string): Promise<TaskView> {
  const { tasks } = await session.call('palace_tasks', { correlation_id: correlationId, limit: 1 });
  const task = tasks[0] as TaskView | undefined;
  if (!task) throw new HubError('log.event_not_found', `no events with correlation_id '${correlationId}'`, { field: 'correlation_id' });
  return task;
}

/** A task with its request event (goal and definition of done in the body, branch, base commit). */
export type WorkOrder = TaskView & { request: LogEvent | null };

/** The tasks with their request events, read in pages of palace_event_list (one call per 500 tasks). */
async function withRequests(session: ToolSession, tasks: readonly TaskView[]): Promise<WorkOrder[]> {
  const wanted = new Map<string, string>(tasks.flatMap((t) => (t.request_event_id ? [[t.correlation_id, t.request_event_id] as const] : [])));
  const correlationIds = [...wanted.keys()];
  const byId = new Map<string, LogEvent>();
  // A filter takes at most LIMITS.filterValues values: one call per that many tasks (a page each).
  for (let i = 0; i < correlationIds.length; i += LIMITS.filterValues) {
    let cursor: string | null = null;
    do {
      const page: EventPage = await session.call('palace_event_list', {
        correlation_id: correlationIds.slice(i, i + LIMITS.filterValues),
        type: ['task.request'],
        limit: LIMITS.listMax,
        ...(cursor ? { since_event_id: cursor } : {}),
      });
      for (const e of page.events) if (e.correlation_id && wanted.get(e.correlation_id) === e.id) byId.set(e.id, e);
      cursor = page.has_more ? page.cursor : null;
    } while (cursor);
  }
  return tasks.map((t) => ({ ...t, request: (t.request_event_id && byId.get(t.request_event_id)) || null }));
}

export function registerLogstream(program: Command): void {
  const log = program.command('logstream').description('append-only coordination log: events between agents');

  log
    .command('append')
    .description('append an event')
    .requiredOption('--type <type>', 'event type, e.g. task.request, task.reply, patch.ready, status')
    .requiredOption('--stream <stream>', 'channel, e.g. project/<name>')
    .requiredOption('--room <room>', 'sub-channel, e.g. delegation, patches, reviews, status')
    .option('--from-agent <agent>', 'your agent name, <machine>-<harness> (default: PALACE_AGENT_NAME)')
    .option('--to-agent <agent>', 'recipient agent, or * for broadcast')
    .option('--correlation-id <id>', 'ties a task request to its replies (convention: task_...)')
    .option('--status <status>', 'open, claimed, ready, applied, blocked, failed, superseded')
    .option('--branch <branch>', 'git branch for task events')
    .option('--base-commit <sha>', 'base commit for task events')
    .option('--artifact-id <id>', 'attach an artifact; repeatable', collect)
    .option('--depends-on <correlation_id>', 'task.request only: a task that must be applied first; repeatable or comma-separated', collect)
    .option('--body <text>', 'verbatim payload')
    .option('--body-file <path>', 'read the body from a file, or - for stdin (byte-exact)')
    .option('--metadata <json>', 'a JSON object stored with the event')
    .option('--json', 'print the event as JSON (includes its id)')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const event = await runTool(ctx.config, 'palace_event_append', {
            type: flag(o.type),
            stream: flag(o.stream),
            room: flag(o.room),
            from_agent: writerName(ctx),
            to_agent: flag(o.toAgent),
            correlation_id: flag(o.correlationId),
            status: flag(o.status),
            branch: flag(o.branch),
            base_commit: flag(o.baseCommit),
            artifact_ids: flag(o.artifactId),
            depends_on: (o.dependsOn as string[] | undefined)?.flatMap((d) => d.split(',')),
            body: bodyOf(o),
            metadata: jsonObject(str(o.metadata), '--metadata'),
        });
        ctx.out.result(event, () => `Appended:\n${eventLine(event)}`);
      }),
    );

  addFilters(log.command('list').description('read events in append order'))
    .option('--before-event-id <id>', 'only events before this one')
    .option('--order <order>', 'asc (default) or desc (newest first)')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const page = await runTool(ctx.config, 'palace_event_list', {
          ...filtersOf(o),
          before_event_id: flag(o.beforeEventId),
          order: flag(o.order),
        });
        ctx.out.result(page, () => eventsText(page.events) + (page.has_more ? `\n(more: --since-event-id ${page.cursor})` : ''));
      }),
    );

  addFilters(log.command('wait').description('long-poll until a matching event exists (exit 2 on timeout)'))
    .option('--timeout-ms <ms>', 'give up after this long (default 60000, max 300000)')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const result = await runTool(ctx.config, 'palace_event_wait', { ...filtersOf(o), timeout_ms: flag(wholeNumberArg(o.timeoutMs)) });
        ctx.out.result(result, () => (result.timed_out ? 'Timed out; no matching events.' : eventsText(result.events)));
        return result.timed_out ? EXIT.timeout : EXIT.ok;
      }),
    );

  log
    .command('ack <event_id>')
    .description('acknowledge an event (appends event.ack; the event itself never changes)')
    .option('--from-agent <agent>', 'your agent name (default: PALACE_AGENT_NAME)')
    .option('--status <status>', 'claimed, applied, failed or blocked')
    .option('--body <text>', 'notes, verbatim')
    .option('--body-file <path>', 'read the notes from a file, or - for stdin')
    .option('--lease <duration>', 'claimed only: the claim lease (ms, or 90s, 30m, 2h; default 30m)')
    .option('--json', 'print the ack event as JSON')
    .action(
      action(async (ctx, eventId: string) => {
        const o = ctx.opts;
        const ack = await runTool(ctx.config, 'palace_event_ack', {
          event_id: eventId,
          from_agent: writerName(ctx),
          status: flag(o.status),
          body: bodyOf(o),
          lease_ms: flag(o.lease),
        });
        ctx.out.result(ack, () => `Acknowledged ${eventId}:\n${eventLine(ack)}${ack.claim ? `\n${ack.claim.message}` : ''}`);
        // A lost claim exits 1, so `ack --status claimed && work` never duplicates someone's work.
        return ack.claim && !ack.claim.won ? EXIT.error : EXIT.ok;
      }),
    );

  log
    .command('renew <event>')
    .description("renew the lease of a task you claimed (the task's correlation id or any of its events)")
    .option('--from-agent <agent>', 'your agent name, the claimer (default: PALACE_AGENT_NAME)')
    .option('--lease <duration>', 'new lease from now (ms, or 90s, 30m, 2h; default 30m)')
    .option('--json', 'print the renewal event as JSON')
    .action(
      action(async (ctx, ref: string) => {
        const o = ctx.opts;
        const event = await runTool(ctx.config, 'palace_task_renew', { event_id: ref, from_agent: writerName(ctx), lease_ms: flag(o.lease) });
        ctx.out.result(event, () => `Renewed ${event.correlation_id ?? ref}: lease until ${event.lease_expires_at}`);
      }),
    );

  log
    .command('release <event>')
    .description('end the current claim on a task (appends claim.expired; the task is open again)')
    .option('--from-agent <agent>', 'your agent name (default: PALACE_AGENT_NAME)')
    .option('--reason <text>', 'why the claim ends')
    .option('--json', 'print the claim.expired event as JSON')
    .action(
      action(async (ctx, ref: string) => {
        const o = ctx.opts;
        const event = await runTool(ctx.config, 'palace_task_release', { event_id: ref, from_agent: writerName(ctx), reason: flag(o.reason) });
        ctx.out.result(event, () => `Released the claim on ${event.correlation_id ?? ref}:\n${eventLine(event)}`);
      }),
    );

  log
    .command('ready')
    .description('open tasks for an agent (or *) whose dependencies are all applied, oldest first')
    .option('--agent <agent>', 'your agent name (default: PALACE_AGENT_NAME, or the agent PALACE_AGENT_TOKEN proves)')
    .option('--stream <stream>', 'only this stream')
    .option('--limit <n>', 'at most this many, 1-500 (default: all); 1 gives the head of the queue')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const agent = writerName(ctx, '--agent');
        const limit = ctx.opts.limit === undefined ? {} : { limit: Number(ctx.opts.limit) };
        const session = await openToolSession(ctx.config, ['palace_task_ready', 'palace_event_list']);
        let tasks: WorkOrder[];
        try {
          const ready = await session.call('palace_task_ready', { agent, stream: flag(ctx.opts.stream), ...limit });
          tasks = await withRequests(session, ready.tasks);
        } finally {
          await session.close();
        }
        ctx.out.result({ tasks, count: tasks.length }, () =>
          tasks.length === 0
            ? 'No task is ready.'
            : [`${tasks.length} task(s) ready, oldest first:`, ...tasks.flatMap((t) => [taskLine(t), ...workOrderLines(t, agent)])].join('\n'),
        );
      }),
    );

  addRepeatableFilters(
    log
      .command('watch')
      .description('wait in the background for events addressed to an agent (exit 0 on a match, 2 when idle)')
      .option('--agent <agent>', 'shorthand for --to-agent <agent> --exclude-from-agent <agent>'),
  )
    .option('--since-event-id <id>', 'start after this event (overrides the state file)')
    .option('--state-file <path>', 'keep the cursor here across runs ("" disables; default with --agent: ~/.palace/watch/<agent>.json)')
    .option('--from-start', 'replay the whole log from the start, every time (ignores the stored cursor, then overwrites it)')
    .option('--follow', 'keep running after the first match')
    .option('--idle-exit-ms <ms>', 'exit (code 2 if nothing matched) after this long without a match; 0 = never', '0')
    .option('--poll-timeout-ms <ms>', 'length of each long-poll', '300000')
    .option('--limit <n>', 'at most this many events per batch', '50')
    .option('--json', 'JSON output (NDJSON, one batch per line, with --follow)')
    .addHelpText(
      'after',
      [
        '',
        'State file: with --agent, watch keeps its cursor (the last event it printed) in',
        '~/.palace/watch/<agent>.json ($PALACE_HOME/watch/<agent>.json when PALACE_HOME is set), so the',
        'next run resumes after it.',
        'A first run with no state file starts at the latest event. To reset: delete the file,',
        'or pass --from-start (replays from the start every time and rewrites the file).',
        'Pick another file with --state-file <path>; --state-file "" keeps no state.',
      ].join('\n'),
    )
    .action(action(async (ctx) => runWatch(ctx)));

  log
    .command('task <correlation_id>')
    .description("a task's current state and the history of its transitions")
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, correlationId: string) => {
        const session = await openToolSession(ctx.config, ['palace_tasks', 'palace_event_list']);
        let task: WorkOrder;
        try {
          [task] = (await withRequests(session, [await oneTask(session, correlationId)])) as [WorkOrder];
        } finally {
          await session.close();
        }
        ctx.out.result(task, () => taskText(task));
      }),
    );

  log
    .command('tasks')
    .description('every task (correlation id) with its current state')
    .option('--open', 'only tasks that are not done')
    .option('--stalled', 'only claimed tasks with no event for 10 minutes (as the dashboard marks them)')
    .option('--stream <stream>', 'only this stream; repeatable', collect)
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const stalled = ctx.opts.stalled ? stalledFilter(Date.now()) : {};
        const tasks = await everyTask(ctx, { stream: ctx.opts.stream, ...(ctx.opts.open ? { open: true } : {}), ...stalled });
        ctx.out.result({ tasks, count: tasks.length }, () =>
          tasks.length === 0 ? 'No tasks.' : [`${tasks.length} task(s):`, ...tasks.map(taskLine)].join('\n'),
        );
      }),
    );
}
