// One drawer: its verbatim content and where it came from (wing, room, source file, filing time
// and whatever provenance metadata the hub returns).

import { useEffect, useState, type ReactElement } from 'react';

import { useStore } from '../hooks/useDashboard.js';
import { formatDateTime } from '../lib/format.js';
import type { Drawer } from '../state/hub-types.js';
import { CopyButton } from './copy-button.js';
import { DetailPanel } from './detail-panel.js';
import { KeyValues, type KeyValue } from './key-values.js';

const SHOWN = new Set([
  'drawer_id',
  'id',
  'wing',
  'room',
  'content',
  'text',
  'source_file',
  'filed_at',
  'created_by',
  'added_by',
  'tags',
  'useful',
  'metadata',
  'embedder',
  'chunk_ids',
  'chunk_index',
  'parent_id',
]);

function provenance(d: Drawer): KeyValue[] {
  const meta = { ...(d.metadata ?? {}) };
  const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  const tags = Array.isArray(d.tags)
    ? (d.tags as unknown[]).filter((t): t is string => typeof t === 'string')
    : [];
  const chunks = Array.isArray(d.chunk_ids) ? d.chunk_ids.length : 0;
  const rows: KeyValue[] = [
    {
      label: 'Wing / room',
      value: `${d.wing ?? text(meta.wing) ?? '?'} / ${d.room ?? text(meta.room) ?? '?'}`,
    },
    {
      label: 'Source file',
      value: text(d.source_file) ?? text(meta.source_file) ?? 'none (added by hand, diary or KG)',
      mono: true,
    },
    { label: 'Filed', value: formatDateTime(text(d.filed_at) ?? text(meta.filed_at)) },
    { label: 'Created by', value: text(d.created_by) ?? text(d.added_by) ?? text(meta.added_by) ?? '—' },
  ];
  if (tags.length > 0) rows.push({ label: 'Tags', value: tags.join(', ') });
  if (typeof d.useful === 'boolean') rows.push({ label: 'Rated', value: d.useful ? 'useful' : 'not useful' });
  if (chunks > 1) rows.push({ label: 'Stored as', value: `${chunks} chunks, shown whole` });
  for (const [k, v] of Object.entries(d))
    if (!SHOWN.has(k) && v !== null && ['string', 'number', 'boolean'].includes(typeof v))
      rows.push({ label: k.replace(/_/g, ' '), value: String(v), mono: true });
  for (const [k, v] of Object.entries(meta))
    if (!SHOWN.has(k) && v !== null && ['string', 'number', 'boolean'].includes(typeof v))
      rows.push({ label: k.replace(/_/g, ' '), value: String(v), mono: true });
  return rows;
}

export function DrawerDetail({ id, onClose }: { id: string; onClose(): void }): ReactElement {
  const store = useStore();
  const [drawer, setDrawer] = useState<Drawer | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    store.client.call('palace_get_drawer', { drawer_id: id }).then(
      (d) => live && setDrawer(d),
      (err: Error) => live && setError(err.message),
    );
    return () => {
      live = false;
    };
  }, [store, id]);
  const content = drawer?.content ?? drawer?.text ?? '';
  return (
    <DetailPanel
      label="Drawer"
      testId="drawer-detail"
      closeLabel="Close drawer (Esc)"
      onClose={onClose}
      title={
        <>
          <span className="muted small">drawer</span> <span className="mono">{id}</span>
        </>
      }
    >
      {error ? <p className="error-text">{error}</p> : null}
      {!drawer && !error ? <p className="muted">Opening…</p> : null}
      {drawer ? (
        <>
          <KeyValues rows={provenance(drawer)} />
          <section className="section">
            <div className="section-head">
              <h3 className="section-title">Content, verbatim</h3>
              <CopyButton text={content} label="drawer content" compact />
            </div>
            <pre className="body-text">{content}</pre>
          </section>
        </>
      ) : null}
    </DetailPanel>
  );
}
