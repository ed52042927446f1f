// Browser notifications for the human at the desk (opt-in, /ui in a browser): a task addressed to
// the desk's agent, or a patch on a task it opened. Inside the tray app the tray notifies instead
// (main/task-watcher.ts, even with the window closed), so this stays quiet there.
// Events already held when the page loaded never notify; each event notifies once.

import { useEffect, useRef } from 'react';

import { useDashboard, useStore } from '../hooks/useDashboard.js';
import { useDesk } from '../hooks/useDesk.js';
import { deskNotices } from '../lib/desk.js';

export function DeskNotifier({ onOpenTask }: { onOpenTask(correlationId: string): void }): null {
  const { events, eventsLoaded } = useDashboard();
  const inTray = useStore().bridge !== undefined;
  const { agent, notify } = useDesk();
  const seen = useRef<Set<string> | null>(null);

  useEffect(() => {
    if (!eventsLoaded) return;
    if (seen.current === null) {
      seen.current = new Set(events.map((e) => e.id));
      return;
    }
    const known = seen.current;
    const fresh = events.filter((e) => !known.has(e.id));
    for (const e of fresh) known.add(e.id);
    if (
      inTray ||
      !notify ||
      fresh.length === 0 ||
      typeof Notification === 'undefined' ||
      Notification.permission !== 'granted'
    )
      return;
    const requested = new Set(
      events
        .filter((e) => e.type === 'task.request' && e.from_agent === agent && e.correlation_id)
        .map((e) => e.correlation_id as string),
    );
    for (const n of deskNotices(fresh, agent, requested)) {
      const shown = new Notification(n.title, { body: n.body, tag: n.event_id });
      shown.onclick = () => {
        globalThis.focus?.();
        if (n.correlation_id) onOpenTask(n.correlation_id);
      };
    }
  }, [events, eventsLoaded, agent, notify, inTray, onOpenTask]);
  return null;
}
