// Tokens & setup: the hub address, its token (hidden until revealed) and ready-to-paste MCP client
// configuration for Claude Code, Codex and Cursor, over HTTP and stdio, each one click to copy.

import { useState, type ReactElement } from 'react';

import { clientConfigs, type ClientConfig } from '../../../hub/src/client-config.js';
import { CopyButton } from '../components/copy-button.js';
import { IconEye, IconEyeOff } from '../components/icons.js';
import { useDashboard, useStore } from '../hooks/useDashboard.js';

const CLIENTS: { id: ClientConfig['client']; name: string }[] = [
  { id: 'claude-code', name: 'Claude Code' },
  { id: 'codex', name: 'Codex' },
  { id: 'cursor', name: 'Cursor' },
];

const MASK = '•'.repeat(24);

interface Props {
  revealed: boolean;
  onReveal(next: boolean): void;
}

export function SetupView({ revealed, onReveal }: Props): ReactElement {
  const store = useStore();
  const snap = useDashboard();
  const [client, setClient] = useState<ClientConfig['client']>('claude-code');
  const token = snap.token;
  const palace = snap.status.state === 'ready' ? snap.status.data.palace : undefined;
  const palacePath = palace?.path;
  const input = { url: snap.baseUrl, needsToken: Boolean(token), ...(palacePath ? { palacePath } : {}), stdio: palace?.stdio_command };
  const real = clientConfigs({ ...input, token: token ?? undefined });
  const shown = clientConfigs({ ...input, token: token ? (revealed ? token : MASK) : undefined });
  const mcpUrl = `${snap.baseUrl}/mcp`;

  return (
    <div className="view view-pad view-scroll">
      <section className="card">
        <header className="card-head">
          <h2 className="card-title">Hub address</h2>
        </header>
        <div className="field-row">
          <code className="mono value-box" data-testid="hub-address">
            {mcpUrl}
          </code>
          <CopyButton text={mcpUrl} label="MCP address" testId="copy-address" />
        </div>
        <p className="muted small">
          Agents on other machines need the hub to listen on a reachable address, a token, and TLS or a
          private network.
        </p>
      </section>

      <section className="card">
        <header className="card-head">
          <h2 className="card-title">Token</h2>
          {token && !store.bridge && snap.tokenRequired !== false ? (
            <button type="button" className="btn btn-ghost btn-sm" onClick={() => store.forgetToken()}>
              Forget in this tab
            </button>
          ) : null}
        </header>
        {token ? (
          <>
            <div className="field-row">
              <code className={`mono value-box ${revealed ? '' : 'masked'}`} data-testid="token-value">
                {revealed ? token : MASK}
              </code>
              <button
                type="button"
                className="btn btn-secondary btn-sm"
                onClick={() => onReveal(!revealed)}
                data-testid="reveal-token"
                aria-pressed={revealed}
              >
                {revealed ? <IconEyeOff size={14} /> : <IconEye size={14} />}
                <span>{revealed ? 'Hide' : 'Reveal'}</span>
              </button>
              <CopyButton text={token} label="token" testId="copy-token" />
            </div>
            <p className="muted small">
              Sent as <code>Authorization: Bearer …</code>. Keep it out of chats, commits and the coordination
              stream; give it to agents through <code>PALACE_MCP_HTTP_TOKEN</code>.
            </p>
          </>
        ) : (
          <p className="muted" data-testid="no-token">
            This hub needs no token: it listens on loopback only. Set <code>PALACE_MCP_HTTP_TOKEN</code> (or{' '}
            <code>--token</code>) before exposing it beyond this machine.
          </p>
        )}
      </section>

      <section className="card">
        <header className="card-head">
          <h2 className="card-title">Connect an agent</h2>
        </header>
        <div className="tabs" role="tablist">
          {CLIENTS.map((c) => (
            <button
              key={c.id}
              type="button"
              role="tab"
              aria-selected={client === c.id}
              className={`tab ${client === c.id ? 'tab-active' : ''}`}
              onClick={() => setClient(c.id)}
              data-testid={`client-tab-${c.id}`}
            >
              {c.name}
            </button>
          ))}
        </div>
        {(['http', 'stdio'] as const).map((transport) => {
          const i = shown.findIndex((c) => c.client === client && c.transport === transport);
          const display = shown[i];
          const copy = real[i];
          if (!display || !copy) return null;
          return (
            <div
              className="config"
              key={`${client}-${transport}`}
              data-testid={`config-${client}-${transport}`}
            >
              <div className="config-head">
                <span className="config-transport">
                  {transport === 'http' ? 'HTTP, straight to the hub' : 'stdio, through palace mcp'}
                </span>
                <span className="muted small mono">
                  {display.where === 'shell' ? 'run in a shell' : display.where}
                </span>
                <span className="spacer" />
                <CopyButton
                  text={copy.text}
                  label={`${CLIENTS.find((c) => c.id === client)?.name} ${transport} config`}
                  testId={`copy-config-${client}-${transport}`}
                />
              </div>
              <pre className="code-block">{display.text}</pre>
            </div>
          );
        })}
        <p className="muted small">
          stdio forwards every request to the live hub of this palace and follows it across restarts; each
          agent uses one stable name <code>&lt;machine&gt;-&lt;harness&gt;</code> as <code>from_agent</code>.
        </p>
      </section>
    </div>
  );
}
