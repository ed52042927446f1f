// A task or event status as a quiet coloured label with a dot; the colour is never the only cue.

import type { ReactElement } from 'react';

export function StatusBadge({
  status,
  title,
}: {
  status: string | null | undefined;
  title?: string;
}): ReactElement | null {
  if (!status) return null;
  return (
    <span className={`badge badge-${status}`} title={title ?? status}>
      <span className="badge-dot" aria-hidden="true" />
      {status}
    </span>
  );
}
