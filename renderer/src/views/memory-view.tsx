// Memory: search the palace with the same tool agents use (palace_search), browse wings and rooms
// (a room's drawers paged from the hub, no query needed), open a drawer with its provenance, and
// read knowledge-graph facts over time. On a hub without the memory tools it says so instead.

import { useEffect, useState, type FormEvent, type ReactElement } from 'react';

import { DrawerDetail } from '../components/drawer-detail.js';
import { EmptyState } from '../components/empty-state.js';
import { IconMemory } from '../components/icons.js';
import { KgPanel } from '../components/kg-panel.js';
import { SearchField } from '../components/search-field.js';
import { useDashboard, useStore } from '../hooks/useDashboard.js';
import { linePreview, shortPath, type Preview } from '../lib/preview.js';
import type { DrawerRow, SearchHit } from '../state/hub-types.js';

const PAGE = 25;

/** Text with the [start, end) ranges marked. */
function Marked({ text, marks }: { text: string; marks: ReadonlyArray<readonly [number, number]> }): ReactElement {
  const parts: ReactElement[] = [];
  let at = 0;
  marks.forEach(([s, e], i) => {
    if (s < at || e > text.length) return;
    if (s > at) parts.push(<span key={`t${i}`}>{text.slice(at, s)}</span>);
    parts.push(<mark key={`m${i}`}>{text.slice(s, e)}</mark>);
    at = e;
  });
  if (at < text.length) parts.push(<span key="rest">{text.slice(at)}</span>);
  return <>{parts}</>;
}

/** The hub's snippet when it sends one; otherwise whole lines of the content around the best match. */
function hitPreview(h: SearchHit, query: string): Preview {
  if (h.snippet && typeof h.snippet.text === 'string') return { text: h.snippet.text, marks: h.snippet.marks ?? [], lineStart: h.snippet.line_start ?? null };
  return linePreview(h.content ?? h.text ?? '', query, h.location?.line_start ?? null);
}

/** Where a hit comes from: `path:lines` (relative when the hub says), else the source file's tail. */
function hitPlace(h: SearchHit): string | null {
  if (h.location) return `${h.location.path}:${h.location.line_start}-${h.location.line_end}`;
  return h.source_file ? shortPath(h.source_file) : null;
}

/** A room's (or wing's) drawers, paged from the hub through palace_list_drawers. */
function RoomDrawers({ wing, room, selected, onOpen }: { wing: string; room: string; selected: string | null; onOpen: (id: string) => void }): ReactElement {
  const store = useStore();
  const [rows, setRows] = useState<DrawerRow[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [busy, setBusy] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const fetchPage = (offset: number) =>
    store.client.call('palace_list_drawers', { wing, ...(room ? { room } : {}), limit: PAGE, offset });
  const apply = (offset: number, r: { drawers?: DrawerRow[]; total?: number }): void => {
    setRows((prev) => (offset === 0 ? (r.drawers ?? []) : [...prev, ...(r.drawers ?? [])]));
    setTotal(r.total ?? null);
    setError(null);
  };
  const load = (offset: number): void => {
    setBusy(true);
    fetchPage(offset)
      .then((r) => apply(offset, r), (err: Error) => setError(err.message))
      .finally(() => setBusy(false));
  };
  // Mounted once per wing/room (keyed by the caller): the first page loads on mount.
  useEffect(() => {
    let live = true;
    fetchPage(0)
      .then((r) => live && apply(0, r), (err: Error) => live && setError(err.message))
      .finally(() => live && setBusy(false));
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return (
    <div className="room-drawers" data-testid="room-drawers">
      <h3 className="section-title">
        {wing}
        {room ? ` / ${room}` : ''} <span className="muted small">{total === null ? '' : `· ${total.toLocaleString('en')} drawers`}</span>
      </h3>
      {error ? <p className="error-text">{error}</p> : null}
      <ol className="hits">
        {rows.map((d) => {
          const preview = linePreview(d.preview, '', null, 3);
          const lines = d.metadata && typeof d.metadata.line_start === 'number' ? `:${String(d.metadata.line_start)}-${String(d.metadata.line_end)}` : '';
          return (
            <li key={d.drawer_id}>
              <button type="button" className={`hit ${selected === d.drawer_id ? 'hit-selected' : ''}`} onClick={() => onOpen(d.drawer_id)}>
                <div className="hit-head">
                  <span className="tag">
                    {d.wing} / {d.room}
                  </span>
                  {d.source_file ? <span className="muted small mono ellipsis">{shortPath(d.source_file)}{lines}</span> : null}
                  <span className="spacer" />
                  <span className="muted small">{d.filed_at.slice(0, 10)}</span>
                </div>
                <div className="hit-text">{preview.text}</div>
              </button>
            </li>
          );
        })}
      </ol>
      {total !== null && rows.length < total ? (
        <button type="button" className="btn" disabled={busy} onClick={() => load(rows.length)} data-testid="room-more">
          Show more ({(total - rows.length).toLocaleString('en')} left)
        </button>
      ) : null}
      {total === 0 ? <p className="muted">No drawers here.</p> : null}
    </div>
  );
}

/** Wings with their drawer counts and, when the hub says, their rooms. */
type Taxonomy = Record<string, { total: number | null; rooms: Record<string, number> }>;

/** How often the wings and rooms are read again while the view is open (a mine may be filing drawers). */
const TAXONOMY_REFRESH_MS = 15_000;

function useTaxonomy(tools: readonly string[], asked: number): Taxonomy | null {
  const store = useStore();
  const [taxonomy, setTaxonomy] = useState<Taxonomy | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), TAXONOMY_REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  useEffect(() => {
    let live = true;
    const load = async (): Promise<Taxonomy | null> => {
      if (tools.includes('palace_get_taxonomy')) {
        const r = await store.client.call('palace_get_taxonomy', {});
        return Object.fromEntries(
          Object.entries(r.taxonomy ?? {}).map(([w, rooms]) => [
            w,
            { total: Object.values(rooms).reduce((a, b) => a + b, 0), rooms },
          ]),
        );
      }
      if (tools.includes('palace_list_wings')) {
        const r = await store.client.call('palace_list_wings', {});
        return Object.fromEntries(
          Object.entries(r.wings ?? {}).map(([w, n]) => [w, { total: n, rooms: {} }]),
        );
      }
      return null;
    };
    load().then(
      (t) => live && setTaxonomy(t),
      // A failed refresh keeps what was shown; only a first load that fails shows nothing.
      () => live && setTaxonomy((before) => before),
    );
    return () => {
      live = false;
    };
  }, [store, tools, tick, asked]);
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
  const [asked, setAsked] = useState(0);
  const taxonomy = useTaxonomy(tools ?? [], asked);
  /** Back from search results to browsing wings, rooms and drawers. */
  const browse = (): void => {
    setHits(null);
    setQuery('');
    setError(null);
    setAsked((n) => n + 1);
  };

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
      .call('palace_search', {
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
                onChange={(v) => (v === '' ? browse() : setQuery(v))}
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
            {hits !== null ? (
              <button type="button" className="link small" onClick={browse} data-testid="memory-browse">
                ← browse wings and rooms
              </button>
            ) : null}
            {hits === null && wing && tools.includes('palace_list_drawers') ? (
              <>
                <button type="button" className="link small" onClick={() => (setWing(''), setRoom(''))}>
                  ← all wings
                </button>
                <RoomDrawers key={`${wing}\u0000${room}`} wing={wing} room={room} selected={drawer} onOpen={setDrawer} />
              </>
            ) : hits === null ? (
              taxonomy && Object.keys(taxonomy).length > 0 ? (
                <div className="wings" data-testid="wings">
                  <h3 className="section-title">
                    Wings and rooms{' '}
                    <span className="muted small">· pick a wing or a room to read its drawers, no query needed</span>{' '}
                    <button type="button" className="link small" onClick={() => setAsked((n) => n + 1)} data-testid="wings-refresh">
                      refresh
                    </button>
                  </h3>
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
                  const preview = hitPreview(h, query);
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
                          {hitPlace(h) ? (
                            <span className="muted small mono ellipsis" title={h.source_file ?? ''}>
                              {hitPlace(h)}
                            </span>
                          ) : null}
                          {h.stale ? (
                            <span
                              className="tag tag-warn"
                              data-testid="hit-stale"
                              title={`the file changed since it was mined${h.mined ? ` (${h.mined.at}, sha256 ${h.mined.sha256.slice(0, 12)})` : ''}; re-mine it to refresh`}
                            >
                              stale
                            </span>
                          ) : null}
                          <span className="spacer" />
                          {h.score !== undefined ? (
                            <span
                              className="muted small mono"
                              data-testid="hit-score"
                              data-score={h.score}
                              title={`fused score ${h.score} (the list is sorted by it)${similarity !== undefined ? `; cosine similarity ${similarity}` : ''}; found by ${(h.matched ?? []).join(' + ') || '?'}`}
                            >
                              {h.score >= 0.005 ? `score ${h.score.toFixed(2)}` : 'weak match'}
                            </span>
                          ) : similarity !== undefined ? (
                            <span className="muted small" title={`cosine similarity ${similarity}`}>
                              {Math.round(similarity * 100)}% similar
                            </span>
                          ) : null}
                        </div>
                        <div className="hit-text" data-testid="hit-preview">
                          <Marked text={preview.text} marks={preview.marks} />
                        </div>
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
