// The coordination tools: claim lease renewal and release, the ready queue, and advisory file
// reservations. Lock-free like every logstream tool; each write is an ordinary (synced) event.

import { z } from 'zod';

import { leaseBounds } from '../../config.js';
import { listOf } from './list-input.js';
import { defineTool } from './tool.js';

const duration = (what: string) =>
  z.union([z.number().int().min(1), z.string()]).optional().describe(`${what}: ms, or a duration such as 90s, 30m, 2h`);

export const taskRenewTool = defineTool({
  name: 'palace_task_renew',
  title: 'Renew a claim lease',
  description:
    'Heartbeat for a task you claimed: extends your claim lease (appends claim.renewed). A claim ack gets a lease (default 30 min); when it lapses the hub appends claim.expired and the task is open again for anyone. Renew well before lease_expires_at while you work. Refused (task.not_claimed) when you no longer hold the task.',
  input: {
    event_id: z.string().describe('The task: its correlation_id, the task.request id, or any event of the task'),
    from_agent: z.string().describe('Your own agent name (the claimer)'),
    lease_ms: duration('New lease from now (default 30 min, bounded by the hub)'),
  },
  mutating: true,
  lockFree: true,
  handler: (args, hub) => hub.logstream.renew(args, leaseBounds(hub.config)),
});

export const taskReleaseTool = defineTool({
  name: 'palace_task_release',
  title: 'Release a claim',
  description:
    "End the current claim on a task (appends claim.expired with your reason and who released it); the task goes back to open so another agent can claim it. Allowed for the claimer (give up a task), the task's requester, or the human at the desk (free a stale claim); anyone else gets claim.not_yours.",
  input: {
    event_id: z.string().describe('The task: its correlation_id, the task.request id, or any event of the task'),
    from_agent: z.string().describe('Your own agent name'),
    reason: z.string().optional().describe('Why the claim ends (kept verbatim in the event body)'),
  },
  mutating: true,
  lockFree: true,
  handler: (args, hub, ctx) => hub.logstream.releaseClaim(args, { desk: hub.identity.isDesk(ctx.caller, args.from_agent) }),
});

export const taskReadyTool = defineTool({
  name: 'palace_task_ready',
  title: 'Tasks ready to claim',
  description:
    'The ready queue: first your own claimed tasks still in flight (resume: true; finish those first), then open tasks addressed to agent (or to "*") whose depends_on tasks are all applied and whose required capabilities you have, oldest first. Claim one with palace_event_ack (status claimed) on its request_event_id. Returns {tasks, count, not_offered: [{correlation_id, reason}]} (tasks for you that need capabilities you lack).',
  input: {
    agent: z.string().optional().describe('Your own agent name (default: the agent your secret proves)'),
    stream: z.string().optional().describe('Only tasks of this stream'),
    limit: z.number().int().min(1).max(500).optional().describe('At most this many (default: all); 1 gives the head of the queue'),
  },
  mutating: false,
  lockFree: true,
  handler: (args, hub, ctx) => {
    const agent = args.agent ?? (ctx.caller.kind === 'agent' ? ctx.caller.name : undefined);
    const capabilities =
      ctx.caller.kind === 'agent' && ctx.caller.name === agent ? ctx.caller.capabilities : agent ? (hub.identity.registry.get(agent)?.capabilities ?? null) : null;
    const { tasks, not_offered } = hub.logstream.readyQueue({ ...args, agent }, capabilities);
    return { tasks, count: tasks.length, not_offered };
  },
});

export const reserveTool = defineTool({
  name: 'palace_reserve',
  title: 'Reserve files',
  description:
    'Advisory file reservation: say which paths or globs (relative to the repository) you are editing, shared or exclusive, for a while (ttl, default 30 min). Refused (reservation.conflict, naming holder and task) when another agent holds an overlapping exclusive reservation, or when you ask exclusive and another agent holds any overlapping one; force overrides. Released with its task (when the task is done), by palace_release, or at expires_at. palace guard install makes git refuse commits that touch other agents\' exclusive reservations.',
  input: {
    paths: listOf(z.string(), 100).describe('Paths or globs (*, **, ?, {a,b}); a directory covers everything under it'),
    stream: z.string().describe('The stream (project/<name>) the reservation is in'),
    from_agent: z.string().describe('Your own agent name'),
    exclusive: z.boolean().optional().describe('Nobody else may reserve or commit these paths (default shared)'),
    ttl_ms: duration('How long it holds (default 30 min)'),
    correlation_id: z.string().optional().describe('The task this is for; released when the task is done'),
    force: z.boolean().optional().describe('Reserve despite conflicts (they are listed in overridden)'),
  },
  mutating: true,
  lockFree: true,
  handler: (args, hub) => hub.logstream.reserve(args, leaseBounds(hub.config)),
});

export const reservationsTool = defineTool({
  name: 'palace_reservations',
  title: 'List file reservations',
  description: 'File reservations in force now (not released, not expired, task not done), oldest first. Returns {reservations, count}.',
  input: {
    stream: z.string().optional().describe('Only this stream'),
    agent: z.string().optional().describe('Only reservations held by this agent'),
    path: z.string().optional().describe('Only reservations covering (or overlapping) this path or glob'),
    correlation_id: z.string().optional().describe('Only reservations made for this task'),
  },
  mutating: false,
  lockFree: true,
  handler: (args, hub) => {
    const reservations = hub.logstream.reservations(args);
    return { reservations, count: reservations.length };
  },
});

export const releaseTool = defineTool({
  name: 'palace_release',
  title: 'Release a file reservation',
  description: 'Release a file reservation by its id (the file.reserved event id); appends file.released.',
  input: {
    reservation_id: z.string().describe('The reservation id (evt_...) from palace_reserve or palace_reservations'),
    from_agent: z.string().describe('Your own agent name'),
  },
  mutating: true,
  lockFree: true,
  handler: (args, hub) => hub.logstream.releaseReservation(args),
});

export const coordinationTools = [taskRenewTool, taskReleaseTool, taskReadyTool, reserveTool, reservationsTool, releaseTool];
