// The selected event: routing fields, the verbatim body and its attached artifacts.

import type { ReactElement } from 'react';

import type { LogEvent } from '../../../hub/src/core/types.js';
import { formatDateTime } from '../lib/format.js';
import { ArtifactCard } from './artifact-card.js';
import { CopyButton } from './copy-button.js';
import { DetailPanel } from './detail-panel.js';
import { KeyValues } from './key-values.js';
import { StatusBadge } from './status-badge.js';

interface Props {
  event: LogEvent;
  onClose(): void;
  onFilterCorrelation(id: string): void;
}

export function EventDetail({ event, onClose, onFilterCorrelation }: Props): ReactElement {
  return (
    <DetailPanel
      label="Event detail"
      testId="event-detail"
      onClose={onClose}
      title={
        <>
          <span className="mono type-name">{event.type}</span>
          <StatusBadge status={event.status} />
        </>
      }
    >
      <div className="route">
        <span className="agent">{event.from_agent}</span>
        <span className="route-arrow">→</span>
        <span className="agent">{event.to_agent ?? '—'}</span>
      </div>
      <KeyValues
        rows={[
          { label: 'When', value: formatDateTime(event.created_at), title: event.created_at },
          { label: 'Stream', value: `${event.stream} · ${event.room}`, mono: true },
          {
            label: 'Correlation',
            value: event.correlation_id ? (
              <button
                type="button"
                className="link mono"
                onClick={() => onFilterCorrelation(event.correlation_id as string)}
                title="Show only this task's events"
              >
                {event.correlation_id}
              </button>
            ) : null,
          },
          ...(event.branch ? [{ label: 'Branch', value: event.branch, mono: true }] : []),
          ...(event.base_commit ? [{ label: 'Base commit', value: event.base_commit, mono: true }] : []),
          {
            label: 'Event id',
            value: (
              <span className="inline-copy">
                {event.id} <CopyButton text={event.id} label="event id" compact />
              </span>
            ),
            mono: true,
          },
          { label: 'Seq', value: String(event.seq), mono: true },
          { label: 'Origin', value: `${event.origin_replica} #${event.origin_seq}`, mono: true },
        ]}
      />
      <section className="section">
        <h3 className="section-title">Body</h3>
        {event.body ? (
          <pre className="body-text" data-testid="event-body">
            {event.body}
          </pre>
        ) : (
          <p className="muted small">No body.</p>
        )}
        {event.body_truncated ? (
          <p className="muted small">Preview of {event.body_length} characters.</p>
        ) : null}
      </section>
      {Object.keys(event.metadata ?? {}).length > 0 ? (
        <section className="section">
          <h3 className="section-title">Metadata</h3>
          <pre className="code-block">{JSON.stringify(event.metadata, null, 2)}</pre>
        </section>
      ) : null}
      {event.artifact_ids.length > 0 ? (
        <section className="section">
          <h3 className="section-title">Artifacts</h3>
          {event.artifact_ids.map((id) => (
            <ArtifactCard key={id} id={id} />
          ))}
        </section>
      ) : null}
    </DetailPanel>
  );
}
