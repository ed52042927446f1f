// Human-readable renderings of events, artifacts and tasks for the CLI's text mode.

import { quoteLines, terminalLine } from '../hub/src/core/terminal-text.js';
import type { ArtifactMeta, LogEvent } from '../hub/src/core/types.js';
import type { TaskState } from '../hub/src/core/task-state.js';
import type { Reservation, TaskView } from '../hub/src/logstream/coordination.js';

function oneLine(text: string, max: number): string {
  const flat = terminalLine(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, max - 3) + '...' : flat;
}

/** `  <id>  <created_at>  <type>  <stream>/<room>  <from>-><to> [status] corr=… artifacts=N :: body` */
export function eventLine(e: LogEvent): string {
  const parts = [`  ${e.id}  ${e.created_at}  ${e.type}  ${e.stream}/${e.room}  ${e.from_agent}->${e.to_agent ?? '*'}`];
  if (e.status) parts.push(`[${e.status}]`);
  if (e.correlation_id) parts.push(`corr=${e.correlation_id}`);
  if (e.artifact_ids.length > 0) parts.push(`artifacts=${e.artifact_ids.join(',')}`);
  if (e.body) parts.push(`:: ${oneLine(e.body, 80)}`);
  return terminalLine(parts.join(' ')); // one line whatever the fields hold (output.ts also strips controls)
}

export function eventsText(events: readonly LogEvent[], empty = 'No matching events.'): string {
  if (events.length === 0) return empty;
  return [`${events.length} event(s):`, ...events.map(eventLine)].join('\n');
}

export function artifactText(a: ArtifactMeta): string {
  return [`Stored ${a.id}  kind=${a.kind}`, `  sha256=${a.sha256}`, `  size=${a.size_bytes} bytes`].join('\n');
}

/** A lease's time left, e.g. `12m04s left` or `expired 3s ago`. */
export function leaseLeft(ms: number | null): string {
  if (ms === null) return 'no lease';
  const abs = Math.abs(Math.round(ms / 1000));
  const text = abs >= 3600 ? `${Math.floor(abs / 3600)}h${String(Math.floor((abs % 3600) / 60)).padStart(2, '0')}m` : `${Math.floor(abs / 60)}m${String(abs % 60).padStart(2, '0')}s`;
  return ms >= 0 ? `${text} left` : `lapsed ${text} ago`;
}

function view(t: TaskState): Partial<TaskView> {
  return t as Partial<TaskView>;
}

export function taskLine(t: TaskState): string {
  const who = `${t.requester ?? '?'} -> ${t.worker ?? '*'}`;
  const v = view(t);
  const extra = [
    t.status === 'claimed' && v.lease_left_ms !== undefined && t.lease_expires_at !== null ? `lease=${leaseLeft(v.lease_left_ms ?? null)}` : '',
    v.blocked_by && v.blocked_by.length > 0 ? `blocked_by=${v.blocked_by.join(',')}` : '',
    t.reservations.length > 0 ? `reservations=${t.reservations.length}` : '',
    t.late_patch ? 'late_patch' : '',
  ].filter(Boolean);
  return `  ${t.correlation_id}  ${(t.status ?? '-').padEnd(10)}  ${who}  last=${t.last_event_at ?? '-'}  events=${t.event_count}${extra.length > 0 ? `  ${extra.join('  ')}` : ''}`;
}

export function reservationLine(r: Reservation | TaskState['reservations'][number]): string {
  const task = 'correlation_id' in r && r.correlation_id ? `  task=${r.correlation_id}` : '';
  return `  ${r.reservation_id}  ${r.exclusive ? 'exclusive' : 'shared   '}  ${r.agent}  ${r.stream}  until ${r.expires_at}${task}  ${r.paths.join(' ')}`;
}

/** A task with its request event, as `logstream ready` and `logstream task` read them. */
type WithRequest = TaskState & { request?: LogEvent | null };

/** Where the work happens and what it is: branch, base commit, stream and the request's body. */
function requestLines(t: WithRequest, indent: string): string[] {
  const r = t.request;
  if (!r) return [];
  return [
    `${indent}branch:      ${r.branch ?? '-'}   base commit: ${r.base_commit ?? '-'}   stream: ${r.stream}/${r.room}`,
    ...(t.depends_on.length > 0 ? [`${indent}depends on:  ${t.depends_on.join(', ')}`] : []),
    ...(r.body ? [`${indent}goal and definition of done (the request's body):`, ...quoteLines(r.body, `${indent}  > `)] : [`${indent}(the request has no body)`]),
  ];
}

/** `logstream ready`: under each task line, the work order and the command that claims it, as printed. */
export function workOrderLines(t: WithRequest, agent: string | undefined): string[] {
  const claim = t.request_event_id
    ? [`    claim it:    palace logstream ack ${t.request_event_id} --status claimed${agent === undefined ? '' : ` --from-agent ${agent}`}`]
    : [];
  return [`    request:     ${t.request_event_id ?? '-'}  from ${t.requester ?? '-'}`, ...requestLines(t, '    '), ...claim];
}

export function taskText(t: WithRequest): string {
  const v = view(t);
  const lines = [
    `Task ${t.correlation_id}: ${t.status ?? 'no status'}${t.done ? ' (done)' : ''}`,
    `  requester: ${t.requester ?? '-'}`,
    `  worker:    ${t.worker ?? '-'}`,
    `  request:   ${t.request_event_id ?? '-'}`,
    ...requestLines(t, '  '),
  ];
  if (t.status === 'claimed')
    lines.push(`  lease:     ${t.lease_expires_at === null ? 'none' : `until ${t.lease_expires_at} (${leaseLeft(v.lease_left_ms ?? null)})`}  claim ${t.claim_event_id ?? '-'}`);
  if (t.lease_expired) lines.push('  lease:     the last claim expired (claim.expired); the task can be claimed again');
  if (t.late_patch) lines.push('  late patch: a patch came from a claimer whose lease had expired');
  if (t.depends_on.length > 0 && !t.request) lines.push(`  depends on: ${t.depends_on.join(', ')}`);
  if (v.blocked_by !== undefined) lines.push(`  blocked by: ${v.blocked_by.length > 0 ? v.blocked_by.join(', ') : '-'}`);
  if (t.artifact_ids.length > 0) lines.push(`  artifacts: ${t.artifact_ids.join(', ')}`);
  if (t.reservations.length > 0) lines.push('  reservations:', ...t.reservations.map((r) => `  ${reservationLine(r)}`));
  lines.push('  history:');
  for (const h of t.history)
    lines.push(`    ${h.at}  ${h.from ?? 'none'} -> ${h.to}  by ${h.by}  (${h.event_type} ${h.event_id})${h.expected ? '' : '  [unexpected]'}`);
  return lines.join('\n');
}
