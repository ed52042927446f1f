// "New task": the human files a task.request (status open) under the desk's agent name, through
// palace_event_append like any agent. The correlation id follows the title unless edited.

import { useState, type ReactElement } from 'react';

import { useStore } from '../hooks/useDashboard.js';
import { useDesk } from '../hooks/useDesk.js';
import { correlationFromTitle } from '../lib/desk.js';
import { createTask } from '../state/desk-actions.js';
import { IconAlert, IconClose } from './icons.js';
import { useToast } from './toast.js';

interface Props {
  /** Streams seen in the log, offered as suggestions. */
  streams: readonly string[];
  onClose(): void;
  onCreated(correlationId: string): void;
}

export function NewTaskDialog({ streams, onClose, onCreated }: Props): ReactElement {
  const store = useStore();
  const { agent } = useDesk();
  const toast = useToast();
  const [title, setTitle] = useState('');
  const [cid, setCid] = useState<string | null>(null);
  const [to, setTo] = useState('');
  const [stream, setStream] = useState(streams[0] ?? '');
  const [branch, setBranch] = useState('');
  const [base, setBase] = useState('');
  const [details, setDetails] = useState('');
  const [deps, setDeps] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const correlation = cid ?? correlationFromTitle(title);

  const submit = async (): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await createTask(store.client, agent, {
        to_agent: to,
        stream,
        room: 'delegation',
        correlation_id: correlation,
        branch,
        base_commit: base,
        depends_on: deps.split(/[\s,]+/).filter(Boolean),
        body: details.trim() ? `${title.trim()}\n\n${details.trim()}` : title.trim(),
      });
      toast.show(`Task ${correlation} filed for ${to}`);
      onCreated(correlation);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const ready = title.trim() && to.trim() && stream.trim() && correlation;

  return (
    <div className="overlay" onMouseDown={onClose}>
      <form
        className="dialog new-task"
        role="dialog"
        aria-label="New task"
        aria-modal="true"
        data-testid="new-task-dialog"
        onMouseDown={(e) => e.stopPropagation()}
        onKeyDown={(e) => e.key === 'Escape' && onClose()}
        onSubmit={(e) => {
          e.preventDefault();
          if (ready) void submit();
        }}
      >
        <header className="dialog-head">
          <h2>
            New task <span className="muted small">as</span> <span className="agent">{agent}</span>
          </h2>
          <button type="button" className="btn btn-ghost btn-icon" onClick={onClose} aria-label="Close">
            <IconClose size={16} />
          </button>
        </header>
        <div className="form-grid">
          <label className="form-field form-wide">
            <span>Goal</span>
            <input
              className="input"
              autoFocus
              value={title}
              onChange={(e) => setTitle(e.target.value)}
              placeholder="Fix the login redirect loop"
              data-testid="new-task-title"
            />
          </label>
          <label className="form-field">
            <span>For agent</span>
            <input
              className="input"
              value={to}
              onChange={(e) => setTo(e.target.value)}
              placeholder="laptop-codex, or * for anyone"
              data-testid="new-task-to"
            />
          </label>
          <label className="form-field">
            <span>Stream</span>
            <input
              className="input"
              list="desk-streams"
              value={stream}
              onChange={(e) => setStream(e.target.value)}
              placeholder="project/webapp"
              data-testid="new-task-stream"
            />
            <datalist id="desk-streams">
              {streams.map((s) => (
                <option key={s} value={s} />
              ))}
            </datalist>
          </label>
          <label className="form-field">
            <span>Correlation id</span>
            <input
              className="input mono"
              value={correlation}
              onChange={(e) => setCid(e.target.value)}
              placeholder="task_…"
              data-testid="new-task-cid"
            />
          </label>
          <label className="form-field">
            <span>Branch · base commit</span>
            <div className="field-row">
              <input
                className="input"
                value={branch}
                onChange={(e) => setBranch(e.target.value)}
                placeholder="main"
                data-testid="new-task-branch"
              />
              <input
                className="input mono"
                value={base}
                onChange={(e) => setBase(e.target.value)}
                placeholder="3f2a9c1"
                data-testid="new-task-base"
              />
            </div>
          </label>
          <label className="form-field form-wide">
            <span>Depends on (correlation ids; it waits until they are applied)</span>
            <input
              className="input mono"
              value={deps}
              onChange={(e) => setDeps(e.target.value)}
              placeholder="task_schema_migration, task_api_client"
              data-testid="new-task-deps"
            />
          </label>
          <label className="form-field form-wide">
            <span>Work order</span>
            <textarea
              className="input desk-textarea"
              rows={5}
              value={details}
              onChange={(e) => setDetails(e.target.value)}
              placeholder="Definition of done, tests to run, files involved…"
              data-testid="new-task-body"
            />
          </label>
        </div>
        {error ? (
          <div className="callout callout-bad form-error" role="alert" data-testid="new-task-error">
            <IconAlert size={14} /> {error}
          </div>
        ) : null}
        <footer className="dialog-foot">
          <button type="button" className="btn btn-ghost btn-sm" onClick={onClose}>
            Cancel
          </button>
          <button
            type="submit"
            className="btn btn-primary btn-sm"
            disabled={busy || !ready}
            data-testid="new-task-submit"
          >
            File task.request
          </button>
        </footer>
      </form>
    </div>
  );
}
