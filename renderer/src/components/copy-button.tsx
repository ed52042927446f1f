// A small button that copies a value and says so, briefly, in place.

import { useState, type ReactElement } from 'react';

import { IconCheck, IconCopy } from './icons.js';
import { useToast } from './toast.js';

export function CopyButton({
  text,
  label,
  compact = false,
  testId,
}: {
  text: string;
  label: string;
  compact?: boolean;
  testId?: string;
}): ReactElement {
  const toast = useToast();
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className={compact ? 'btn btn-ghost btn-icon' : 'btn btn-secondary btn-sm'}
      title={`Copy ${label}`}
      aria-label={`Copy ${label}`}
      data-testid={testId}
      onClick={() =>
        void toast.copy(text, label).then((ok) => {
          if (!ok) return;
          setDone(true);
          setTimeout(() => setDone(false), 1_500);
        })
      }
    >
      {done ? <IconCheck size={14} /> : <IconCopy size={14} />}
      {compact ? null : <span>{done ? 'Copied' : 'Copy'}</span>}
    </button>
  );
}
