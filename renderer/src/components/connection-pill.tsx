// The hub's liveness in one word, top right: Live, Live (polling), Reconnecting, or Hub down.

import type { ReactElement } from 'react';

import { useDashboard } from '../hooks/useDashboard.js';

export function ConnectionPill(): ReactElement {
  const { phase, feed } = useDashboard();
  let tone = 'idle';
  let label = 'Connecting…';
  let title = 'Connecting to the hub';
  if (phase === 'down') {
    tone = 'down';
    label = 'Hub down';
    title = 'The hub is not answering; showing the last data read';
  } else if (phase === 'connected' && feed === 'stream') {
    tone = 'live';
    label = 'Live';
    title = 'Events arrive as they are appended (Server-Sent Events)';
  } else if (phase === 'connected' && feed === 'poll') {
    tone = 'live';
    label = 'Live · polling';
    title = 'The hub has no stream slot free; events arrive by long-poll (palace_event_wait)';
  } else if (phase === 'connected') {
    tone = 'idle';
    label = 'Reconnecting…';
  }
  return (
    <span
      className={`pill pill-${tone}`}
      title={title}
      data-testid="connection"
      data-phase={phase}
      data-feed={feed}
    >
      <span className="pill-dot" aria-hidden="true" />
      {label}
    </span>
  );
}
