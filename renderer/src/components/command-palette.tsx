// Ctrl/Cmd+K: every view and action by name. Arrow keys move, Enter runs, Esc closes.

import { useEffect, useMemo, useRef, useState, type ReactElement } from 'react';

import { searchCommands, type Command } from '../lib/commands.js';
import { IconSearch } from './icons.js';

export function CommandPalette({
  commands,
  onClose,
}: {
  commands: readonly Command[];
  onClose(): void;
}): ReactElement {
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLUListElement>(null);
  const results = useMemo(() => searchCommands(commands, query), [commands, query]);
  const current = Math.min(active, Math.max(0, results.length - 1));

  useEffect(() => input.current?.focus(), []);
  useEffect(() => {
    list.current?.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest' });
  }, [current]);

  const run = (c: Command | undefined): void => {
    if (!c) return;
    onClose();
    c.run();
  };
  return (
    <div className="overlay" onMouseDown={onClose}>
      <div
        className="palette"
        role="dialog"
        aria-label="Command palette"
        aria-modal="true"
        onMouseDown={(e) => e.stopPropagation()}
        data-testid="palette"
      >
        <div className="palette-input">
          <IconSearch size={16} />
          <input
            ref={input}
            value={query}
            placeholder="Type a command or a view…"
            onChange={(e) => {
              setQuery(e.target.value);
              setActive(0);
            }}
            onKeyDown={(e) => {
              if (e.key === 'ArrowDown') {
                e.preventDefault();
                setActive((current + 1) % Math.max(1, results.length));
              } else if (e.key === 'ArrowUp') {
                e.preventDefault();
                setActive((current - 1 + results.length) % Math.max(1, results.length));
              } else if (e.key === 'Enter') {
                e.preventDefault();
                run(results[current]);
              } else if (e.key === 'Escape') {
                e.preventDefault();
                onClose();
              }
            }}
            aria-controls="palette-list"
            aria-activedescendant={results[current] ? `cmd-${results[current].id}` : undefined}
            data-testid="palette-input"
          />
          <kbd>esc</kbd>
        </div>
        <ul className="palette-list" id="palette-list" role="listbox" ref={list}>
          {results.length === 0 ? <li className="palette-empty">No command matches “{query}”.</li> : null}
          {results.map((c, i) => {
            const header = query === '' && c.group !== results[i - 1]?.group ? c.group : null;
            return [
              header ? (
                <li key={`g-${header}`} className="palette-group" role="presentation">
                  {header}
                </li>
              ) : null,
              <li
                key={c.id}
                id={`cmd-${c.id}`}
                role="option"
                aria-selected={i === current}
                className={`palette-item ${i === current ? 'palette-item-active' : ''}`}
                onMouseMove={() => setActive(i)}
                onClick={() => run(c)}
              >
                <span>{c.title}</span>
                {c.keys ? (
                  <span className="keys">
                    {c.keys.split(' ').map((k) => (
                      <kbd key={k}>{k}</kbd>
                    ))}
                  </span>
                ) : null}
              </li>,
            ];
          })}
        </ul>
      </div>
    </div>
  );
}
