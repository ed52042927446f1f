// Knowledge-graph facts about one entity over time: each triple with its validity window, current
// facts first, through palace_kg_query (optionally as of a date). Before a query it lists the
// entities, most connected first, paged from the hub (palace_graph_stats), each one click away.

import { useEffect, useState, type FormEvent, type ReactElement } from 'react';

import { useStore } from '../hooks/useDashboard.js';
import { formatWhen } from '../lib/format.js';
import type { KgFact } from '../state/hub-types.js';
import { EmptyState } from './empty-state.js';
import { SearchField } from './search-field.js';

interface KgEntity {
  entity: string;
  name: string;
  type: string;
  facts: number;
}

const ENTITY_PAGE = 40;
/** The hub's bound on palace_graph_stats' limit. */
const ENTITY_MAX = 200;

/** Entities, most connected first, and the graph's totals; `more()` asks the hub for a longer list. */
function useEntities(available: boolean): { entities: KgEntity[] | null; totals: { entities: number; triples: number } | null; more: (() => void) | null } {
  const store = useStore();
  const [limit, setLimit] = useState(ENTITY_PAGE);
  const [entities, setEntities] = useState<KgEntity[] | null>(null);
  const [totals, setTotals] = useState<{ entities: number; triples: number } | null>(null);
  useEffect(() => {
    if (!available) return;
    let live = true;
    store.client
      .call('palace_graph_stats', { limit })
      .then(
        (r) => {
          if (!live) return;
          setEntities(r.kg?.top_entities ?? []);
          setTotals(r.kg?.stats ? { entities: r.kg.stats.entities, triples: r.kg.stats.triples } : null);
        },
        () => live && setEntities([]),
      );
    return () => {
      live = false;
    };
  }, [store, available, limit]);
  const canMore = entities !== null && totals !== null && entities.length < Math.min(totals.entities, ENTITY_MAX) && entities.length >= limit;
  return { entities, totals, more: canMore ? () => setLimit((n) => Math.min(ENTITY_MAX, n + ENTITY_PAGE)) : null };
}

export function KgPanel({ available }: { available: boolean }): ReactElement {
  const store = useStore();
  const [entity, setEntity] = useState('');
  const [asOf, setAsOf] = useState('');
  const [facts, setFacts] = useState<KgFact[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const { entities, totals, more } = useEntities(available);

  const run = (e?: FormEvent, name = entity): void => {
    e?.preventDefault();
    if (!name.trim()) return;
    setBusy(true);
    setError(null);
    store.client
      .call('palace_kg_query', {
        entity: name.trim(),
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
      {entities !== null ? (
        <div data-testid="kg-entities">
          <h3 className="section-title">
            Entities, most connected first{' '}
            {totals ? (
              <span className="muted small">
                · {totals.entities.toLocaleString('en')} entities, {totals.triples.toLocaleString('en')} facts
              </span>
            ) : null}
          </h3>
          {entities.length === 0 ? (
            <p className="muted">No facts yet. Agents add them with <code>palace_kg_add</code>.</p>
          ) : (
            <div className="kg-entities">
              {entities.map((en) => (
                <button
                  type="button"
                  key={en.entity}
                  className={`chip ${entity === en.name ? 'chip-active' : ''}`}
                  onClick={() => (setEntity(en.name), run(undefined, en.name))}
                  title={`${en.type}: ${en.facts} facts`}
                >
                  {en.name} <span className="chip-count">{en.facts}</span>
                </button>
              ))}
              {more ? (
                <button type="button" className="btn btn-sm" onClick={more} data-testid="kg-more">
                  Show more
                </button>
              ) : null}
            </div>
          )}
        </div>
      ) : null}
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
