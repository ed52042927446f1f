// The desk bar above the task list: the agent name the human writes under (editable), the
// notification opt-in, and the "New task" button.

import { useMemo, useState, type ReactElement } from 'react';

import { useDashboard, useStore } from '../hooks/useDashboard.js';
import { desk, useDesk } from '../hooks/useDesk.js';
import { NewTaskDialog } from './new-task-dialog.js';

interface Props {
  onCreated(correlationId: string): void;
}

const canNotify = (): boolean => typeof Notification !== 'undefined';

export function DeskBar({ onCreated }: Props): ReactElement {
  const { events } = useDashboard();
  const inTray = useStore().bridge !== undefined; // the tray notifies by itself (PALACE_TRAY_AGENTS)
  const { agent, notify } = useDesk();
  const [name, setName] = useState(agent);
  const [open, setOpen] = useState(false);
  const streams = useMemo(() => {
    const seen = new Map<string, number>();
    for (const e of events) if (e.type === 'task.request') seen.set(e.stream, (seen.get(e.stream) ?? 0) + 1);
    return [...seen.entries()].sort((a, b) => b[1] - a[1]).map(([s]) => s);
  }, [events]);

  const toggleNotify = async (on: boolean): Promise<void> => {
    if (on && canNotify() && Notification.permission !== 'granted') {
      const answer = await Notification.requestPermission();
      if (answer !== 'granted') return desk.setNotify(false);
    }
    desk.setNotify(on);
  };

  return (
    <div className="desk-bar" data-testid="desk-bar">
      <label className="desk-name">
        <span className="muted small">Writing as</span>
        <input
          className="input input-sm mono"
          value={name}
          onChange={(e) => setName(e.target.value)}
          onBlur={() => desk.setAgent(name)}
          onKeyDown={(e) => e.key === 'Enter' && (e.target as HTMLInputElement).blur()}
          aria-label="Agent name the dashboard writes under"
          data-testid="desk-agent"
        />
      </label>
      {canNotify() && !inTray ? (
        <label
          className="desk-notify small"
          title="A notification when a task is addressed to you or a patch lands on a task you opened"
        >
          <input
            type="checkbox"
            checked={notify}
            onChange={(e) => void toggleNotify(e.target.checked)}
            data-testid="desk-notify"
          />
          Notify me
        </label>
      ) : null}
      <button
        type="button"
        className="btn btn-primary btn-sm"
        onClick={() => setOpen(true)}
        data-testid="new-task"
      >
        New task
      </button>
      {open ? (
        <NewTaskDialog
          streams={streams}
          onClose={() => setOpen(false)}
          onCreated={(id) => {
            setOpen(false);
            onCreated(id);
          }}
        />
      ) : null}
    </div>
  );
}
