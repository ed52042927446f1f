// The desk's actions on one task: approve or reject its patch, release a stale claim, cancel a
// reservation, reply. Each is one MCP tool call written under the desk's agent name; a refusal
// (read-only hub, bad input) is shown as the hub worded it.

import { useState, type ReactElement } from 'react';

import type { LogEvent } from '../../../hub/src/core/types.js';
import { useDashboard, useStore } from '../hooks/useDashboard.js';
import { useDesk } from '../hooks/useDesk.js';
import { activeReservations } from '../lib/desk.js';
import { formatAgo } from '../lib/format.js';
import type { TaskRow } from '../lib/tasks.js';
import { cancelReservation, decidePatch, releaseClaim, replyOnTask } from '../state/desk-actions.js';
import { IconAlert } from './icons.js';
import { useToast } from './toast.js';

interface Props {
  task: TaskRow;
  request: LogEvent | undefined;
  now: number;
}

export function TaskActions({ task, request, now }: Props): ReactElement {
  const store = useStore();
  const { events } = useDashboard();
  const { agent } = useDesk();
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState('');
  const [reply, setReply] = useState('');

  const own = events.filter((e) => e.correlation_id === task.correlation_id);
  const patch = [...own].reverse().find((e) => e.type === 'patch.ready');
  const reservations = task.done ? [] : activeReservations(events, task.correlation_id, now); // released with the task
  const replyTo =
    task.requester === agent ? (task.worker ?? request?.to_agent ?? '*') : (task.requester ?? '*');

  const run = async (what: string, fn: () => Promise<unknown>, after?: () => void): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      toast.show(what);
      after?.();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="section desk-actions" data-testid="task-actions">
      <div className="desk-head">
        <h3 className="section-title">At the desk</h3>
        <span className="muted small">
          writing as <span className="agent">{agent}</span>
        </span>
      </div>
      {error ? (
        <div className="callout callout-bad" role="alert" data-testid="desk-error">
          <IconAlert size={14} /> {error}
        </div>
      ) : null}
      {task.status === 'ready' && patch ? (
        <div className="desk-block" data-testid="patch-decision">
          <div className="muted small">
            Patch from <span className="agent">{patch.from_agent}</span> · {formatAgo(patch.created_at, now)}
          </div>
          <input
            className="input input-sm"
            placeholder="Note (optional): what you checked, why you reject it"
            value={note}
            onChange={(e) => setNote(e.target.value)}
            aria-label="Note on the patch"
            data-testid="patch-note"
          />
          <div className="desk-buttons">
            <button
              type="button"
              className="btn btn-primary btn-sm"
              disabled={busy}
              data-testid="patch-approve"
              onClick={() =>
                void run(
                  'Patch approved (applied)',
                  () => decidePatch(store.client, agent, patch.id, 'applied', note),
                  () => setNote(''),
                )
              }
            >
              Approve (applied)
            </button>
            <button
              type="button"
              className="btn btn-secondary btn-sm"
              disabled={busy}
              data-testid="patch-reject"
              onClick={() =>
                void run(
                  'Patch rejected (failed)',
                  () => decidePatch(store.client, agent, patch.id, 'failed', note),
                  () => setNote(''),
                )
              }
            >
              Reject (failed)
            </button>
          </div>
        </div>
      ) : null}
      {task.status === 'claimed' ? (
        <div className="desk-block">
          <div className="muted small">
            Claimed by <span className="agent">{task.worker ?? 'a worker'}</span>. Releasing the claim opens
            the task again.
          </div>
          <div className="desk-buttons">
            <button
              type="button"
              className={`btn btn-sm ${task.stalled ? 'btn-primary' : 'btn-secondary'}`}
              disabled={busy}
              data-testid="claim-release"
              onClick={() =>
                void run('Claim released', () =>
                  releaseClaim(
                    store.client,
                    agent,
                    task.correlation_id,
                    `released from the dashboard by ${agent}`,
                  ),
                )
              }
            >
              Release claim
            </button>
          </div>
        </div>
      ) : null}
      {reservations.length > 0 ? (
        <ul className="desk-reservations" data-testid="reservations">
          {reservations.map((r) => (
            <li key={r.event.id} className="desk-reservation" data-reservation-id={r.event.id}>
              <div>
                <span className="mono small">{r.paths.join(', ') || '(no paths)'}</span>{' '}
                <span className="tag">{r.exclusive ? 'exclusive' : 'shared'}</span>
                <div className="muted small">
                  by <span className="agent">{r.event.from_agent}</span>
                  {r.expires_at ? ` · until ${new Date(r.expires_at).toLocaleTimeString()}` : ''}
                </div>
              </div>
              <button
                type="button"
                className="btn btn-ghost btn-sm"
                disabled={busy}
                data-testid="reservation-cancel"
                onClick={() =>
                  void run('Reservation cancelled', () => cancelReservation(store.client, agent, r.event.id))
                }
              >
                Cancel
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {request ? (
        <form
          className="desk-block"
          onSubmit={(e) => {
            e.preventDefault();
            if (reply.trim())
              void run(
                `Reply sent to ${replyTo}`,
                () => replyOnTask(store.client, agent, request, replyTo, reply),
                () => setReply(''),
              );
          }}
        >
          <textarea
            className="input desk-textarea"
            rows={3}
            placeholder={`Reply to ${replyTo}…`}
            value={reply}
            onChange={(e) => setReply(e.target.value)}
            aria-label="Reply on this task"
            data-testid="task-reply"
          />
          <div className="desk-buttons">
            <button
              type="submit"
              className="btn btn-secondary btn-sm"
              disabled={busy || !reply.trim()}
              data-testid="task-reply-send"
            >
              Reply to {replyTo}
            </button>
          </div>
        </form>
      ) : null}
    </section>
  );
}
