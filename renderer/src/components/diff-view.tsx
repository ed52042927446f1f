// A unified diff as files and hunks with old/new line numbers, additions and removals tinted.

import { useMemo, type ReactElement } from 'react';

import { displayPath, parseUnifiedDiff } from '../lib/diff.js';

export function DiffView({ text }: { text: string }): ReactElement {
  const files = useMemo(() => parseUnifiedDiff(text), [text]);
  if (files.length === 0) return <pre className="code-block">{text}</pre>;
  return (
    <div className="diff" data-testid="diff">
      {files.map((file, i) => (
        <section className="diff-file" key={`${displayPath(file)}-${i}`}>
          <header className="diff-file-header">
            <span className="mono diff-path">{displayPath(file)}</span>
            {file.oldPath && file.newPath && file.oldPath !== file.newPath ? (
              <span className="muted small">renamed from {file.oldPath}</span>
            ) : null}
            {file.oldPath === null ? <span className="tag">new file</span> : null}
            {file.newPath === null ? <span className="tag">deleted</span> : null}
            <span className="diff-stat">
              <span className="diff-stat-add">+{file.added}</span>
              <span className="diff-stat-del">−{file.removed}</span>
            </span>
          </header>
          <table className="diff-table">
            <tbody>
              {file.hunks.map((hunk, h) => [
                <tr className="diff-hunk" key={`h${h}`}>
                  <td colSpan={3}>{hunk.header}</td>
                </tr>,
                ...hunk.lines.map((line, l) => (
                  <tr className={`diff-line diff-${line.kind}`} key={`h${h}l${l}`}>
                    <td className="diff-no">{line.oldNo ?? ''}</td>
                    <td className="diff-no">{line.newNo ?? ''}</td>
                    <td className="diff-text">
                      <span className="diff-sign" aria-hidden="true">
                        {line.kind === 'add' ? '+' : line.kind === 'del' ? '−' : ' '}
                      </span>
                      {line.text}
                    </td>
                  </tr>
                )),
              ])}
            </tbody>
          </table>
        </section>
      ))}
    </div>
  );
}
