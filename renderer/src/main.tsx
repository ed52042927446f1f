// Entry of the dashboard bundle: one store for the hub this page talks to, then the app.

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';

import { App } from './app.js';
import { getBridge } from './lib/bridge.js';
import { DashboardStore } from './state/dashboard-store.js';
import './styles.css';

const bridge = getBridge();
// Served by the hub (/ui/): talk to the same origin. Inside the tray app from its own files: the
// bridge says where the hub is.
const baseUrl = /^https?:$/.test(window.location.protocol) ? window.location.origin : 'http://127.0.0.1:8765';

const store = new DashboardStore({ baseUrl, bridge, storage: window.sessionStorage });
void store.start();

const root = document.getElementById('root');
if (root)
  createRoot(root).render(
    <StrictMode>
      <App store={store} />
    </StrictMode>,
  );
