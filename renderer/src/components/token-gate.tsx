// Asks once for the hub's bearer token; it is kept in this tab's sessionStorage only, never in a URL.

import { useState, type FormEvent, type ReactElement } from 'react';

import { useDashboard, useStore } from '../hooks/useDashboard.js';
import { IconKey, IconLogo } from './icons.js';

export function TokenGate(): ReactElement {
  const store = useStore();
  const { baseUrl, tokenError } = useDashboard();
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    setBusy(true);
    void store.submitToken(value).finally(() => setBusy(false));
  };
  return (
    <div className="gate">
      <form className="gate-card" onSubmit={submit} data-testid="token-gate">
        <div className="gate-brand">
          <IconLogo size={28} />
          <span>palace</span>
        </div>
        <h1 className="gate-title">Connect to this hub</h1>
        <p className="muted">
          The hub at <span className="mono">{baseUrl}</span> asks for its bearer token. Paste it once: it
          stays in this tab only, and is never put in a URL.
        </p>
        <label className="gate-label" htmlFor="token-input">
          <IconKey size={14} /> Token
        </label>
        <input
          id="token-input"
          className="input"
          type="password"
          autoComplete="off"
          spellCheck={false}
          autoFocus
          value={value}
          onChange={(e) => setValue(e.target.value)}
          placeholder="64 hex characters"
          data-testid="token-input"
          aria-invalid={tokenError ? true : undefined}
        />
        {tokenError ? (
          <p className="error-text small" role="alert">
            {tokenError}
          </p>
        ) : null}
        <button
          type="submit"
          className="btn btn-primary btn-block"
          disabled={busy || !value.trim()}
          data-testid="token-submit"
        >
          {busy ? 'Connecting…' : 'Connect'}
        </button>
        <p className="muted small">
          On the hub's machine: the tray menu's <em>Copy token</em>, or{' '}
          <code>~/.palace/server/&lt;key&gt;/token</code> for a hub that generated one.
        </p>
      </form>
    </div>
  );
}
