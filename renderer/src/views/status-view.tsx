// Status: what /statusz says (version, uptime, palace, backend, writer lease, log size, SQLite
// integrity, requests, recent MCP clients), plus any block the hub adds (embedder and its workers, memory counts).

import { useEffect, useState, type ReactElement } from 'react';

import { EmptyState } from '../components/empty-state.js';
import { IconAlert, IconCheck, IconGauge } from '../components/icons.js';
import { KeyValues, type KeyValue } from '../components/key-values.js';
import { useAgents } from '../hooks/useAgents.js';
import { useDashboard, useStore } from '../hooks/useDashboard.js';
import { useNow } from '../hooks/useNow.js';
import { formatAgo, formatDateTime, formatUptime } from '../lib/format.js';
import type { StatusPayload } from '../state/hub-types.js';

// Blocks with a card of their own; any other object block of the status gets a generic card. (identity: the Agents card.)
const KNOWN = new Set(['ok', 'server', 'palace', 'writer', 'requests', 'logstream', 'clients', 'identity']);

function scalarRows(block: Record<string, unknown>): KeyValue[] {
  return Object.entries(block)
    .filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
    .map(([k, v]) => ({
      label: k.replace(/_/g, ' '),
      value: v === null ? '—' : String(v),
      mono: typeof v !== 'boolean',
    }));
}

/** The embedding workers line: each running worker's state and own RSS (the `embedding` block of /statusz). */
function workerRows(name: string, block: Record<string, unknown>): KeyValue[] {
  if (name !== 'embedding' || !Array.isArray(block.workers)) return [];
  const workers = block.workers as Array<{ worker?: number; state?: string; rss_mb?: number }>;
  return [
    {
      label: 'workers',
      value:
        workers.length === 0
          ? `none running (released after ${String(block.idle_release_seconds ?? '?')} s idle)`
          : workers.map((w) => `#${w.worker ?? '?'} ${w.state ?? '?'} ${w.rss_mb ?? '?'} MB`).join(' · '),
      mono: true,
    },
  ];
}

function Card({
  title,
  children,
  aside,
}: {
  title: string;
  children: ReactElement | ReactElement[];
  aside?: ReactElement | null;
}): ReactElement {
  return (
    <section className="card">
      <header className="card-head">
        <h2 className="card-title">{title}</h2>
        {aside}
      </header>
      {children}
    </section>
  );
}

interface MemoryCounts {
  loaded?: boolean;
  drawers?: number;
  wings?: number;
  rooms?: number;
  embedder?: { provider?: string; model?: string; dimensions?: number; device?: string };
  backend?: string;
  error?: { message?: string };
  /** Present while memory is not loaded: the embedder the palace recorded with its first drawer (null: none filed yet). */
  embedder_record?: { model?: string } | null;
  /** Replicated drawers re-embedded here in the background (palace_status replication.reembedding; docs/memory-replication.md). */
  reembedding?: { reembedded: number; waiting: number; total: number } | null;
}

/** palace_status's re-embedding progress of replicated drawers, when some wait. */
function reembeddingOf(r: unknown): MemoryCounts['reembedding'] {
  const re = (r as { replication?: { reembedding?: { reembedded?: unknown; waiting?: unknown; total?: unknown } | null } | null }).replication?.reembedding;
  if (!re || typeof re.waiting !== 'number' || re.waiting === 0) return null;
  const reembedded = typeof re.reembedded === 'number' ? re.reembedded : 0;
  return { reembedded, waiting: re.waiting, total: typeof re.total === 'number' ? re.total : reembedded + re.waiting };
}

/** Memory counts and the embedder (palace_status with memory) and the KG's size (palace_kg_stats). */
function useMemoryCounts(): { memory: MemoryCounts | null; kg: { entities: number; triples: number } | null; failed: string | null } {
  const store = useStore();
  const { tools } = useDashboard();
  const [memory, setMemory] = useState<MemoryCounts | null>(null);
  const [kg, setKg] = useState<{ entities: number; triples: number } | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    if (!tools?.includes('palace_status')) return;
    let live = true;
    // The counts come from the hub's memory. A freshly started hub has not loaded it (nothing asked
    // yet): say so at once, then ask it to load (store and census; seconds on a big palace) and show
    // the counts. A palace with no drawer filed yet has no recorded embedder and nothing to count.
    const status = (includeMemory: boolean): Promise<MemoryCounts | null> =>
      store.client.call('palace_status', includeMemory ? { include_memory: true } : {}).then((r) => (r.memory ? { ...r.memory, reembedding: reembeddingOf(r) } : null));
    status(false)
      .then(async (first) => {
        if (!live) return;
        setMemory(first);
        if (first && !first.loaded && !first.error && first.embedder_record) {
          const loaded = await status(true);
          if (live) setMemory(loaded);
        }
      })
      .catch((err: Error) => live && setFailed(err.message));
    if (tools.includes('palace_kg_stats'))
      store.client.call('palace_kg_stats', {}).then(
        (r) => live && setKg({ entities: r.entities, triples: r.triples }),
        () => undefined,
      );
    return () => {
      live = false;
    };
  }, [store, tools]);
  return { memory, kg, failed };
}

function MemoryCard(): ReactElement | null {
  const { memory, kg, failed } = useMemoryCounts();
  if (!memory && !failed) return null;
  const n = (v: number | undefined): string => (v === undefined ? '—' : v.toLocaleString('en'));
  const e = memory?.embedder;
  return (
    <Card title="Memory">
      <div data-testid="memory-counts">
        <KeyValues
          rows={
            failed || !memory?.loaded
              ? [{ label: 'Memory', value: failed ?? memory?.error?.message ?? (memory?.embedder_record === null ? 'no drawers filed yet' : 'loading memory counts…') }]
              : [
                  { label: 'Drawers', value: n(memory.drawers) },
                  { label: 'Wings', value: n(memory.wings) },
                  { label: 'Rooms', value: n(memory.rooms) },
                  { label: 'KG entities', value: kg ? n(kg.entities) : '—' },
                  { label: 'KG facts', value: kg ? n(kg.triples) : '—' },
                  { label: 'Embedder', value: e ? `${e.model ?? '?'} (${e.provider ?? '?'}, ${e.dimensions ?? '?'}-d${e.device ? `, ${e.device}` : ''})` : '—', mono: true },
                  { label: 'Backend', value: memory.backend ?? '—', mono: true },
                  ...(memory.reembedding
                    ? [{ label: 'Re-embedding', value: `${n(memory.reembedding.reembedded)} of ${n(memory.reembedding.total)} replicated drawers (another hub's embedder)` }]
                    : []),
                ]
          }
        />
      </div>
    </Card>
  );
}

/** Identity (docs/identity.md): the mode and the registered agents (never their secrets). */
function AgentsCard(): ReactElement | null {
  const info = useAgents();
  if (!info) return null;
  return (
    <Card title="Agents">
      <div data-testid="agents-card">
        <KeyValues
          rows={[
            {
              label: 'Identity',
              value: info.mode === 'enforced' ? 'enforced: only registered agents write' : 'open: unregistered names are believed (marked unproven)',
            },
            ...(info.agents.length === 0
              ? [{ label: 'Registered', value: 'none (palace agent add <name>)' }]
              : info.agents.map((a) => ({
                  label: a.name,
                  value: `${a.state}${a.capabilities.length > 0 ? ` · ${a.capabilities.join(', ')}` : ''}${a.harness ? ` · ${a.harness}` : ''}`,
                }))),
          ]}
        />
      </div>
    </Card>
  );
}

export function StatusView(): ReactElement {
  const store = useStore();
  const { status } = useDashboard();
  const now = useNow(5_000);
  useEffect(() => void store.refreshStatus(), [store]);
  if (status.state !== 'ready')
    return (
      <div className="view view-pad">
        <EmptyState
          icon={<IconGauge size={28} />}
          title={status.state === 'error' ? 'Could not read /statusz' : 'Reading status…'}
        >
          {status.state === 'error' ? status.message : null}
        </EmptyState>
      </div>
    );
  const s: StatusPayload = status.data;
  const integrity = s.palace?.sqlite_integrity;
  const extra = Object.entries(s).filter(
    ([k, v]) => !KNOWN.has(k) && v && typeof v === 'object' && !Array.isArray(v),
  );
  const statuses = Object.entries(s.requests?.by_status ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div className="view view-pad view-scroll">
      <div className="status-grid">
        <Card
          title="Hub"
          aside={
            <span className="muted small">read {formatAgo(new Date(status.at).toISOString(), now)}</span>
          }
        >
          <KeyValues
            rows={[
              { label: 'Version', value: s.server?.version, mono: true },
              {
                label: 'Uptime',
                value: s.server?.uptime_seconds !== undefined ? formatUptime(s.server.uptime_seconds) : '—',
              },
              { label: 'Started', value: formatDateTime(s.server?.started_at) },
              {
                label: 'Listening',
                value: s.server ? `${s.server.scheme ?? 'http'}://${s.server.host}:${s.server.port}` : '—',
                mono: true,
              },
              {
                label: 'Process',
                value: s.server?.pid !== undefined ? `pid ${s.server.pid}` : '—',
                mono: true,
              },
              { label: 'Mode', value: s.writer?.mode === 'read_only' ? 'read-only' : 'writer' },
            ]}
          />
        </Card>
        <Card title="Palace">
          <KeyValues
            rows={[
              { label: 'Path', value: s.palace?.path, mono: true },
              { label: 'Backend', value: s.palace?.backend, mono: true },
              {
                label: 'SQLite integrity',
                value: (
                  // 'checking': the hub's first check (started with it) has not given its verdict yet.
                  <span
                    className={integrity === 'ok' ? 'ok-text' : integrity === 'checking' ? 'muted' : 'error-text'}
                    data-testid="sqlite-integrity"
                  >
                    {integrity === 'ok' ? <IconCheck size={13} /> : integrity === 'checking' ? null : <IconAlert size={13} />}{' '}
                    {integrity === 'checking' ? 'checking…' : (integrity ?? '—')}
                  </span>
                ),
              },
              {
                label: 'Writer lease',
                value: s.writer?.lease ? `pid ${s.writer.lease.pid}` : 'none',
                mono: true,
              },
            ]}
          />
        </Card>
        <MemoryCard />
        <AgentsCard />
        <Card title="Logstream">
          <KeyValues
            rows={[
              { label: 'Events', value: s.logstream?.events?.toLocaleString() },
              { label: 'Replica', value: s.logstream?.replica_id, mono: true },
              { label: 'Stream clients', value: String(s.logstream?.sse_clients ?? 0) },
            ]}
          />
        </Card>
        <Card title="Requests">
          <KeyValues
            rows={[
              { label: 'Total', value: s.requests?.total?.toLocaleString() },
              { label: 'MCP', value: s.requests?.mcp?.toLocaleString() },
              { label: 'Waiting for the lock', value: String(s.requests?.lock_pending ?? 0) },
              {
                label: 'By status',
                value: statuses.map(([code, n]) => `${code}: ${n.toLocaleString()}`).join(' · ') || '—',
                mono: true,
              },
            ]}
          />
        </Card>
        {extra.map(([name, block]) => (
          <Card title={name.replace(/_/g, ' ')} key={name}>
            <KeyValues
              rows={[
                ...scalarRows(block as Record<string, unknown>),
                ...workerRows(name, block as Record<string, unknown>),
              ]}
            />
          </Card>
        ))}
      </div>
      <Card title="Recent MCP clients">
        {(s.clients?.recent ?? []).length === 0 ? (
          <p className="muted">No MCP client has called this hub since it started.</p>
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th>Client</th>
                <th>From</th>
                <th className="num">Requests</th>
                <th>Last call</th>
                <th>Last seen</th>
              </tr>
            </thead>
            <tbody>
              {(s.clients?.recent ?? []).map((c) => (
                <tr key={c.client_id} className="row-static">
                  <td>
                    <div>
                      {c.name ?? <span className="muted">unnamed</span>}
                      {c.version ? <span className="muted small"> {c.version}</span> : null}
                    </div>
                    <div className="muted small ellipsis" title={c.user_agent ?? undefined}>
                      {c.user_agent ?? ''}
                    </div>
                  </td>
                  <td className="mono small">{c.remote ?? '—'}</td>
                  <td className="num">{c.requests.toLocaleString()}</td>
                  <td className="mono small">{c.last_method ?? '—'}</td>
                  <td>{formatAgo(c.last_seen, now)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </div>
  );
}
