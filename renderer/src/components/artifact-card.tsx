// One attached artifact: kind, author, size and sha256 (checked here against the content when the
// page can hash), then the content itself: a patch as a diff, anything else verbatim.

import { useEffect, useState, type ReactElement } from 'react';

import type { Artifact } from '../../../hub/src/core/types.js';
import { useStore } from '../hooks/useDashboard.js';
import { formatBytes } from '../lib/format.js';
import { sha256Hex } from '../lib/sha256.js';
import { CopyButton } from './copy-button.js';
import { DiffView } from './diff-view.js';
import { IconAlert, IconCheck, IconFile } from './icons.js';

type HashCheck = 'pending' | 'match' | 'mismatch' | 'unavailable';

function patchWarnings(content: string): string[] {
  const out: string[] = [];
  if (content.length > 0 && !content.endsWith('\n')) out.push('no final newline: git apply will refuse it');
  if (content.includes('\r\n')) out.push('CRLF line endings: git apply may refuse it');
  return out;
}

export function ArtifactCard({ id }: { id: string }): ReactElement {
  const store = useStore();
  const [artifact, setArtifact] = useState<Artifact | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [hash, setHash] = useState<HashCheck>('pending');

  useEffect(() => {
    let live = true;
    store.artifact(id).then(
      (a) => {
        if (!live) return;
        setArtifact(a);
        void sha256Hex(a.content).then(
          (h) => live && setHash(h === undefined ? 'unavailable' : h === a.sha256 ? 'match' : 'mismatch'),
        );
      },
      (err: Error) => live && setError(err.message),
    );
    return () => {
      live = false;
    };
  }, [store, id]);

  if (error)
    return (
      <div className="artifact artifact-error">
        <IconAlert size={14} /> <span className="mono">{id}</span>: {error}
      </div>
    );
  if (!artifact)
    return (
      <div className="artifact">
        <div className="artifact-head">
          <IconFile size={15} /> <span className="mono muted">{id}</span>{' '}
          <span className="muted small">loading…</span>
        </div>
      </div>
    );
  const warnings = artifact.kind === 'patch' ? patchWarnings(artifact.content) : [];
  return (
    <div className="artifact" data-testid="artifact">
      <div className="artifact-head">
        <IconFile size={15} />
        <span className="artifact-kind">{artifact.kind}</span>
        <span className="muted">by {artifact.created_by}</span>
        <span
          className="artifact-size"
          data-testid="artifact-size"
          title={`${artifact.size_bytes.toLocaleString()} bytes`}
        >
          {formatBytes(artifact.size_bytes)}
          {artifact.size_bytes >= 1024 ? (
            <span className="muted"> · {artifact.size_bytes.toLocaleString()} bytes</span>
          ) : null}
        </span>
        <span className="spacer" />
        <CopyButton text={artifact.content} label={artifact.kind === 'patch' ? 'patch' : 'content'} />
      </div>
      <div className="artifact-meta">
        <span className="muted small">sha256</span>
        <code className="mono sha" data-testid="artifact-sha">
          {artifact.sha256}
        </code>
        {hash === 'match' ? (
          <span className="hash-ok" title="The content hashes to this sha256">
            <IconCheck size={13} /> verified
          </span>
        ) : null}
        {hash === 'mismatch' ? (
          <span className="hash-bad">
            <IconAlert size={13} /> content does not match
          </span>
        ) : null}
        <CopyButton text={artifact.sha256} label="sha256" compact />
      </div>
      <div className="artifact-meta">
        <span className="muted small">id</span>
        <code className="mono small">{artifact.id}</code>
      </div>
      {warnings.map((w) => (
        <div className="warning" key={w}>
          <IconAlert size={13} /> {w}
        </div>
      ))}
      {artifact.kind === 'patch' ? (
        <DiffView text={artifact.content} />
      ) : (
        <pre className="code-block">{artifact.content}</pre>
      )}
    </div>
  );
}
