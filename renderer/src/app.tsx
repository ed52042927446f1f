// The dashboard shell: token gate, sidebar, header with liveness, the down banner, the current
// view, and the keyboard layer (command palette, shortcuts, go-to keys).

import { useCallback, useEffect, useMemo, useRef, useState, type ReactElement } from 'react';

import { clientConfigs } from '../../hub/src/client-config.js';
import type { ViewId } from '../../main/ipc-contract.js';
import { CommandPalette } from './components/command-palette.js';
import { ConnectionPill } from './components/connection-pill.js';
import { DeskNotifier } from './components/desk-notifier.js';
import { DownBanner } from './components/down-banner.js';
import { IconLogo, IconRefresh } from './components/icons.js';
import { ShortcutsDialog } from './components/shortcuts-dialog.js';
import { Sidebar, VIEWS } from './components/sidebar.js';
import { ToastProvider, useToast } from './components/toast.js';
import { TokenGate } from './components/token-gate.js';
import { ViewBoundary } from './components/view-boundary.js';
import { StoreContext, useDashboard, useStore } from './hooks/useDashboard.js';
import { useHotkeys, type Hotkey } from './hooks/useHotkeys.js';
import { useRoute } from './hooks/useRoute.js';
import type { Command } from './lib/commands.js';
import { NO_FILTERS, type EventFilters } from './lib/event-filters.js';
import type { DashboardStore } from './state/dashboard-store.js';
import { EventsView } from './views/events-view.js';
import { MemoryView } from './views/memory-view.js';
import { PeersView } from './views/peers-view.js';
import { SetupView } from './views/setup-view.js';
import { StatusView } from './views/status-view.js';
import { TasksView } from './views/tasks-view.js';

const TITLES: Record<ViewId, [string, string]> = {
  events: ['Events', 'The coordination log, live, newest first'],
  tasks: ['Tasks', 'One row per correlation id, from request to applied'],
  peers: ['Peers', 'Hubs this one syncs its log with'],
  memory: ['Memory', 'Search drawers, browse wings and rooms, read facts over time'],
  setup: ['Tokens & setup', 'Everything a new agent needs to connect'],
  status: ['Status', 'How the hub is doing'],
};

function useCommands(
  go: (v: ViewId) => void,
  actions: { palette(): void; shortcuts(): void; reveal(): void; focusAgent(): void; clearFilters(): void },
): Command[] {
  const store = useStore();
  const snap = useDashboard();
  const toast = useToast();
  return useMemo(() => {
    const bridge = store.bridge;
    const token = snap.token;
    const palace = snap.status.state === 'ready' ? snap.status.data.palace : undefined;
    const palacePath = palace?.path;
    const configs = clientConfigs({
      stdio: palace?.stdio_command,
      url: snap.baseUrl,
      token: token ?? undefined,
      needsToken: Boolean(token),
      ...(palacePath ? { palacePath } : {}),
    });
    const names = { 'claude-code': 'Claude Code', codex: 'Codex', cursor: 'Cursor' } as const;
    const list: Command[] = [
      ...VIEWS.map((v, i) => ({
        id: `go-${v.id}`,
        title: `Go to ${v.label}`,
        group: 'Go to' as const,
        keys: `g ${v.go}`,
        keywords: `${i + 1} view`,
        run: () => go(v.id),
      })),
      {
        id: 'filter-agent',
        title: 'Filter events by agent…',
        group: 'Actions',
        keys: '/',
        keywords: 'search find',
        run: actions.focusAgent,
      },
      { id: 'clear-filters', title: 'Clear event filters', group: 'Actions', run: actions.clearFilters },
      {
        id: 'refresh',
        title: 'Refresh status and peers',
        group: 'Actions',
        keywords: 'reload',
        run: () => void (store.refreshStatus(), store.refreshPeers()),
      },
      { id: 'reconnect', title: 'Reconnect to the hub', group: 'Actions', run: () => void store.connect() },
      ...(token
        ? [
            {
              id: 'reveal-token',
              title: 'Reveal or hide the token',
              group: 'Actions' as const,
              run: actions.reveal,
            },
          ]
        : []),
      ...(token && !bridge
        ? [
            {
              id: 'forget-token',
              title: 'Forget the token in this tab',
              group: 'Actions' as const,
              keywords: 'sign out logout',
              run: () => store.forgetToken(),
            },
          ]
        : []),
      {
        id: 'shortcuts',
        title: 'Show keyboard shortcuts',
        group: 'Actions',
        keys: '?',
        keywords: 'help keys',
        run: actions.shortcuts,
      },
      {
        id: 'copy-address',
        title: 'Copy the MCP address',
        group: 'Copy',
        keywords: 'url hub',
        run: () => void toast.copy(`${snap.baseUrl}/mcp`, 'MCP address'),
      },
      ...(token
        ? [
            {
              id: 'copy-token',
              title: 'Copy the token',
              group: 'Copy' as const,
              keywords: 'bearer secret',
              run: () => void toast.copy(token, 'token'),
            },
          ]
        : []),
      ...configs.map((c) => ({
        id: `copy-${c.client}-${c.transport}`,
        title: `Copy ${names[c.client]} config (${c.transport})`,
        group: 'Copy' as const,
        keywords: 'client setup mcp',
        run: () => void toast.copy(c.text, `${names[c.client]} ${c.transport} config`),
      })),
    ];
    if (bridge)
      list.push(
        {
          id: 'hub-restart',
          title: 'Restart the hub',
          group: 'Desktop',
          run: () => void bridge.invoke('hub:restart'),
        },
        {
          id: 'hub-stop',
          title: 'Stop the hub',
          group: 'Desktop',
          run: () => void bridge.invoke('hub:stop'),
        },
        {
          id: 'hub-start',
          title: 'Start the hub',
          group: 'Desktop',
          run: () => void bridge.invoke('hub:start'),
        },
        {
          id: 'open-palace',
          title: 'Open the palace folder',
          group: 'Desktop',
          run: () => void bridge.invoke('shell:open-palace'),
        },
        {
          id: 'open-logs',
          title: 'Open the hub logs',
          group: 'Desktop',
          run: () => void bridge.invoke('shell:open-logs'),
        },
      );
    return list;
  }, [store, snap.token, snap.baseUrl, snap.status, toast, go, actions]);
}

function Shell(): ReactElement {
  const store = useStore();
  const snap = useDashboard();
  const [view, go] = useRoute();
  const [palette, setPalette] = useState(false);
  const [shortcuts, setShortcuts] = useState(false);
  const [filters, setFilters] = useState<EventFilters>(NO_FILTERS);
  const [eventId, setEventId] = useState<string | null>(null);
  const [taskId, setTaskId] = useState<string | null>(null);
  const [revealed, setRevealed] = useState(false);
  const agentRef = useRef<HTMLInputElement>(null);
  const openTask = useCallback((id: string) => (go('tasks'), setTaskId(id)), [go]);

  useEffect(() => store.bridge?.on('app:navigate', (v) => go(v)), [store, go]);

  const actions = useMemo(
    () => ({
      palette: () => setPalette(true),
      shortcuts: () => setShortcuts(true),
      reveal: () => {
        go('setup');
        setRevealed((r) => !r);
      },
      focusAgent: () => {
        go('events');
        setTimeout(() => agentRef.current?.focus(), 0);
      },
      clearFilters: () => setFilters(NO_FILTERS),
    }),
    [go],
  );
  const commands = useCommands(go, actions);
  const hotkeys: Hotkey[] = [
    { keys: 'mod+k', global: true, run: () => setPalette((p) => !p) },
    { keys: '?', run: () => setShortcuts(true) },
    ...VIEWS.flatMap((v, i) => [
      { keys: `g ${v.go}`, run: () => go(v.id) },
      { keys: String(i + 1), run: () => go(v.id) },
    ]),
  ];
  useHotkeys(hotkeys, !palette && !shortcuts && snap.phase !== 'needs-token');

  const counts = useMemo(() => {
    // In flight and stalled: the hub's true counts.
    const inFlight = (snap.tasks.counts?.active ?? 0) - (snap.tasks.counts?.by_status.none ?? 0);
    const stalled = snap.tasks.stalled ?? 0;
    return {
      tasks: stalled > 0 ? { n: stalled, warn: true, title: `${stalled} stalled` } : { n: inFlight, title: `${inFlight} in flight` },
    };
  }, [snap.tasks]);

  if (snap.phase === 'needs-token') return <TokenGate />;
  if (snap.phase === 'checking' && snap.lastReadAt === null)
    return (
      <div className="splash">
        <IconLogo size={32} />
        <span className="muted">Connecting to {snap.baseUrl}…</span>
      </div>
    );

  const [title, subtitle] = TITLES[view];
  const showEvents = (correlation: string): void => {
    setFilters({ ...NO_FILTERS, correlation });
    setEventId(null);
    go('events');
  };
  return (
    <div className={`app ${snap.phase === 'down' ? 'app-down' : ''}`}>
      <Sidebar
        view={view}
        onGo={go}
        counts={counts}
        onPalette={() => setPalette(true)}
        onShortcuts={() => setShortcuts(true)}
      />
      <main className="main">
        <header className="header">
          <div>
            <h1 className="title" data-testid="view-title">
              {title}
            </h1>
            <p className="subtitle">{subtitle}</p>
          </div>
          <div className="header-right">
            {view === 'status' || view === 'peers' ? (
              <button
                type="button"
                className="btn btn-ghost btn-sm"
                onClick={() => void (store.refreshStatus(), store.refreshPeers())}
                title="Refresh"
              >
                <IconRefresh size={14} /> Refresh
              </button>
            ) : null}
            <ConnectionPill />
          </div>
        </header>
        <DownBanner />
        <ViewBoundary key={view} name={TITLES[view][0]}>
          {view === 'events' ? (
            <EventsView
              filters={filters}
              onFilters={setFilters}
              selectedId={eventId}
              onSelect={setEventId}
              agentFilterRef={agentRef}
            />
          ) : null}
          {view === 'tasks' ? (
            <TasksView selectedId={taskId} onSelect={setTaskId} onShowEvents={showEvents} />
          ) : null}
          {view === 'peers' ? <PeersView /> : null}
          {view === 'memory' ? <MemoryView /> : null}
          {view === 'setup' ? <SetupView revealed={revealed} onReveal={setRevealed} /> : null}
          {view === 'status' ? <StatusView /> : null}
        </ViewBoundary>
      </main>
      <DeskNotifier onOpenTask={openTask} />
      {palette ? <CommandPalette commands={commands} onClose={() => setPalette(false)} /> : null}
      {shortcuts ? <ShortcutsDialog onClose={() => setShortcuts(false)} /> : null}
    </div>
  );
}

export function App({ store }: { store: DashboardStore }): ReactElement {
  return (
    <StoreContext.Provider value={store}>
      <ToastProvider>
        <Shell />
      </ToastProvider>
    </StoreContext.Provider>
  );
}
