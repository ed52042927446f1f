// The MCP Tasks extension (io.modelcontextprotocol/tasks, 2026-07-28) over palace's own tasks (issue
// 33; the mapping is in docs/mcp.md and docs/decisions.md). A 2026 client that declares the extension
// and delegates (palace_event_append of a task.request, directly or through palace_call) gets an MCP
// Task whose id is the correlation id; tasks/get, tasks/update and tasks/cancel are answered from the
// log, and the two that write run through the tools (same identity binding, read-only and lease rules).

import { HubError, type ErrorCode } from '../../errors.js';
import type { Caller } from '../../identity/identity.js';
import type { TaskView } from '../../logstream/coordination.js';
import type { HubServices } from '../../services.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
/** How often a client should poll tasks/get (subscriptions/listen with taskIds pushes instead). */
const POLL_INTERVAL_MS = 1_000;
/** The one input request of a task waiting for its requester: review the patch and report the outcome. */
const REVIEW = 'review';
/** Marks the superseding event tasks/cancel appends (a task superseded otherwise is `failed`). */
export const CANCEL_MARK = 'mcp_task_cancel';

type Json = Record<string, unknown>;
type Run = (request: { jsonrpc: '2.0'; id: string; method: 'tools/call'; params: Json }) => Promise<{ result?: unknown; error?: unknown } | undefined>;

/** Whether a 2026 request's `_meta` declares the Tasks extension among its client capabilities. */
export function declaresTasks(meta: Json): boolean {
  const caps = meta[CLIENT_CAPABILITIES];
  const ext = caps && typeof caps === 'object' ? (caps as { extensions?: unknown }).extensions : undefined;
  const own = ext && typeof ext === 'object' ? (ext as Json)[TASKS_EXTENSION] : undefined;
  return own !== null && typeof own === 'object' && !Array.isArray(own);
}

function statusMessage(task: TaskView): string {
  switch (task.status) {
    case 'open':
      return task.blocked_by.length > 0 ? `open: waits for ${task.blocked_by.join(', ')}` : `open: waiting for ${task.to_agent === '*' || !task.to_agent ? 'a worker' : task.to_agent} to claim it`;
    case 'claimed':
      return `claimed by ${task.worker ?? 'a worker'}`;
    case 'ready':
      return `patch ready from ${task.worker ?? 'the worker'}: ${task.requester ?? 'the requester'} reviews and applies it`;
    default: {
      const last = task.history.at(-1);
      return `${task.status ?? 'unknown'}${last ? ` by ${last.by}` : ''}`;
    }
  }
}

/** The event that made the task's current status (the last transition), with its body. */
function lastMove(hub: HubServices, task: TaskView): { id: string; body: string; metadata: Json } | undefined {
  const move = task.history.at(-1);
  if (!move) return undefined;
  const event = hub.logstream.eventsOf(task.correlation_id).find((e) => e.id === move.event_id);
  return event ? { id: event.id, body: event.body, metadata: event.metadata } : undefined;
}

/**
 * A palace task as an MCP Task (DetailedTask): open, claimed -> working; ready -> input_required (the
 * requester reviews the patch: one elicitation request, answered with tasks/update); applied ->
 * completed (the result is the task view); failed, blocked -> failed; superseded -> cancelled.
 */
export function mcpTaskOf(task: TaskView, hub?: HubServices): Json {
  const base: Json = {
    taskId: task.correlation_id,
    statusMessage: statusMessage(task),
    createdAt: task.created_at ?? new Date(0).toISOString(),
    lastUpdatedAt: task.last_event_at ?? task.created_at ?? new Date(0).toISOString(),
    ttlMs: null,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
  switch (task.status) {
    case 'ready':
      return {
        ...base,
        status: 'input_required',
        inputRequests: {
          [REVIEW]: {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message: `${task.worker ?? 'The worker'} submitted a patch for ${task.correlation_id}. Apply it in your worktree (palace patch apply ${task.correlation_id}) and run its tests, then report the outcome.`,
              requestedSchema: {
                type: 'object',
                properties: {
                  outcome: { type: 'string', enum: ['applied', 'failed'], description: 'applied: the patch is in and its tests pass; failed: it is not' },
                  notes: { type: 'string', description: 'Test output, or why it failed' },
                },
                required: ['outcome'],
              },
            },
          },
        },
      };
    case 'applied':
      return { ...base, status: 'completed', result: { resultType: 'complete', content: [{ type: 'text', text: JSON.stringify(task) }], isError: false } };
    case 'failed':
    case 'blocked': {
      const move = hub ? lastMove(hub, task) : undefined;
      const why = move?.body.trim().slice(0, 2_000);
      return { ...base, status: 'failed', error: { code: -32010, message: `${statusMessage(task)}${why ? `: ${why}` : ''}`, data: { code: `task.${task.status}` } } };
    }
    case 'superseded':
      return { ...base, status: 'cancelled' };
    default:
      return { ...base, status: 'working' };
  }
}

function taskIdOf(params: Json): string {
  const id = params.taskId;
  if (typeof id !== 'string' || id === '') throw new HubError('input.invalid', 'params.taskId must be the task id (a correlation id)', { field: 'taskId' });
  return id;
}

/** tasks/get: the task from the log (log.event_not_found for an id with no events). */
export function tasksGet(hub: HubServices, params: Json): Json {
  return mcpTaskOf(hub.logstream.task(taskIdOf(params)), hub);
}

/**
 * tools/call of a delegation by a client that declared the extension: the stored task.request becomes
 * a CreateTaskResult (the event stays in `_meta["palace/event"]`). Anything else: undefined.
 */
export function delegationTask(hub: HubServices, params: Json, result: Json): Json | undefined {
  if (result.isError === true) return undefined;
  const args = (params.name === 'palace_call' ? (params.arguments as Json | undefined)?.arguments : params.arguments) as Json | undefined;
  const tool = params.name === 'palace_call' ? (params.arguments as Json | undefined)?.name : params.name;
  if (tool !== 'palace_event_append' || args?.type !== 'task.request') return undefined;
  const text = (result.content as Array<{ type?: string; text?: string }> | undefined)?.[0]?.text;
  let event: { correlation_id?: unknown } | undefined;
  try {
    event = text ? (JSON.parse(text) as { correlation_id?: unknown }) : undefined;
  } catch {
    return undefined;
  }
  if (typeof event?.correlation_id !== 'string') return undefined;
  const task = mcpTaskOf(hub.logstream.task(event.correlation_id), hub);
  delete task.inputRequests;
  delete task.result;
  delete task.error;
  return { ...task, resultType: 'task', _meta: { 'palace/event': event } };
}

/** Runs one tool as the request's caller; a tool failure is thrown as its HubError. */
async function runTool(run: Run, name: string, args: Json): Promise<Json> {
  const response = await run({ jsonrpc: '2.0', id: `palace-task-${name}`, method: 'tools/call', params: { name, arguments: args } });
  if (!response) throw new HubError('internal', `${name} was cancelled`);
  if (response.error) throw new HubError('internal', (response.error as { message?: string }).message ?? `${name} failed`);
  const result = response.result as { isError?: boolean; content?: Array<{ text?: string }> };
  const value = JSON.parse(result.content?.[0]?.text ?? 'null') as Json & { error?: { code: ErrorCode; message: string; field?: string } };
  if (result.isError && value.error) throw new HubError(value.error.code, value.error.message, value.error.field ? { field: value.error.field } : {});
  return value;
}

/**
 * Who writes for the caller: a proven agent as itself; the operator unnamed (the identity binding
 * files it under the desk); an anonymous caller (open loopback hub, where names are believed) as
 * `fallback`, the task's requester.
 */
function writerFor(caller: Caller, fallback: string | null): Json {
  if (caller.kind === 'agent') return { from_agent: caller.name };
  if (caller.kind === 'operator' || !fallback) return {};
  return { from_agent: fallback };
}

/**
 * tasks/cancel: appends a task.reply with status superseded (metadata mcp_task_cancel) for the
 * caller, addressed to the worker (or the recipient). A task already done is refused.
 */
export async function tasksCancel(hub: HubServices, params: Json, caller: Caller, run: Run): Promise<Json> {
  const task = hub.logstream.task(taskIdOf(params));
  if (task.done) throw new HubError('input.invalid', `task ${task.correlation_id} is already ${task.status}: nothing to cancel`, { field: 'taskId' });
  const request = hub.logstream.eventsOf(task.correlation_id).find((e) => e.id === task.request_event_id);
  await runTool(run, 'palace_event_append', {
    type: 'task.reply',
    status: 'superseded',
    stream: request?.stream ?? 'mcp',
    room: request?.room ?? 'delegation',
    correlation_id: task.correlation_id,
    to_agent: task.worker ?? task.to_agent ?? task.requester ?? '*',
    body: 'cancelled through MCP tasks/cancel',
    metadata: { [CANCEL_MARK]: true },
    ...writerFor(caller, task.requester),
  });
  return {};
}

/**
 * tasks/update: the answer to a ready task's review. accept with outcome applied or failed acks the
 * patch event with that status (notes as the body); decline acks failed; cancel changes nothing.
 */
export async function tasksUpdate(hub: HubServices, params: Json, caller: Caller, run: Run): Promise<Json> {
  const task = hub.logstream.task(taskIdOf(params));
  const responses = params.inputResponses;
  if (!responses || typeof responses !== 'object') throw new HubError('input.invalid', 'params.inputResponses is required', { field: 'inputResponses' });
  const review = (responses as Json)[REVIEW] as { action?: unknown; content?: { outcome?: unknown; notes?: unknown } } | undefined;
  if (!review) throw new HubError('input.invalid', `inputResponses.${REVIEW} is the only input palace asks for`, { field: `inputResponses.${REVIEW}` });
  if (task.status !== 'ready')
    throw new HubError('input.invalid', `task ${task.correlation_id} is ${task.status ?? 'unknown'}, not waiting for a review`, { field: 'taskId' });
  if (review.action === 'cancel') return {};
  const outcome = review.action === 'decline' ? 'failed' : review.content?.outcome;
  if (review.action !== 'decline' && (review.action !== 'accept' || (outcome !== 'applied' && outcome !== 'failed')))
    throw new HubError('input.invalid', `inputResponses.${REVIEW}: action accept with content.outcome applied or failed, or action decline`, { field: `inputResponses.${REVIEW}` });
  const patch = [...task.history].reverse().find((h) => h.to === 'ready');
  const notes = typeof review.content?.notes === 'string' ? review.content.notes : undefined;
  await runTool(run, 'palace_event_ack', {
    event_id: patch?.event_id,
    status: outcome,
    body: notes ?? (review.action === 'decline' ? 'declined in review (MCP tasks/update)' : `${String(outcome)} (MCP tasks/update)`),
    ...writerFor(caller, task.requester),
  });
  return {};
}
