// `?`: every keyboard shortcut on one card.

import type { ReactElement } from 'react';

import { IconClose } from './icons.js';

const SHORTCUTS: [string, string][] = [
  ['mod K', 'Command palette'],
  ['?', 'This list'],
  ['g e', 'Events'],
  ['g t', 'Tasks'],
  ['g p', 'Peers'],
  ['g m', 'Memory'],
  ['g s', 'Tokens & setup'],
  ['g h', 'Status (hub)'],
  ['1 … 6', 'Views, in sidebar order'],
  ['j  k', 'Next / previous row'],
  ['esc', 'Close the detail or dialog'],
  ['/', 'Filter events by agent'],
];

export function ShortcutsDialog({ onClose }: { onClose(): void }): ReactElement {
  const mod = /mac/i.test(navigator.platform) ? '⌘' : 'Ctrl';
  return (
    <div className="overlay" onMouseDown={onClose}>
      <div
        className="dialog"
        role="dialog"
        aria-label="Keyboard shortcuts"
        aria-modal="true"
        onMouseDown={(e) => e.stopPropagation()}
        data-testid="shortcuts"
        onKeyDown={(e) => e.key === 'Escape' && onClose()}
      >
        <header className="dialog-head">
          <h2>Keyboard shortcuts</h2>
          <button
            type="button"
            className="btn btn-ghost btn-icon"
            onClick={onClose}
            aria-label="Close"
            autoFocus
          >
            <IconClose size={16} />
          </button>
        </header>
        <dl className="shortcuts">
          {SHORTCUTS.map(([keys, what]) => (
            <div className="shortcut" key={keys}>
              <dt>
                {keys.split(/\s+/).map((k, i) =>
                  k === '…' ? (
                    <span key={i} className="muted">
                      {' '}
                      …{' '}
                    </span>
                  ) : (
                    <kbd key={i}>{k === 'mod' ? mod : k}</kbd>
                  ),
                )}
              </dt>
              <dd>{what}</dd>
            </div>
          ))}
        </dl>
      </div>
    </div>
  );
}
