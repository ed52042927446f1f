// Says plainly that the hub is down, since when, and that what is shown is the last data read.

import type { ReactElement } from 'react';

import { useDashboard, useStore } from '../hooks/useDashboard.js';
import { useNow } from '../hooks/useNow.js';
import { formatAgo, formatClock } from '../lib/format.js';
import { IconAlert } from './icons.js';

export function DownBanner(): ReactElement | null {
  const store = useStore();
  const { phase, baseUrl, lastReadAt, downSince, hubInfo } = useDashboard();
  const now = useNow(1_000);
  if (phase !== 'down') return null;
  const bridge = store.bridge;
  const read = lastReadAt ? new Date(lastReadAt).toISOString() : null;
  return (
    <div className="banner banner-down" role="alert" data-testid="hub-down">
      <IconAlert size={16} />
      <div className="banner-text">
        <strong>The hub is not answering</strong> at <span className="mono">{baseUrl}</span>
        {downSince ? (
          <span className="muted"> (since {formatClock(new Date(downSince).toISOString())})</span>
        ) : null}
        .{' '}
        {read ? (
          <>Showing what was read {formatAgo(read, now)}, read-only, until it is back.</>
        ) : (
          <>Nothing has been read from it yet.</>
        )}
        {hubInfo?.message ? <span className="muted"> Tray: {hubInfo.message}</span> : null}
      </div>
      {bridge ? (
        <button
          type="button"
          className="btn btn-secondary btn-sm"
          onClick={() => void bridge.invoke('hub:start')}
        >
          Start hub
        </button>
      ) : null}
    </div>
  );
}
