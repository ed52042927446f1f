// Knowledge-graph facts about one entity over time: each triple with its validity window, current
// facts first, through palace_kg_query (optionally as of a date).

import { useState, type FormEvent, type ReactElement } from 'react';

import { useStore } from '../hooks/useDashboard.js';
import { formatWhen } from '../lib/format.js';
import type { KgFact } from '../state/hub-types.js';
import { EmptyState } from './empty-state.js';
import { SearchField } from './search-field.js';

export function KgPanel({ available }: { available: boolean }): ReactElement {
  const store = useStore();
  const [entity, setEntity] = useState('');
  const [asOf, setAsOf] = useState('');
  const [facts, setFacts] = useState<KgFact[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const run = (e: FormEvent): void => {
    e.preventDefault();
    if (!entity.trim()) return;
    setBusy(true);
    setError(null);
    store.client
      .callTool<{ facts?: KgFact[] }>('palace_kg_query', {
        entity: entity.trim(),
        ...(asOf ? { as_of: asOf } : {}),
      })
      .then(
        (r) =>
          setFacts(
            [...(r.facts ?? [])].sort(
              (a, b) =>
                Number(Boolean(b.current)) - Number(Boolean(a.current)) ||
                (a.valid_from ?? '').localeCompare(b.valid_from ?? ''),
            ),
          ),
        (err: Error) => setError(err.message),
      )
      .finally(() => setBusy(false));
  };

  if (!available)
    return (
      <EmptyState title="The knowledge graph is not available on this hub yet">
        This hub does not serve <code>palace_kg_query</code>.
      </EmptyState>
    );
  return (
    <div className="kg">
      <form className="search-row" onSubmit={run}>
        <SearchField
          placeholder="Entity, e.g. auth-service"
          value={entity}
          onChange={setEntity}
          testId="kg-entity"
        />
        <label className="filter">
          <span className="filter-label">As of</span>
          <input
            className="input input-sm"
            type="date"
            value={asOf}
            onChange={(e) => setAsOf(e.target.value)}
          />
        </label>
        <button type="submit" className="btn btn-primary" disabled={busy || !entity.trim()}>
          Show facts
        </button>
      </form>
      {error ? <p className="error-text">{error}</p> : null}
      {facts && facts.length === 0 ? <p className="muted">No facts about “{entity}”.</p> : null}
      {facts && facts.length > 0 ? (
        <table className="table">
          <thead>
            <tr>
              <th>Subject</th>
              <th>Predicate</th>
              <th>Object</th>
              <th>Valid</th>
            </tr>
          </thead>
          <tbody>
            {facts.map((f, i) => (
              <tr key={i} className={`row-static ${f.current === false ? 'row-past' : ''}`}>
                <td>{f.subject}</td>
                <td className="mono small">{f.predicate}</td>
                <td>{f.object}</td>
                <td className="small">
                  {f.valid_from ? formatWhen(f.valid_from) : 'always'} →{' '}
                  {f.valid_to ? formatWhen(f.valid_to) : <span className="ok-text">now</span>}
                  {f.current ? <span className="tag tag-current">current</span> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}
