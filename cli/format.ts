// Human-readable renderings of events, artifacts and tasks for the CLI's text mode.

import type { ArtifactMeta, LogEvent } from '../hub/src/core/types.js';
import type { TaskState } from '../hub/src/core/task-state.js';

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, max - 3) + '...' : flat;
}

/** `  <id>  <created_at>  <type>  <stream>/<room>  <from>-><to> [status] corr=… artifacts=N :: body` */
export function eventLine(e: LogEvent): string {
  const parts = [`  ${e.id}  ${e.created_at}  ${e.type}  ${e.stream}/${e.room}  ${e.from_agent}->${e.to_agent ?? '*'}`];
  if (e.status) parts.push(`[${e.status}]`);
  if (e.correlation_id) parts.push(`corr=${e.correlation_id}`);
  if (e.artifact_ids.length > 0) parts.push(`artifacts=${e.artifact_ids.join(',')}`);
  if (e.body) parts.push(`:: ${oneLine(e.body, 80)}`);
  return parts.join(' ');
}

export function eventsText(events: readonly LogEvent[], empty = 'No matching events.'): string {
  if (events.length === 0) return empty;
  return [`${events.length} event(s):`, ...events.map(eventLine)].join('\n');
}

export function artifactText(a: ArtifactMeta): string {
  return [`Stored ${a.id}  kind=${a.kind}`, `  sha256=${a.sha256}`, `  size=${a.size_bytes} bytes`].join('\n');
}

export function taskLine(t: TaskState): string {
  const who = `${t.requester ?? '?'} -> ${t.worker ?? '*'}`;
  return `  ${t.correlation_id}  ${(t.status ?? '-').padEnd(10)}  ${who}  last=${t.last_event_at ?? '-'}  events=${t.event_count}`;
}

export function taskText(t: TaskState): string {
  const lines = [
    `Task ${t.correlation_id}: ${t.status ?? 'no status'}${t.done ? ' (done)' : ''}`,
    `  requester: ${t.requester ?? '-'}`,
    `  worker:    ${t.worker ?? '-'}`,
    `  request:   ${t.request_event_id ?? '-'}`,
  ];
  if (t.artifact_ids.length > 0) lines.push(`  artifacts: ${t.artifact_ids.join(', ')}`);
  lines.push('  history:');
  for (const h of t.history)
    lines.push(`    ${h.at}  ${h.from ?? 'none'} -> ${h.to}  by ${h.by}  (${h.event_type} ${h.event_id})${h.expected ? '' : '  [unexpected]'}`);
  return lines.join('\n');
}
