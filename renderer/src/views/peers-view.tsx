// Peers: this hub's replica and each peer from /sync/peers: reachable or not, last success and
// error, how far apart the two logs are (version-vector drift, in events), the peer's key fingerprint,
// whether it is pinned, and the pages refused from it (red, with the reason).

import { useEffect, type ReactElement } from 'react';

import { EmptyState } from '../components/empty-state.js';
import { IconAlert, IconPeers } from '../components/icons.js';
import { KeyValues } from '../components/key-values.js';
import { useDashboard, useStore } from '../hooks/useDashboard.js';
import { useNow } from '../hooks/useNow.js';
import { drift } from '../lib/drift.js';
import { formatAgo, formatDateTime, plural } from '../lib/format.js';
import type { PeerEntry, VersionVector } from '../state/hub-types.js';

function DriftLabel({ local, peer }: { local: VersionVector; peer: PeerEntry }): ReactElement {
  const d = drift(local, peer.remote_version_vector);
  if (!d) return <span className="muted">never reached</span>;
  if (d.behind === 0 && d.ahead === 0) return <span className="ok-text">in sync</span>;
  return (
    <span title={d.origins.map((o) => `${o.origin}: here ${o.local}, there ${o.remote}`).join('\n')}>
      {d.behind > 0 ? <span className="warn-text">{plural(d.behind, 'event')} behind</span> : null}
      {d.behind > 0 && d.ahead > 0 ? ' · ' : null}
      {d.ahead > 0 ? <span className="muted">{plural(d.ahead, 'event')} ahead</span> : null}
    </span>
  );
}

function vectorTotal(v: VersionVector): number {
  return Object.values(v).reduce((a, b) => a + b, 0);
}

export function PeersView(): ReactElement {
  const store = useStore();
  const { peers } = useDashboard();
  const now = useNow(5_000);
  useEffect(() => void store.refreshPeers(), [store]);
  if (peers.state === 'unavailable')
    return (
      <div className="view view-pad">
        <EmptyState icon={<IconPeers size={28} />} title="Peer sync not available" testId="peers-unavailable">
          This hub does not serve <code>/sync/peers</code> yet. When peer sync is on, the hubs listed in{' '}
          <code>peers.json</code> in the palace folder appear here with their reachability and drift.
        </EmptyState>
      </div>
    );
  if (peers.state === 'error')
    return (
      <div className="view view-pad">
        <EmptyState icon={<IconAlert size={28} />} title="Could not read peers">
          {peers.message}
        </EmptyState>
      </div>
    );
  if (peers.state !== 'ready') return <div className="view view-pad loading">Reading peers…</div>;
  const {
    self,
    peers: list,
    equivocations,
    quarantined,
    unnamed_origins: unnamed,
    sync_interval_s: interval,
    sync_enabled: enabled,
    peers_file: file,
  } = peers.data;
  return (
    <div className="view view-pad view-scroll">
      <section className="card">
        <header className="card-head">
          <h2 className="card-title">This hub</h2>
          <span className="muted small" data-testid="sync-schedule">
            {enabled === false
              ? 'sync is off (PALACE_SYNC_INTERVAL=0)'
              : interval
                ? `pulls from its peers every ${interval} s`
                : null}
          </span>
        </header>
        <KeyValues
          rows={[
            { label: 'Name', value: self.name },
            { label: 'Replica', value: self.replica_id, mono: true },
            { label: 'Key', value: self.public_key_fingerprint ?? '—', mono: true },
            {
              label: 'Events known',
              value: `${vectorTotal(self.version_vector).toLocaleString()} from ${plural(Object.keys(self.version_vector).length, 'origin')}`,
            },
          ]}
        />
        {Object.keys(self.unverified_events).length > 0 ? (
          <div className="callout" data-testid="legacy-events">
            Legacy:{' '}
            {Object.entries(self.unverified_events)
              .map(([o, n]) => `${plural(n, 'event')} of ${o}`)
              .join(', ')}{' '}
            held from before signed sync, not yet covered by their origin&apos;s signature.
          </div>
        ) : null}
      </section>
      {equivocations.length > 0 ? (
        <section className="card" data-testid="equivocations">
          <header className="card-head">
            <h2 className="card-title error-text">
              <IconAlert size={14} /> Equivocation
            </h2>
          </header>
          <div className="callout callout-bad">
            {equivocations.map((e, i) => (
              <div key={i} title={formatDateTime(e.detected_at)}>
                Origin <span className="mono">{e.origin}</span> signed two different chains at position {e.pos ?? '?'}{' '}
                (held <span className="mono">{e.ours_chain.slice(0, 12)}…</span>, peer {e.via_peer ?? '?'} showed{' '}
                <span className="mono">{e.theirs_chain.slice(0, 12)}…</span>, key{' '}
                <span className="mono">{e.public_key_fingerprint ?? '?'}</span>). Its events are no longer accepted; both
                signed statements are kept as evidence.
              </div>
            ))}
          </div>
        </section>
      ) : null}
      {quarantined.length > 0 ? (
        <section className="card" data-testid="quarantined">
          <header className="card-head">
            <h2 className="card-title warn-text">Quarantined</h2>
          </header>
          <ul className="plain-list small">
            {quarantined.map((q) => (
              <li key={q.held_as} title={q.reason}>
                {plural(q.events ?? 0, 'event')} that claimed origin <span className="mono">{q.origin}</span>, signed by{' '}
                <span className="mono">{q.public_key_fingerprint ?? '?'}</span> (not its pinned key), kept as{' '}
                <span className="mono">{q.held_as}</span> since {formatDateTime(q.quarantined_at)}; never served.
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      <section className="card">
        <header className="card-head">
          <h2 className="card-title">Peers</h2>
          <span className="muted small mono" title={file?.path ?? undefined}>
            {plural(list.length, 'peer')} in peers.json
          </span>
        </header>
        {file?.error ? (
          <div className="callout callout-bad">
            <IconAlert size={14} /> peers.json cannot be used: {file.error}
          </div>
        ) : null}
        {list.length === 0 ? (
          <p className="muted">
            No peers configured. Add them to peers.json in the palace folder; the hub re-reads it within one
            sync cycle.
          </p>
        ) : (
          <table className="table peer-table" data-testid="peer-table">
            <colgroup>
              <col className="peer-col-name" />
              <col className="peer-col-key" />
              <col className="peer-col-reach" />
              <col className="peer-col-success" />
              <col className="peer-col-error" />
              <col className="peer-col-drift" />
            </colgroup>
            <thead>
              <tr>
                <th>Peer</th>
                <th>Key</th>
                <th>Reachable</th>
                <th>Last success</th>
                <th>Last error</th>
                <th>Drift</th>
              </tr>
            </thead>
            <tbody>
              {list.map((p) => (
                <tr key={p.name} className="row-static">
                  <td>
                    <div>{p.name}</div>
                    <div className="muted small mono">{p.url}</div>
                    {p.memory_wings.length > 0 || p.memory_kg ? (
                      <div className="small" data-testid="peer-memory" title="Wings whose drawers replicate with this peer (peers.json &quot;wings&quot;), and the knowledge graph (&quot;kg&quot;: true)">
                        memory: {[...p.memory_wings, ...(p.memory_kg ? ['knowledge graph'] : [])].join(', ')}
                      </div>
                    ) : null}
                  </td>
                  <td data-testid="peer-key">
                    <div className="mono small">{p.public_key_fingerprint ?? '—'}</div>
                    {p.trust === 'pinned' ? (
                      <div className="ok-text small">pinned</div>
                    ) : p.trust === 'tofu' ? (
                      <div className="warn-text small" title="No public_key in peers.json: trusted on first use">
                        not pinned
                      </div>
                    ) : null}
                  </td>
                  <td>
                    <span
                      className={`reach ${p.reachable === null ? 'reach-unknown' : p.reachable ? 'reach-ok' : 'reach-bad'}`}
                    >
                      <span className="reach-dot" />{' '}
                      {p.reachable === null ? 'not tried yet' : p.reachable ? 'reachable' : 'unreachable'}
                    </span>
                    {p.in_flight ? <div className="muted small">pulling now…</div> : null}
                  </td>
                  <td title={formatDateTime(p.last_success_at)}>
                    <div>{formatAgo(p.last_success_at, now)}</div>
                    {p.pulled_events_total ? (
                      <div className="muted small">
                        {plural(p.pulled_events_total, 'event')} pulled in all
                      </div>
                    ) : null}
                  </td>
                  <td>
                    {p.last_error ? (
                      <>
                        <div className="error-text small">{p.last_error}</div>
                        <div className="muted small">{formatAgo(p.last_error_at, now)}</div>
                      </>
                    ) : (
                      <span className="muted">—</span>
                    )}
                    {p.rejected_pages.length > 0 ? (
                      <details className="small" data-testid="rejected-pages">
                        <summary className="error-text">{plural(p.rejected_pages.length, 'refused page')}</summary>
                        <ul className="plain-list">
                          {p.rejected_pages.map((r, i) => (
                            <li key={i} className="error-text" title={formatDateTime(r.at)}>
                              {r.code}: {r.reason}
                            </li>
                          ))}
                        </ul>
                      </details>
                    ) : null}
                  </td>
                  <td>
                    <DriftLabel local={self.version_vector} peer={p} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {unnamed.length > 0 ? (
        <section className="card">
          <header className="card-head">
            <h2 className="card-title">Known through gossip</h2>
          </header>
          <p className="muted small">
            Replicas whose events reached this hub through a peer, with no entry of their own in peers.json.
          </p>
          <ul className="plain-list mono small">
            {unnamed.map((o) => (
              <li key={o}>
                {o} <span className="muted">· {(self.version_vector[o] ?? 0).toLocaleString()} events</span>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </div>
  );
}
