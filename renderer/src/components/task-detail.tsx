// One task: its state, who asked and who works on it, the desk's actions on it (task-actions.tsx),
// the work order, and every transition.

import type { ReactElement } from 'react';

import type { LogEvent } from '../../../hub/src/core/types.js';
import type { TaskRow } from '../lib/tasks.js';
import { formatAgo, formatDateTime, formatDuration } from '../lib/format.js';
import { ArtifactCard } from './artifact-card.js';
import { DetailPanel } from './detail-panel.js';
import { IconAlert } from './icons.js';
import { KeyValues } from './key-values.js';
import { StatusBadge } from './status-badge.js';
import { TaskActions } from './task-actions.js';
import { TaskCoordination } from './task-coordination.js';

interface Props {
  task: TaskRow;
  request: LogEvent | undefined;
  now: number;
  onClose(): void;
  onShowEvents(correlationId: string): void;
}

export function TaskDetail({ task, request, now, onClose, onShowEvents }: Props): ReactElement {
  return (
    <DetailPanel
      label="Task detail"
      testId="task-detail"
      onClose={onClose}
      title={
        <>
          <span className="mono">{task.correlation_id}</span>
          <StatusBadge status={task.status} />
        </>
      }
    >
      {task.stalled ? (
        <div className="callout callout-warn">
          <IconAlert size={14} /> Claimed by {task.worker ?? 'a worker'}, and nothing for{' '}
          {formatDuration(task.idleMs)}.
        </div>
      ) : null}
      <KeyValues
        rows={[
          { label: 'Requester', value: task.requester },
          { label: 'Worker', value: task.worker ?? <span className="muted">not claimed</span> },
          {
            label: 'Opened',
            value: `${formatDateTime(task.created_at)} (${formatAgo(task.created_at, now)})`,
          },
          { label: 'Last event', value: formatAgo(task.last_event_at, now) },
          ...(request?.branch ? [{ label: 'Branch', value: request.branch, mono: true }] : []),
          ...(request?.base_commit ? [{ label: 'Base commit', value: request.base_commit, mono: true }] : []),
        ]}
      />
      <TaskCoordination task={task} now={now} />
      <TaskActions task={task} request={request} now={now} />
      <section className="section">
        <h3 className="section-title">History</h3>
        <ol className="timeline" data-testid="task-history">
          {task.history.map((step) => (
            <li key={step.event_id} className="timeline-item">
              <span className={`timeline-dot dot-${step.to}`} aria-hidden="true" />
              <div className="timeline-main">
                <div>
                  <StatusBadge status={step.to} /> <span className="muted small">by</span>{' '}
                  <span className="agent">{step.by}</span>
                  {!step.expected ? (
                    <span className="tag tag-warn" title="The spec's state table does not show this move">
                      unexpected move
                    </span>
                  ) : null}
                </div>
                <div className="muted small">
                  <span className="mono">{step.event_type}</span> · {formatDateTime(step.at)}
                </div>
              </div>
            </li>
          ))}
        </ol>
        <button
          type="button"
          className="btn btn-secondary btn-sm btn-start"
          onClick={() => onShowEvents(task.correlation_id)}
        >
          Show its {task.event_count} events
        </button>
      </section>
      {request?.body ? (
        <section className="section">
          <h3 className="section-title">Work order</h3>
          <pre className="body-text">{request.body}</pre>
        </section>
      ) : null}
      {task.artifact_ids.length > 0 ? (
        <section className="section">
          <h3 className="section-title">Artifacts</h3>
          {task.artifact_ids.map((id) => (
            <ArtifactCard key={id} id={id} />
          ))}
        </section>
      ) : null}
    </DetailPanel>
  );
}
