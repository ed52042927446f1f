// The side panel every detail view shares: a titled header with a close button (Esc) over a scrolling body.

import type { ReactElement, ReactNode } from 'react';

import { IconClose } from './icons.js';

interface Props {
  /** Accessible name of the panel, e.g. "Event detail". */
  label: string;
  testId: string;
  /** What the panel shows, rendered in the header. */
  title: ReactNode;
  /** Accessible name of the close button. */
  closeLabel?: string;
  onClose(): void;
  children: ReactNode;
}

export function DetailPanel({
  label,
  testId,
  title,
  closeLabel = 'Close detail (Esc)',
  onClose,
  children,
}: Props): ReactElement {
  return (
    <aside className="detail" aria-label={label} data-testid={testId}>
      <header className="detail-head">
        <div className="detail-title">{title}</div>
        <button
          type="button"
          className="btn btn-ghost btn-icon"
          onClick={onClose}
          aria-label={closeLabel}
          title="Close (Esc)"
        >
          <IconClose size={16} />
        </button>
      </header>
      <div className="detail-body">{children}</div>
    </aside>
  );
}
