// Bundles the preload script into one CommonJS file (dist/main/preload.cjs): a sandboxed preload
// can require only `electron`, so the IPC contract is inlined.

import { fileURLToPath } from 'node:url';

import { defineConfig } from 'vite';

export default defineConfig({
  logLevel: 'warn',
  build: {
    lib: {
      entry: fileURLToPath(new URL('./preload.ts', import.meta.url)),
      formats: ['cjs'],
      fileName: () => 'preload.cjs',
    },
    outDir: fileURLToPath(new URL('../dist/main', import.meta.url)),
    emptyOutDir: false,
    minify: false,
    target: 'chrome120',
    rollupOptions: { external: ['electron'] },
  },
});
