// GET /ui/*: the dashboard's static files (the Vite build in dist/ui). Public like /healthz, since
// they hold no data: every data call the page makes carries the bearer token. A missing build is a
// 404 that says how to make one. Never serves a file outside the build directory.

import { createReadStream, existsSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Context } from 'koa';

import { HubError } from '../../errors.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Only same-origin scripts and connections; inline styles are allowed for React's style props. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

export const NOT_BUILT = 'dashboard not built: run npm run build:ui';

export function isUiPath(path: string): boolean {
  return path === '/ui' || path.startsWith('/ui/');
}

/** Where the build lives next to this module: dist/ui from the sources and from the compiled hub. */
export function defaultUiDirs(): string[] {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
  return [join(root, 'ui'), join(root, 'dist', 'ui')];
}

function built(dir: string): boolean {
  return existsSync(join(dir, 'index.html'));
}

export function uiHandler(dirs: readonly string[] = defaultUiDirs()) {
  let found: string | undefined;
  const buildDir = (): string => {
    if (found && built(found)) return found;
    found = dirs.find(built);
    if (!found) throw new HubError('http.not_found', NOT_BUILT);
    return found;
  };
  return async (ctx: Context): Promise<void> => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD')
      throw new HubError('http.method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`, {
        data: { allow: ['GET', 'HEAD'] },
      });
    if (ctx.path === '/ui') {
      ctx.status = 308;
      ctx.redirect('/ui/');
      return;
    }
    const dir = buildDir();
    let rel: string;
    try {
      rel = decodeURIComponent(ctx.path.slice('/ui/'.length));
    } catch {
      throw new HubError('http.not_found', `no file ${ctx.path}`);
    }
    if (rel.includes('\0')) throw new HubError('http.not_found', `no file ${ctx.path}`);
    let file = resolve(dir, rel || 'index.html');
    if (file !== dir && !file.startsWith(dir + sep))
      throw new HubError('http.not_found', `no file ${ctx.path}`);
    let stat = existsSync(file) ? statSync(file) : undefined;
    if (!stat?.isFile()) {
      // Client-side routes (no extension) get the app; a missing asset is a plain 404.
      if (extname(rel) !== '') throw new HubError('http.not_found', `no file ${ctx.path}`);
      file = join(dir, 'index.html');
      stat = statSync(file);
    }
    const ext = extname(file);
    ctx.set({
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      'Cache-Control': rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    ctx.type = TYPES[ext] ?? 'application/octet-stream';
    ctx.length = stat.size;
    // Koa destroys the stream when the response finishes, HEAD included.
    ctx.body = createReadStream(file);
  };
}
