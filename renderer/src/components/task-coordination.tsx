// A task's coordination facts in its detail panel: the claim lease (time left, or expired), what it
// depends on and which of those still block it, and a patch that came after its claimer's lease
// ended. Reads the projection's optional lease/dependency fields, so it renders nothing on a hub
// whose projection lacks them.

import { useMemo, type ReactElement } from 'react';

import { projectTask } from '../../../hub/src/core/task-state.js';
import { useDashboard } from '../hooks/useDashboard.js';
import { formatDuration } from '../lib/format.js';
import type { TaskRow } from '../lib/tasks.js';
import { KeyValues } from './key-values.js';
import { StatusBadge } from './status-badge.js';

/** The lease and dependency fields of the task projection (issue #20); optional here. */
interface CoordinationFields {
  lease_expires_at?: string | null;
  lease_expired?: boolean;
  late_patch?: boolean;
  depends_on?: string[];
}

export function TaskCoordination({ task, now }: { task: TaskRow; now: number }): ReactElement | null {
  const { events } = useDashboard();
  const c = task as TaskRow & CoordinationFields;
  const deps = useMemo(() => c.depends_on ?? [], [c.depends_on]);
  const depStatus = useMemo(
    () =>
      deps.map((id) => {
        const own = events.filter((e) => e.correlation_id === id);
        return { id, status: own.length > 0 ? projectTask(id, own).status : null };
      }),
    [deps, events],
  );
  const blockedBy = depStatus.filter((d) => d.status !== 'applied');
  const leaseLeft = c.lease_expires_at ? Date.parse(c.lease_expires_at) - now : null;
  const rows = [
    ...(task.status === 'claimed' && leaseLeft !== null
      ? [
          {
            label: 'Lease',
            value: (
              <span data-testid="task-lease" className={leaseLeft <= 0 ? 'stalled-note' : undefined}>
                {leaseLeft > 0
                  ? `${formatDuration(leaseLeft)} left`
                  : `ended ${formatDuration(-leaseLeft)} ago`}{' '}
                (until {new Date(c.lease_expires_at as string).toLocaleTimeString()})
              </span>
            ),
          },
        ]
      : []),
    ...(c.lease_expired
      ? [{ label: 'Last claim', value: <span className="tag tag-warn">expired; open again</span> }]
      : []),
    ...(c.late_patch
      ? [
          {
            label: 'Patch',
            value: <span className="tag tag-warn">arrived after its claimer's lease ended</span>,
          },
        ]
      : []),
    ...(deps.length > 0
      ? [
          {
            label: blockedBy.length > 0 ? 'Blocked by' : 'Depends on',
            value: (
              <span data-testid="task-deps" className="deps">
                {(blockedBy.length > 0 ? blockedBy : depStatus).map((d) => (
                  <span key={d.id} className="dep">
                    <span className="mono">{d.id}</span>{' '}
                    {d.status ? (
                      <StatusBadge status={d.status} />
                    ) : (
                      <span className="muted small">not seen</span>
                    )}
                  </span>
                ))}
              </span>
            ),
          },
        ]
      : []),
  ];
  return rows.length > 0 ? <KeyValues rows={rows} /> : null;
}
