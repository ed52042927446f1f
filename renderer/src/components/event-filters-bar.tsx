// The Events view's filter row: agent, type, status, stream and correlation, with suggestions from
// the events at hand. Filtering is instant and local, so it keeps working while the hub is down.

import { useMemo, type ReactElement, type RefObject } from 'react';

import { EVENT_STATUSES, type LogEvent } from '../../../hub/src/core/types.js';
import { valuesOf } from '../state/event-log.js';
import { activeFilterCount, NO_FILTERS, type EventFilters } from '../lib/event-filters.js';
import { IconClose, IconFilter } from './icons.js';

interface Props {
  events: readonly LogEvent[];
  filters: EventFilters;
  onChange(next: EventFilters): void;
  agentRef?: RefObject<HTMLInputElement | null>;
}

export function EventFiltersBar({ events, filters, onChange, agentRef }: Props): ReactElement {
  const suggestions = useMemo(
    () => ({
      agent: valuesOf(events, (e) => [e.from_agent, e.to_agent === '*' ? null : e.to_agent]).slice(0, 50),
      type: valuesOf(events, (e) => [e.type]).slice(0, 50),
      stream: valuesOf(events, (e) => [e.stream]).slice(0, 50),
      correlation: valuesOf(events, (e) => [e.correlation_id]).slice(0, 100),
    }),
    [events],
  );
  const set = (key: keyof EventFilters) => (value: string) => onChange({ ...filters, [key]: value });
  const field = (
    key: 'agent' | 'type' | 'stream' | 'correlation',
    label: string,
    ref?: RefObject<HTMLInputElement | null>,
  ) => (
    <label className="filter">
      <span className="sr-only">{label}</span>
      <input
        ref={ref}
        className={`input input-sm ${filters[key].trim() ? 'input-active' : ''}`}
        value={filters[key]}
        placeholder={label}
        list={`dl-${key}`}
        spellCheck={false}
        data-testid={`filter-${key}`}
        onChange={(e) => set(key)(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') (e.target as HTMLInputElement).blur();
        }}
      />
      <datalist id={`dl-${key}`}>
        {suggestions[key].map((v) => (
          <option key={v} value={v} />
        ))}
      </datalist>
    </label>
  );
  const count = activeFilterCount(filters);
  return (
    <div className="filters" role="search" aria-label="Filter events">
      <IconFilter size={15} className="filters-icon" />
      {field('agent', 'Agent', agentRef)}
      {field('type', 'Type')}
      <label className="filter filter-status">
        <span className="sr-only">Status</span>
        <select
          className={`input input-sm ${filters.status ? 'input-active' : ''}`}
          value={filters.status}
          data-testid="filter-status"
          onChange={(e) => set('status')(e.target.value)}
        >
          <option value="">Any status</option>
          {EVENT_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      {field('stream', 'Stream or room')}
      {field('correlation', 'Correlation')}
      {count > 0 ? (
        <button
          type="button"
          className="btn btn-ghost btn-sm filter-clear"
          onClick={() => onChange(NO_FILTERS)}
        >
          <IconClose size={13} /> Clear{count > 1 ? ` ${count}` : ''}
        </button>
      ) : null}
    </div>
  );
}
