// The hub's Koa application: middleware in order (counters, errors, Host guard, cross-origin guard,
// bearer auth) and the routes /healthz, /statusz, /mcp, /logstream/stream, /sync/* and the daemon's.

import Router from '@koa/router';
import Koa from 'koa';

import { HubError } from '../errors.js';
import type { HubServices } from '../services.js';
import type { BuildServerOptions } from '../mcp/server/build-server.js';
import { bearerAuth } from './middleware/auth.js';
import { errorMiddleware } from './middleware/errors.js';
import { hostGuard } from './middleware/host-guard.js';
import { crossOriginGuard, jsonOnly } from './middleware/request-guard.js';
import { DAEMON_ALLOW, daemonRoutes } from './routes/daemon.js';
import { mcpHandler, mcpSessionHandlers } from './routes/mcp.js';
import { McpSessions } from './routes/mcp-sessions.js';
import { sseHandler, type SseState } from './routes/sse.js';
import { isUiPath, uiHandler } from './routes/ui.js';
import { SYNC_ALLOW, syncRoutes } from './routes/sync.js';
import { CYPHER_ALLOW, cypherRoutes } from './routes/cypher.js';

export interface AppOptions {
  hub: HubServices;
  token: string | undefined;
  /** Host header values accepted (every bind; see host-guard.ts). */
  allowedHosts: () => ReadonlySet<string>;
  /** The hub's own origins (scheme://name:port), the only pages allowed to call it. */
  ownOrigins: () => ReadonlySet<string>;
  status: () => Record<string, unknown> | Promise<Record<string, unknown>>;
  sse: SseState;
  server?: BuildServerOptions;
  /** Where the dashboard build may live (default: dist/ui beside the hub); served at /ui. */
  uiDirs?: readonly string[];
  /** The MCP sessions (subscriptions, logging level) GET /mcp streams to; default a fresh registry. */
  sessions?: McpSessions;
}

const PUBLIC_PATHS = new Set(['/healthz']);
const ALLOW: Record<string, string[]> = {
  '/healthz': ['GET', 'HEAD'],
  '/statusz': ['GET', 'HEAD'],
  '/logstream/stream': ['GET', 'HEAD'],
  '/mcp': ['POST', 'GET', 'DELETE'],
  ...SYNC_ALLOW,
  ...DAEMON_ALLOW,
  ...CYPHER_ALLOW,
};

export function createApp(options: AppOptions): Koa {
  const { hub } = options;
  const app = new Koa({ proxy: false });
  app.silent = true;
  app.on('error', (err: NodeJS.ErrnoException) => {
    if (['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE'].includes(err.code ?? '')) return;
    hub.log.warn('http error', { message: err.message });
  });

  app.use(async (ctx, next) => {
    ctx.res.once('finish', () => hub.stats.countResponse(ctx.res.statusCode));
    await next();
  });
  app.use(errorMiddleware(hub.log));
  app.use(hostGuard(options.allowedHosts));
  app.use(crossOriginGuard({ own: options.ownOrigins, extraHosts: hub.config.extraAllowedHosts }));
  // The dashboard's static files are public; every data call it makes carries the token.
  app.use(bearerAuth(options.token, (path) => PUBLIC_PATHS.has(path) || isUiPath(path), hub.identity));
  const ui = uiHandler(options.uiDirs);
  app.use((ctx, next) => (isUiPath(ctx.path) ? ui(ctx) : next()));

  const router = new Router();
  // Runs only for a route that takes the method (404 and 405 come first): no form or text/plain
  // body, which a browser may send cross-origin without asking, ever reaches a handler.
  router.use(jsonOnly());
  router.get('/healthz', (ctx) => {
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = 'ok';
  });
  router.get('/statusz', async (ctx) => {
    ctx.body = await options.status();
  });
  const sessions = options.sessions ?? new McpSessions(hub);
  const mcpSession = mcpSessionHandlers(sessions);
  router.post('/mcp', mcpHandler(hub, options.server ?? {}, sessions));
  router.get('/mcp', (ctx) => mcpSession.stream(ctx));
  router.delete('/mcp', (ctx) => mcpSession.end(ctx));
  router.get('/logstream/stream', sseHandler(hub, options.sse));
  syncRoutes(router, hub, { tokenRequired: Boolean(options.token) });
  cypherRoutes(router, hub);
  daemonRoutes(router, hub, options.server?.withLock);
  app.use(router.routes());
  app.use((ctx) => {
    if (ctx.respond === false || ctx.body !== undefined) return;
    const allow = ALLOW[ctx.path];
    if (allow) throw new HubError('http.method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`, { data: { allow } });
    throw new HubError('http.not_found', `no route ${ctx.method} ${ctx.path}`);
  });
  return app;
}
