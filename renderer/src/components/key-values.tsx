// Label/value rows for detail panes and status cards.

import type { ReactElement, ReactNode } from 'react';

export interface KeyValue {
  label: string;
  value: ReactNode;
  mono?: boolean;
  title?: string;
}

export function KeyValues({ rows }: { rows: readonly KeyValue[] }): ReactElement {
  return (
    <dl className="kv">
      {rows.map((row) => (
        <div className="kv-row" key={row.label}>
          <dt>{row.label}</dt>
          <dd className={row.mono ? 'mono' : undefined} title={row.title}>
            {row.value ?? '—'}
          </dd>
        </div>
      ))}
    </dl>
  );
}
