// The navigation column: views with their shortcuts and live counts, the hub address, and the
// ways into the command palette and the shortcut list.

import type { ReactElement } from 'react';

import type { ViewId } from '../../../main/ipc-contract.js';
import { useDashboard } from '../hooks/useDashboard.js';
import {
  IconCommand,
  IconEvents,
  IconGauge,
  IconKey,
  IconLogo,
  IconMemory,
  IconPeers,
  IconTasks,
} from './icons.js';

export const VIEWS: {
  id: ViewId;
  label: string;
  icon: (p: { size?: number }) => ReactElement;
  go: string;
}[] = [
  { id: 'events', label: 'Events', icon: IconEvents, go: 'e' },
  { id: 'tasks', label: 'Tasks', icon: IconTasks, go: 't' },
  { id: 'peers', label: 'Peers', icon: IconPeers, go: 'p' },
  { id: 'memory', label: 'Memory', icon: IconMemory, go: 'm' },
  { id: 'setup', label: 'Tokens & setup', icon: IconKey, go: 's' },
  { id: 'status', label: 'Status', icon: IconGauge, go: 'h' },
];

interface Props {
  view: ViewId;
  onGo(view: ViewId): void;
  counts: Partial<Record<ViewId, { n: number; warn?: boolean; title?: string }>>;
  onPalette(): void;
  onShortcuts(): void;
}

export function Sidebar({ view, onGo, counts, onPalette, onShortcuts }: Props): ReactElement {
  const { baseUrl, status } = useDashboard();
  const mod = /mac/i.test(navigator.platform) ? '⌘' : 'Ctrl';
  const version = status.state === 'ready' ? status.data.server?.version : undefined;
  return (
    <nav className="sidebar" aria-label="Views">
      <div className="brand">
        <IconLogo />
        <span className="brand-name">palace</span>
        {version ? <span className="brand-version">{version}</span> : null}
      </div>
      <ul className="nav">
        {VIEWS.map((v, i) => {
          const count = counts[v.id];
          return (
            <li key={v.id}>
              <button
                type="button"
                className={`nav-item ${view === v.id ? 'nav-item-active' : ''}`}
                aria-current={view === v.id ? 'page' : undefined}
                onClick={() => onGo(v.id)}
                title={`${v.label} (g ${v.go} or ${i + 1})`}
                data-testid={`nav-${v.id}`}
              >
                <v.icon size={16} />
                <span className="nav-label">{v.label}</span>
                {count && count.n > 0 ? (
                  <span className={`nav-count ${count.warn ? 'nav-count-warn' : ''}`} title={count.title}>
                    {count.n}
                  </span>
                ) : null}
              </button>
            </li>
          );
        })}
      </ul>
      <div className="sidebar-foot">
        <button
          type="button"
          className="nav-item nav-item-quiet"
          onClick={onPalette}
          data-testid="open-palette"
        >
          <IconCommand size={15} />
          <span className="nav-label">Commands</span>
          <span className="keys">
            <kbd>{mod}</kbd>
            <kbd>K</kbd>
          </span>
        </button>
        <button type="button" className="nav-item nav-item-quiet" onClick={onShortcuts}>
          <span className="nav-glyph">?</span>
          <span className="nav-label">Shortcuts</span>
        </button>
        <div className="hub-address mono" title={baseUrl}>
          {baseUrl.replace(/^https?:\/\//, '')}
        </div>
      </div>
    </nav>
  );
}
