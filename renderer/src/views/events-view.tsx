// Events: the live log, newest first, with filters and the selected event's detail beside it.
// Older events page in from the hub (cursor: the oldest loaded event) on "load older".

import { useEffect, useMemo, useRef, useState, type ReactElement, type RefObject } from 'react';

import type { LogEvent } from '../../../hub/src/core/types.js';
import { EmptyState } from '../components/empty-state.js';
import { EventDetail } from '../components/event-detail.js';
import { EventFiltersBar } from '../components/event-filters-bar.js';
import { IconEvents } from '../components/icons.js';
import { StatusBadge } from '../components/status-badge.js';
import { useDashboard, useStore } from '../hooks/useDashboard.js';
import { useHotkeys } from '../hooks/useHotkeys.js';
import { activeFilterCount, matchesFilters, type EventFilters } from '../lib/event-filters.js';
import { firstLine, formatDateTime, formatEventTime, plural } from '../lib/format.js';
import { useNow } from '../hooks/useNow.js';
import { useAgents } from '../hooks/useAgents.js';
import { writerProof, type RegisteredAgent } from '../lib/identity.js';

/** Rows rendered at first; each "load older" adds this many. */
const ROWS_STEP = 400;

interface Props {
  filters: EventFilters;
  onFilters(next: EventFilters): void;
  selectedId: string | null;
  onSelect(id: string | null): void;
  agentFilterRef: RefObject<HTMLInputElement | null>;
}

function EventRow({
  event,
  selected,
  now,
  onSelect,
  agents,
}: {
  event: LogEvent;
  selected: boolean;
  now: number;
  onSelect(): void;
  /** Registered agents; null while identity is unused (nobody registered): no marks then. */
  agents: readonly RegisteredAgent[] | null;
}): ReactElement {
  const unproven = agents !== null && writerProof(event, agents) === 'unproven';
  return (
    <tr
      className={selected ? 'row row-selected' : 'row'}
      onClick={onSelect}
      aria-selected={selected}
      data-testid="event-row"
      data-event-id={event.id}
      data-type={event.type}
    >
      <td className="col-time mono" title={formatDateTime(event.created_at)}>
        {formatEventTime(event.created_at, now)}
      </td>
      <td className="col-type mono">{event.type}</td>
      <td className="col-route">
        <span className="agent">{event.from_agent}</span>
        {unproven ? (
          <span className="tag tag-unproven" data-testid="unproven" title="written under an unregistered name: the hub did not prove who wrote it">
            unproven
          </span>
        ) : null}
        <span className="route-arrow">→</span>
        <span className="agent">{event.to_agent ?? '—'}</span>
      </td>
      <td className="col-status">
        <StatusBadge status={event.status} />
      </td>
      <td className="col-corr mono" title={event.correlation_id ?? undefined}>
        {event.correlation_id ?? ''}
      </td>
      <td className="col-body">
        {event.artifact_ids.length > 0 ? (
          <span className="tag">{plural(event.artifact_ids.length, 'artifact')}</span>
        ) : null}
        <span className="muted">{firstLine(event.body)}</span>
      </td>
    </tr>
  );
}

export function EventsView({
  filters,
  onFilters,
  selectedId,
  onSelect,
  agentFilterRef,
}: Props): ReactElement {
  const store = useStore();
  const { events, eventsLoaded, phase, eventsHasOlder, eventsLoadingOlder, status } = useDashboard();
  const identity = useAgents();
  const registered = identity && identity.agents.length > 0 ? identity.agents : null;
  const [maxRows, setMaxRows] = useState(ROWS_STEP);
  const logTotal = status.state === 'ready' ? status.data.logstream?.events : undefined;
  const listRef = useRef<HTMLDivElement>(null);
  const now = useNow(60_000);
  const matching = useMemo(() => {
    const out: LogEvent[] = [];
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i] as LogEvent;
      if (matchesFilters(e, filters)) out.push(e);
    }
    return out;
  }, [events, filters]);
  const shown = matching.slice(0, maxRows);
  const canShowOlder = matching.length > maxRows || eventsHasOlder;
  const showOlder = (): void => {
    if (matching.length <= maxRows + ROWS_STEP && eventsHasOlder) void store.loadOlderEvents();
    setMaxRows((n) => n + ROWS_STEP);
  };
  const selected = selectedId ? (events.find((e) => e.id === selectedId) ?? null) : null;

  const move = (delta: number): void => {
    if (shown.length === 0) return;
    const at = selectedId ? shown.findIndex((e) => e.id === selectedId) : -1;
    const next = shown[Math.max(0, Math.min(shown.length - 1, at < 0 ? 0 : at + delta))];
    if (next) onSelect(next.id);
  };
  useHotkeys([
    { keys: 'j', run: () => move(1) },
    { keys: 'ArrowDown', run: () => move(1) },
    { keys: 'k', run: () => move(-1) },
    { keys: 'ArrowUp', run: () => move(-1) },
    { keys: 'Escape', run: () => onSelect(null) },
    { keys: '/', run: () => agentFilterRef.current?.focus() },
  ]);
  useEffect(() => {
    if (!selectedId) return;
    listRef.current
      ?.querySelector(`[data-event-id="${CSS.escape(selectedId)}"]`)
      ?.scrollIntoView({ block: 'nearest' });
  }, [selectedId]);

  const filtered = activeFilterCount(filters) > 0;
  return (
    <div className="view view-split">
      <div className="pane">
        <EventFiltersBar events={events} filters={filters} onChange={onFilters} agentRef={agentFilterRef} />
        <div className="list-meta">
          <span data-testid="event-count">
            {filtered
              ? `${plural(matching.length, 'event')} match of ${events.length.toLocaleString()}`
              : plural(events.length, 'event')}
            {logTotal !== undefined && logTotal > events.length ? ` loaded of ${logTotal.toLocaleString()} in the log` : ''}
          </span>
          {matching.length > maxRows ? (
            <span className="muted"> · showing the newest {maxRows}</span>
          ) : null}
        </div>
        <div className="table-wrap" ref={listRef}>
          {shown.length > 0 ? (
            <table
              className={`table table-events ${selected ? 'table-split' : ''}`}
              data-testid="event-table"
            >
              <thead>
                <tr>
                  <th className="col-time">Time</th>
                  <th className="col-type">Type</th>
                  <th className="col-route">From → to</th>
                  <th className="col-status">Status</th>
                  <th className="col-corr">Correlation</th>
                  <th className="col-body">Body</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((e) => (
                  <EventRow
                    key={e.id}
                    event={e}
                    now={now}
                    selected={e.id === selectedId}
                    onSelect={() => onSelect(e.id === selectedId ? null : e.id)}
                    agents={registered}
                  />
                ))}
              </tbody>
              {canShowOlder ? (
                <tfoot>
                  <tr>
                    <td colSpan={6}>
                      <button
                        type="button"
                        className="btn btn-secondary btn-sm"
                        onClick={showOlder}
                        disabled={eventsLoadingOlder}
                        data-testid="events-older"
                      >
                        {eventsLoadingOlder ? 'Loading…' : 'Load older events'}
                      </button>
                    </td>
                  </tr>
                </tfoot>
              ) : null}
            </table>
          ) : eventsLoaded || phase === 'down' ? (
            <EmptyState
              icon={<IconEvents size={28} />}
              title={filtered ? 'No event matches these filters' : 'No events yet'}
              testId="events-empty"
            >
              {filtered
                ? 'Clear a filter to see more.'
                : 'Events appear here the moment an agent appends one: a delegation, a patch, an acknowledgement.'}
            </EmptyState>
          ) : (
            <div className="loading">Reading the log…</div>
          )}
        </div>
      </div>
      {selected ? (
        <EventDetail
          event={selected}
          onClose={() => onSelect(null)}
          onFilterCorrelation={(id) => onFilters({ ...filters, correlation: id })}
        />
      ) : null}
    </div>
  );
}
