// Builds the dashboard into dist/ui: relative asset paths, so the same bundle works at the hub's
// /ui/ and from the tray app's files. The dev server proxies a running hub (PALACE_UI_HUB).

import { fileURLToPath } from 'node:url';

import react from '@vitejs/plugin-react';
import { defineConfig, type ProxyOptions } from 'vite';

type ProxyServer = Parameters<NonNullable<ProxyOptions['configure']>>[0];

const root = fileURLToPath(new URL('.', import.meta.url));
// `npm run dev:ui` proxies the hub's surface, so the page talks to "its own origin" as it does at /ui.
const hub = process.env.PALACE_UI_HUB ?? 'http://127.0.0.1:8765';
const proxied = ['/mcp', '/healthz', '/statusz', '/logstream', '/sync'];
const hubOrigin = new URL(hub).origin;

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 800,
  },
  server: {
    port: 5173,
    strictPort: false,
    proxy: Object.fromEntries(
      proxied.map((path) => [
        path,
        {
          target: hub,
          changeOrigin: true,
          // The hub answers only pages of its own origin. This dev server stands in for it, so a
          // request from its own page is passed on as the hub's origin; any other Origin is kept
          // (and refused by the hub).
          configure: (proxy: ProxyServer) =>
            proxy.on('proxyReq', (proxyReq, req) => {
              if (req.headers.origin && req.headers.origin === `http://${req.headers.host ?? ''}`)
                proxyReq.setHeader('origin', hubOrigin);
            }),
        },
      ]),
    ),
  },
  logLevel: 'warn',
});
