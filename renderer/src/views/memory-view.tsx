// Memory: search the palace with the same tool agents use (palace_search), browse wings and rooms,
// open a drawer with its provenance, and read knowledge-graph facts over time. On a hub without
// the memory tools it says so instead.

import { useEffect, useState, type FormEvent, type ReactElement } from 'react';

import { DrawerDetail } from '../components/drawer-detail.js';
import { EmptyState } from '../components/empty-state.js';
import { IconMemory } from '../components/icons.js';
import { KgPanel } from '../components/kg-panel.js';
import { SearchField } from '../components/search-field.js';
import { useDashboard, useStore } from '../hooks/useDashboard.js';
import type { SearchHit } from '../state/hub-types.js';

/** Wings with their drawer counts and, when the hub says, their rooms. */
type Taxonomy = Record<string, { total: number | null; rooms: Record<string, number> }>;

function useTaxonomy(tools: readonly string[]): Taxonomy | null {
  const store = useStore();
  const [taxonomy, setTaxonomy] = useState<Taxonomy | null>(null);
  useEffect(() => {
    let live = true;
    const load = async (): Promise<Taxonomy | null> => {
      if (tools.includes('palace_get_taxonomy')) {
        const r = await store.client.callTool<{ taxonomy?: Record<string, Record<string, number>> }>(
          'palace_get_taxonomy',
        );
        return Object.fromEntries(
          Object.entries(r.taxonomy ?? {}).map(([w, rooms]) => [
            w,
            { total: Object.values(rooms).reduce((a, b) => a + b, 0), rooms },
          ]),
        );
      }
      if (tools.includes('palace_list_wings')) {
        const r = await store.client.callTool<{ wings?: Record<string, number> }>('palace_list_wings');
        return Object.fromEntries(
          Object.entries(r.wings ?? {}).map(([w, n]) => [w, { total: n, rooms: {} }]),
        );
      }
      return null;
    };
    load().then(
      (t) => live && setTaxonomy(t),
      () => live && setTaxonomy(null),
    );
    return () => {
      live = false;
    };
  }, [store, tools]);
  return taxonomy;
}

export function MemoryView(): ReactElement {
  const store = useStore();
  const { tools } = useDashboard();
  const [tab, setTab] = useState<'search' | 'kg'>('search');
  const [query, setQuery] = useState('');
  const [wing, setWing] = useState('');
  const [room, setRoom] = useState('');
  const [hits, setHits] = useState<SearchHit[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [drawer, setDrawer] = useState<string | null>(null);
  const taxonomy = useTaxonomy(tools ?? []);

  if (tools === null)
    return <div className="view view-pad loading">Asking the hub which tools it serves…</div>;
  if (!tools.includes('palace_search'))
    return (
      <div className="view view-pad">
        <EmptyState
          icon={<IconMemory size={28} />}
          title="Memory is not available on this hub yet"
          testId="memory-unavailable"
        >
          This hub serves the coordination log but not the memory tools (<code>palace_search</code>, drawers,
          knowledge graph). Once it does, you can search the palace here, browse wings and rooms, and read
          facts over time.
        </EmptyState>
      </div>
    );

  const search = (e?: FormEvent): void => {
    e?.preventDefault();
    if (!query.trim()) return;
    setBusy(true);
    setError(null);
    store.client
      .callTool<{ results?: SearchHit[] }>('palace_search', {
        query: query.trim(),
        limit: 20,
        ...(wing ? { wing } : {}),
        ...(room ? { room } : {}),
      })
      .then(
        (r) => setHits(r.results ?? []),
        (err: Error) => setError(err.message),
      )
      .finally(() => setBusy(false));
  };
  const rooms = wing && taxonomy ? Object.keys(taxonomy[wing]?.rooms ?? {}) : [];

  return (
    <div className="view view-split">
      <div className="pane pane-pad">
        <div className="tabs" role="tablist">
          <button
            type="button"
            role="tab"
            aria-selected={tab === 'search'}
            className={`tab ${tab === 'search' ? 'tab-active' : ''}`}
            onClick={() => setTab('search')}
          >
            Search
          </button>
          <button
            type="button"
            role="tab"
            aria-selected={tab === 'kg'}
            className={`tab ${tab === 'kg' ? 'tab-active' : ''}`}
            onClick={() => setTab('kg')}
          >
            Knowledge graph
          </button>
        </div>
        {tab === 'kg' ? (
          <KgPanel available={tools.includes('palace_kg_query')} />
        ) : (
          <div className="memory">
            <form className="search-row" onSubmit={search}>
              <SearchField
                placeholder="Search the palace"
                value={query}
                onChange={setQuery}
                testId="memory-query"
              />
              <select
                className="input input-sm"
                value={wing}
                onChange={(e) => (setWing(e.target.value), setRoom(''))}
                aria-label="Wing"
              >
                <option value="">all wings</option>
                {Object.keys(taxonomy ?? {}).map((w) => (
                  <option key={w}>{w}</option>
                ))}
              </select>
              <select
                className="input input-sm"
                value={room}
                onChange={(e) => setRoom(e.target.value)}
                aria-label="Room"
                disabled={rooms.length === 0}
              >
                <option value="">all rooms</option>
                {rooms.map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
              <button type="submit" className="btn btn-primary" disabled={busy || !query.trim()}>
                Search
              </button>
            </form>
            {error ? <p className="error-text">{error}</p> : null}
            {hits === null ? (
              taxonomy && Object.keys(taxonomy).length > 0 ? (
                <div className="wings" data-testid="wings">
                  <h3 className="section-title">Wings and rooms</h3>
                  {Object.entries(taxonomy).map(([w, t]) => (
                    <div className="wing" key={w}>
                      <button
                        type="button"
                        className={`link wing-name ${wing === w ? 'wing-active' : ''}`}
                        onClick={() => (setWing(w), setRoom(''))}
                      >
                        {w}
                      </button>
                      {t.total !== null ? <span className="muted small"> · {t.total} drawers</span> : null}
                      <div className="wing-rooms">
                        {Object.entries(t.rooms).map(([r, n]) => (
                          <button
                            type="button"
                            key={r}
                            className={`chip ${wing === w && room === r ? 'chip-active' : ''}`}
                            onClick={() => (setWing(w), setRoom(r))}
                          >
                            {r} <span className="chip-count">{n}</span>
                          </button>
                        ))}
                      </div>
                    </div>
                  ))}
                </div>
              ) : taxonomy ? (
                <EmptyState
                  icon={<IconMemory size={28} />}
                  title="No drawers in this palace yet"
                  testId="memory-empty"
                >
                  Agents file drawers with <code>palace_add_drawer</code>;{' '}
                  <code>palace mine &lt;dir&gt;</code> files a project. Search then finds them by meaning,
                  quoted verbatim.
                </EmptyState>
              ) : (
                <p className="muted">Search drawers by meaning, and narrow to a wing or room.</p>
              )
            ) : hits.length === 0 ? (
              <p className="muted">Nothing found for “{query}”.</p>
            ) : (
              <ol className="hits">
                {hits.map((h, i) => {
                  const id = h.drawer_id ?? '';
                  const similarity = typeof h.similarity === 'number' ? h.similarity : undefined;
                  return (
                    <li key={`${id}-${i}`}>
                      <button
                        type="button"
                        className={`hit ${drawer === id ? 'hit-selected' : ''}`}
                        onClick={() => id && setDrawer(id)}
                      >
                        <div className="hit-head">
                          <span className="tag">
                            {h.wing ?? '?'} / {h.room ?? '?'}
                          </span>
                          {h.source_file ? (
                            <span className="muted small mono ellipsis">{h.source_file}</span>
                          ) : null}
                          <span className="spacer" />
                          {similarity !== undefined ? (
                            <span
                              className="muted small"
                              title={`cosine similarity ${similarity}; fused score ${h.score ?? '—'}`}
                            >
                              {Math.round(similarity * 100)}% similar
                            </span>
                          ) : h.score !== undefined ? (
                            <span className="muted small mono" title="fused score">
                              {h.score.toFixed(3)}
                            </span>
                          ) : null}
                        </div>
                        <div className="hit-text">{(h.content ?? h.text ?? '').slice(0, 360)}</div>
                      </button>
                    </li>
                  );
                })}
              </ol>
            )}
          </div>
        )}
      </div>
      {drawer ? <DrawerDetail key={drawer} id={drawer} onClose={() => setDrawer(null)} /> : null}
    </div>
  );
}
