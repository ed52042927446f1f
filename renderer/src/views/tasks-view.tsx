// Tasks: one row per correlation id with its state from the hub's task projection (paged through
// palace_tasks, with true totals), who asked, who works on it, its age and the time since its last
// event. Stalled claimed tasks come first among those loaded.

import { useMemo, type ReactElement } from 'react';

import type { TaskStatus } from '../../../hub/src/core/task-state.js';
import { DeskBar } from '../components/desk-bar.js';
import { EmptyState } from '../components/empty-state.js';
import { IconAlert, IconTasks } from '../components/icons.js';
import { StatusBadge } from '../components/status-badge.js';
import { TaskDetail } from '../components/task-detail.js';
import { useDashboard, useStore } from '../hooks/useDashboard.js';
import { useHotkeys } from '../hooks/useHotkeys.js';
import { useNow } from '../hooks/useNow.js';
import { formatAgo, formatDuration } from '../lib/format.js';
import { STALLED_AFTER_MS, hubTaskRows, type TaskRow } from '../lib/tasks.js';
import type { TaskFilterKey } from '../state/dashboard-store.js';

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
  const store = useStore();
  const { tasks: list, taskRequests } = useDashboard();
  const now = useNow(5_000);
  const state = list.filter;
  const setState = (key: TaskFilterKey): void => store.setTaskFilter(key);
  const rows = useMemo(() => hubTaskRows(list.tasks, taskRequests, now), [list.tasks, taskRequests, now]);
  // True totals from the hub (correlations with no status yet are not rows, so not counted), stalled
  // included (claimed with no event for 10 minutes, counted by the hub at the last refresh).
  const counts = useMemo(() => {
    const hub = list.counts;
    const none = hub?.by_status.none ?? 0;
    const c: Record<string, number> = {
      ...(hub?.by_status ?? {}),
      active: (hub?.active ?? 0) - none,
      all: (hub?.all ?? 0) - none,
      stalled: list.stalled ?? 0,
    };
    return c;
  }, [list.counts, list.stalled]);
  const selected = rows.find((r) => r.correlation_id === selectedId);
  const request = selected ? taskRequests.get(selected.correlation_id) : undefined;

  const move = (delta: number): void => {
    const at = selected ? rows.indexOf(selected) : -1;
    const next = rows[Math.max(0, Math.min(rows.length - 1, at < 0 ? 0 : at + delta))];
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
      {label}{' '}
      <span className="chip-count" title={key === 'stalled' ? `claimed, with no event for ${formatDuration(STALLED_AFTER_MS)}` : undefined}>
        {counts[key] ?? 0}
      </span>
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
        <div className="list-meta">
          <span data-testid="tasks-shown">
            {rows.length.toLocaleString()} shown of {list.total.toLocaleString()}
          </span>
        </div>
        <div className="table-wrap">
          {rows.length > 0 ? (
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
                {rows.map((t) => (
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
              {list.hasMore ? (
                <tfoot>
                  <tr>
                    <td colSpan={6}>
                      <button
                        type="button"
                        className="btn btn-secondary btn-sm"
                        onClick={() => void store.loadMoreTasks()}
                        disabled={list.state === 'loading'}
                        data-testid="tasks-more"
                      >
                        Load {Math.min(100, list.total - list.tasks.length).toLocaleString()} more
                      </button>
                    </td>
                  </tr>
                </tfoot>
              ) : null}
            </table>
          ) : (
            <EmptyState
              icon={<IconTasks size={28} />}
              title={counts.all === 0 ? 'No tasks yet' : 'Nothing in this state'}
              testId="tasks-empty"
            >
              {counts.all === 0 || list.state !== 'ready'
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
