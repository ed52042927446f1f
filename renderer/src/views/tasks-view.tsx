// Tasks: one row per correlation id with its state from the shared projection, who asked, who
// works on it, its age and the time since its last event. Stalled claimed tasks come first.

import { useMemo, useState, type ReactElement } from 'react';

import type { TaskStatus } from '../../../hub/src/core/task-state.js';
import { DeskBar } from '../components/desk-bar.js';
import { EmptyState } from '../components/empty-state.js';
import { IconAlert, IconTasks } from '../components/icons.js';
import { StatusBadge } from '../components/status-badge.js';
import { TaskDetail } from '../components/task-detail.js';
import { useDashboard } from '../hooks/useDashboard.js';
import { useHotkeys } from '../hooks/useHotkeys.js';
import { useNow } from '../hooks/useNow.js';
import { formatAgo, formatDuration } from '../lib/format.js';
import { STALLED_AFTER_MS, taskRows, type TaskRow } from '../lib/tasks.js';

const STATES: TaskStatus[] = ['open', 'claimed', 'ready', 'applied', 'failed', 'blocked', 'superseded'];

interface Props {
  selectedId: string | null;
  onSelect(id: string | null): void;
  onShowEvents(correlationId: string): void;
}

function lastActivity(task: TaskRow, now: number): ReactElement {
  if (task.stalled)
    return (
      <span
        className="stalled-note"
        title={`No event for ${formatDuration(task.idleMs)} since it was claimed`}
      >
        <IconAlert size={13} /> claimed, nothing for {formatDuration(task.idleMs)}
      </span>
    );
  if (task.unclaimed)
    return <span className="unclaimed-note">nobody claimed it for {formatDuration(task.idleMs)}</span>;
  return <span>{formatAgo(task.last_event_at, now)}</span>;
}

export function TasksView({ selectedId, onSelect, onShowEvents }: Props): ReactElement {
  const { events, eventsLoaded } = useDashboard();
  const now = useNow(5_000);
  const [state, setState] = useState<TaskStatus | 'active' | 'all' | 'stalled'>('active');
  const rows = useMemo(() => taskRows(events, now), [events, now]);
  const counts = useMemo(() => {
    const c: Record<string, number> = { stalled: 0, active: 0, all: rows.length };
    for (const r of rows) {
      c[r.status ?? ''] = (c[r.status ?? ''] ?? 0) + 1;
      if (r.stalled) c.stalled = (c.stalled ?? 0) + 1;
      if (!r.done) c.active = (c.active ?? 0) + 1;
    }
    return c;
  }, [rows]);
  const shown = rows.filter((r) =>
    state === 'all'
      ? true
      : state === 'active'
        ? !r.done
        : state === 'stalled'
          ? r.stalled
          : r.status === state,
  );
  const selected = rows.find((r) => r.correlation_id === selectedId);
  const request = selected?.request_event_id
    ? events.find((e) => e.id === selected.request_event_id)
    : undefined;

  const move = (delta: number): void => {
    const at = selected ? shown.indexOf(selected) : -1;
    const next = shown[Math.max(0, Math.min(shown.length - 1, at < 0 ? 0 : at + delta))];
    if (next) onSelect(next.correlation_id);
  };
  useHotkeys([
    { keys: 'j', run: () => move(1) },
    { keys: 'ArrowDown', run: () => move(1) },
    { keys: 'k', run: () => move(-1) },
    { keys: 'ArrowUp', run: () => move(-1) },
    { keys: 'Escape', run: () => onSelect(null) },
  ]);

  const chip = (key: typeof state, label: string, tone?: string) => (
    <button
      type="button"
      key={key}
      className={`chip ${state === key ? 'chip-active' : ''} ${tone ?? ''} ${(STATES as string[]).includes(key) ? 'chip-state' : ''}`}
      onClick={() => setState(key)}
      aria-pressed={state === key}
      data-testid={`task-chip-${key}`}
    >
      {label} <span className="chip-count">{counts[key] ?? 0}</span>
    </button>
  );

  return (
    <div className="view view-split">
      <div className="pane">
        <div className="chips" role="toolbar" aria-label="Task states">
          {chip('active', 'In flight')}
          {counts.stalled ? chip('stalled', 'Stalled', 'chip-warn') : null}
          {STATES.filter((s) => counts[s]).map((s) => chip(s, s))}
          {chip('all', 'All')}
          <DeskBar onCreated={onSelect} />
        </div>
        <div className="table-wrap">
          {shown.length > 0 ? (
            <table className={`table table-tasks ${selected ? 'table-split' : ''}`} data-testid="task-table">
              <thead>
                <tr>
                  <th className="col-state">State</th>
                  <th className="col-task">Task</th>
                  <th className="col-who">Requester → worker</th>
                  <th className="col-age num">Age</th>
                  <th className="col-activity">Last activity</th>
                  <th className="col-events num">Events</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((t) => (
                  <tr
                    key={t.correlation_id}
                    className={`row ${t.stalled ? 'row-stalled' : ''} ${t.correlation_id === selectedId ? 'row-selected' : ''}`}
                    onClick={() => onSelect(t.correlation_id === selectedId ? null : t.correlation_id)}
                    aria-selected={t.correlation_id === selectedId}
                    data-testid="task-row"
                    data-task-id={t.correlation_id}
                    data-status={t.status ?? ''}
                    data-stalled={t.stalled ? 'true' : 'false'}
                  >
                    <td className="col-state">
                      <StatusBadge status={t.status} />
                    </td>
                    <td className="col-task">
                      <div className="mono task-id">{t.correlation_id}</div>
                      {t.title ? <div className="muted small task-title">{t.title}</div> : null}
                      <div className="muted small split-only">
                        {t.requester ?? '—'} → {t.worker ?? 'unclaimed'}
                      </div>
                    </td>
                    <td className="col-who">
                      <span className="agent">{t.requester ?? '—'}</span>
                      <span className="route-arrow">→</span>
                      <span className={t.worker ? 'agent' : 'muted'}>{t.worker ?? 'unclaimed'}</span>
                    </td>
                    <td className="col-age num">{formatDuration(t.ageMs)}</td>
                    <td className="col-activity">{lastActivity(t, now)}</td>
                    <td className="col-events num">{t.event_count}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <EmptyState
              icon={<IconTasks size={28} />}
              title={rows.length === 0 ? 'No tasks yet' : 'Nothing in this state'}
              testId="tasks-empty"
            >
              {rows.length === 0 || !eventsLoaded
                ? 'A task starts when an agent appends a task.request with a correlation id. It shows here as it moves from open to applied.'
                : `Tasks claimed with nothing for ${formatDuration(STALLED_AFTER_MS)} are marked stalled.`}
            </EmptyState>
          )}
        </div>
      </div>
      {selected ? (
        <TaskDetail
          task={selected}
          request={request}
          now={now}
          onClose={() => onSelect(null)}
          onShowEvents={onShowEvents}
        />
      ) : null}
    </div>
  );
}
