// The logstream tools: append, list, wait, ack, artifact put/get, patch submit and the task list
// (palace_tasks). All run outside the global request lock, so a five-minute wait never blocks another agent.

import { z } from 'zod';

import { ACK_STATUSES, ARTIFACT_KIND_MAX, EVENT_STATUSES } from '../../core/types.js';
import { leaseBounds } from '../../config.js';
import { LIMITS, type EventFilterKey } from '../../core/validate.js';
import { listOf, oneOrManyOf } from './list-input.js';
import { defineTool } from './tool.js';

const oneOrMany = (what: string) =>
  oneOrManyOf(z.string(), LIMITS.filterValues)
    .optional()
    .describe(`${what}; a list (max ${LIMITS.filterValues}) means any`);

// The shared filters (EVENT_FILTER_KEYS, which GET /logstream/stream reads too) plus the cursor and page size.
const filterShape = {
  to_agent: oneOrMany('Only events addressed to this agent (broadcasts to "*" always match)'),
  exclude_from_agent: oneOrMany('Skip events written by this agent (use your own name to ignore your broadcasts)'),
  from_agent: oneOrMany('Only events written by this agent'),
  type: oneOrMany('Only these event types, e.g. task.request'),
  status: oneOrManyOf(z.enum(EVENT_STATUSES), LIMITS.filterValues)
    .optional()
    .describe('Only events with this status; a list means any'),
  correlation_id: oneOrMany('Only events of this task'),
  stream: oneOrMany('Only this stream, e.g. project/<name>'),
  room: oneOrMany('Only this room'),
  since_event_id: z
    .string()
    .optional()
    .describe('Resume cursor: only events strictly after this one in append order. Pass the last id you processed'),
  since_created_at: z
    .string()
    .optional()
    .describe('Time window (inclusive, YYYY-MM-DD or ISO 8601 with zone); not a cursor: synced events can arrive late'),
  limit: z.number().int().min(1).max(LIMITS.listMax).optional().describe('At most this many events (default 50, max 500)'),
  preview: z.boolean().optional().describe('Truncate bodies to 200 characters and add body_truncated/body_length'),
} satisfies Record<EventFilterKey | 'since_event_id' | 'limit', z.ZodType>;

const appendShape = {
  type: z.string().describe('task.request, task.reply, patch.ready, status, or your own dotted type'),
  stream: z.string().describe('Broad channel: project/<name> or a shared channel name'),
  room: z.string().describe('Sub-channel: delegation, patches, reviews, status, ...'),
  from_agent: z.string().describe('Your own stable agent name, <machine>-<harness>'),
  to_agent: z.string().optional().describe('The one agent this is for, or "*" for everyone'),
  correlation_id: z.string().optional().describe('One id per task (task_...), on each of its events'),
  status: z.enum(EVENT_STATUSES).optional().describe('Task status'),
  branch: z.string().optional().describe('Git branch the task is on'),
  base_commit: z.string().optional().describe('Git commit the work starts from'),
  body: z.string().optional().describe('Verbatim payload (max 256 KiB); for a task.request, the full work order'),
  metadata: z.record(z.string(), z.unknown()).optional().describe('Small JSON object (max 64 KiB), e.g. {"supersedes": "<event id>"}'),
  artifact_ids: listOf(z.string(), LIMITS.artifactIds)
    .optional()
    .describe(`Ids from palace_artifact_put (at most ${LIMITS.artifactIds})`),
  depends_on: listOf(z.string(), 64)
    .optional()
    .describe('task.request: tasks to apply first'),
  requires: listOf(z.string(), 8)
    .optional()
    .describe('task.request: capabilities needed'),
  attempt: z
    .string()
    .optional()
    .describe('patch.ready: claim attempt (hub fills it in)'),
};

export const eventAppendTool = defineTool({
  name: 'palace_event_append',
  title: 'Append a logstream event',
  description:
    'Append an immutable event to the coordination log: delegate (type task.request, status open, to_agent, correlation_id task_<slug>, body = goal, branch, base commit, definition of done), report blocked/failed work (type task.reply), announce a watch (type status, to_agent "*"), or correct an earlier event (a new event with status superseded). Returns the stored event (id, seq).',
  input: appendShape,
  mutating: true,
  lockFree: true,
  handler: (args, hub) => hub.logstream.append(args),
});

export const eventListTool = defineTool({
  name: 'palace_event_list',
  title: 'List logstream events',
  description:
    'Read events in append order (oldest first; order "desc" for newest first). For an inbox sweep pass to_agent = your name, since_event_id = the last id you processed, and preview true. Returns {events, count, has_more, cursor}; resume later from cursor.',
  input: {
    ...filterShape,
    before_event_id: z.string().optional().describe('Only events before this one in append order'),
    order: z.enum(['asc', 'desc']).optional().describe('asc (default) or desc'),
  },
  mutating: false,
  lockFree: true,
  handler: (args, hub) => hub.logstream.list(args),
});

export const eventWaitTool = defineTool({
  name: 'palace_event_wait',
  title: 'Wait for logstream events',
  description:
    'Long-poll: returns at once if matching events exist after since_event_id, otherwise waits until one is appended or timeout_ms passes (default 60000, max 300000). Always pass since_event_id, or old matches return immediately. On timeout returns {timed_out: true, events: []} (not an error) with a cursor to resume from. Sends progress notifications while waiting. Past the hub cap on concurrent waits it answers http.busy at once: retry after data.retry_after_ms.',
  input: {
    ...filterShape,
    timeout_ms: z.number().min(0).max(LIMITS.waitMaxMs).optional().describe('How long to wait in ms (default 60000, max 300000)'),
  },
  mutating: false,
  lockFree: true,
  handler: async (args, hub, ctx) => {
    // Admitted against PALACE_WAIT_MAX_CONCURRENT; over it, http.busy at once (retryable).
    const leave = hub.stats.waits.enter(hub.config.waitMaxConcurrent);
    try {
      return await hub.logstream.wait(args, {
        signal: ctx.signal,
        progressEveryMs: hub.config.waitProgressMs,
        onProgress: (elapsed, total) => void ctx.progress(elapsed, total, 'waiting for events').catch(() => undefined),
      });
    } finally {
      leave();
    }
  },
});

export const eventAckTool = defineTool({
  name: 'palace_event_ack',
  title: 'Acknowledge an event',
  description:
    'Append an event.ack for an event, addressed back to its writer and carrying its correlation_id; the original event never changes. Status claimed = you take the task (before working; first claim wins: see claim.won; renew: palace_task_renew); applied = you verified the sha256, applied the patch and ran the stated tests; failed = the patch or tests failed (say why in body); blocked = you cannot proceed.',
  input: {
    event_id: z.string().describe('The event being acknowledged'),
    from_agent: z.string().describe('Your own agent name'),
    status: z.enum(ACK_STATUSES).optional().describe('claimed, applied, failed or blocked'),
    body: z.string().optional().describe('Notes, verbatim (test output, reasons)'),
    lease_ms: z.union([z.number(), z.string()]).optional().describe("claimed: lease (ms, or 30m; default 30 min)"),
  },
  mutating: true,
  lockFree: true,
  handler: (args, hub, ctx) =>
    hub.logstream.ack(args, leaseBounds(hub.config), ctx.caller.kind === 'agent' ? { capabilities: ctx.caller.capabilities } : undefined),
});

export const artifactPutTool = defineTool({
  name: 'palace_artifact_put',
  title: 'Store an artifact',
  description:
    'Store exact UTF-8 content (max 4 MiB) byte-for-byte: a patch (unified diff), file, log, json, note, report or any other kind (lowercase words with dashes, e.g. test-log). Returns {id, sha256, size_bytes, warnings?}. A warning on a patch (no final newline, CRLF) means git apply will fail: store the diff again exactly. Reference the id in an event with artifact_ids.',
  input: {
    kind: z
      .string()
      .describe(`patch (a unified diff), file, log, json, note, report, or your own: lowercase words joined by dashes (e.g. test-log), at most ${ARTIFACT_KIND_MAX} characters`),
    created_by: z.string().describe('Your own agent name'),
    content: z.string().describe('The exact content; never reformat a diff'),
    metadata: z.record(z.string(), z.unknown()).optional().describe('Small JSON object'),
  },
  mutating: true,
  lockFree: true,
  handler: (args, hub) => hub.logstream.putArtifact(args),
});

export const artifactGetTool = defineTool({
  name: 'palace_artifact_get',
  title: 'Fetch an artifact',
  description:
    'Fetch an artifact with its content and sha256. Before acting on a patch, check that the sha256 of the content equals the sha256 field. Fetching is free; applying a patch is an explicit decision you state to the user.',
  input: { artifact_id: z.string().describe('The artifact id (art_...)') },
  mutating: false,
  lockFree: true,
  handler: (args, hub) => hub.logstream.getArtifact(args.artifact_id),
});

export const patchSubmitTool = defineTool({
  name: 'palace_patch_submit',
  title: 'Submit a patch for a task',
  description:
    'Store a patch artifact and append its patch.ready event (status ready) in one call. With correlation_id, the stream, recipient (the requester), branch and base commit default to those of the task.request. Returns {artifact, event}; check artifact.warnings.',
  input: {
    content: z.string().describe('The unified diff, exactly as git diff printed it, with its final newline'),
    from_agent: z.string().describe('Your own agent name'),
    correlation_id: z.string().optional().describe('The task this patch answers'),
    to_agent: z.string().optional().describe('Who should apply it (default: the task requester)'),
    stream: z.string().optional().describe('Default: the task request stream'),
    room: z.string().optional().describe('Default: patches'),
    branch: z.string().optional(),
    base_commit: z.string().optional(),
    body: z.string().optional().describe('What changed and how it was tested'),
    metadata: z.record(z.string(), z.unknown()).optional(),
    attempt: z.string().optional().describe('Your claim attempt (the claim ack id); filled in for the live claimer. A patch from anyone else is kept flagged stale_attempt and never counts'),
  },
  mutating: true,
  lockFree: true,
  handler: (args, hub) => hub.logstream.submitPatch(args),
});

export const tasksTool = defineTool({
  name: 'palace_tasks',
  title: 'List tasks',
  description:
    'Tasks (one per correlation_id) with their current state, from the projection the hub keeps in step with the log: oldest first (order "desc" for newest first), filtered by status, open (not done), stream, requester, worker, to_agent, correlation_id (one task, with its history) or last_event_before (quiet since: stalled claims are status "claimed" with last_event_before = now minus 10 minutes). Returns {tasks, count, total, counts: {all, active, done, by_status}, has_more, cursor}; total counts every task matching all filters, counts every task matching the filters other than status, open and last_event_before; both are true totals over the whole log. Pass cursor for the next page.',
  input: {
    status: oneOrManyOf(z.enum(EVENT_STATUSES), LIMITS.filterValues)
      .optional()
      .describe('Only tasks currently in this status; a list means any of them'),
    open: z.boolean().optional().describe('true: only tasks not done (open, claimed, ready); false: only done ones'),
    stream: oneOrMany('Only tasks of this stream'),
    requester: oneOrMany('Only tasks requested by this agent'),
    worker: oneOrMany('Only tasks claimed or worked by this agent'),
    to_agent: oneOrMany('Only tasks whose request was addressed to this agent'),
    correlation_id: oneOrMany('Only this task (its correlation_id)'),
    since_event_id: z.string().optional().describe('Only tasks with an event after this one'),
    last_event_before: z
      .string()
      .optional()
      .describe('Only tasks whose last event is older than this ISO 8601 time with a zone (or YYYY-MM-DD): quiet since then'),
    order: z.enum(['asc', 'desc']).optional().describe('asc (oldest first, default) or desc'),
    limit: z.number().int().min(1).max(LIMITS.listMax).optional().describe('At most this many tasks (default 50, max 500)'),
    cursor: z.string().optional().describe('The cursor of the previous page'),
  },
  mutating: false,
  lockFree: true,
  handler: (args, hub) => hub.logstream.taskPage(args),
});

export const logstreamTools = [
  eventAppendTool,
  eventListTool,
  eventWaitTool,
  eventAckTool,
  artifactPutTool,
  artifactGetTool,
  patchSubmitTool,
  tasksTool,
];
