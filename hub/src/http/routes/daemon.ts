// The fast palace endpoints the CLI's list/move/graph/stats call on a live hub (bearer-protected
// like every route but /healthz): GET /list, PATCH /memory/{id}, GET /graph, GET /stats, GET /status/fast.

import type Router from '@koa/router';

import { HubError, invalid } from '../../errors.js';
import { ANONYMOUS, type Caller } from '../../identity/identity.js';
import { optionalPlace } from '../../memory/drawers/drawer-input.js';
import { graphView, listDrawers, statsView } from '../../memory/navigation/palace-views.js';
import type { HubServices } from '../../services.js';
import { hubStatus } from '../../status.js';
import { bodyError, readJsonBody } from '../read-body.js';

/** Methods each fixed daemon path answers (for 405 + Allow). */
export const DAEMON_ALLOW: Record<string, string[]> = {
  '/list': ['GET', 'HEAD'],
  '/graph': ['GET', 'HEAD'],
  '/stats': ['GET', 'HEAD'],
  '/status/fast': ['GET', 'HEAD'],
};

const PATCH_KEYS = new Set(['wing', 'room']);
/** A move names no writer (the body takes wing and room only; an author field is refused above). */
const NO_WRITER_FIELDS: ReadonlySet<string> = new Set(['drawer_id', 'wing', 'room']);

/** The caller the auth middleware resolved (ctx.state.caller); anonymous if none. */
function callerOf(state: { caller?: Caller }): Caller {
  return state.caller ?? ANONYMOUS;
}

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

type Lock = <T>(fn: () => Promise<T>) => Promise<T>;

export function daemonRoutes(router: Router, hub: HubServices, withLock: Lock = (fn) => fn()): void {
  router.get('/list', async (ctx) => {
    const q = ctx.query;
    ctx.body = await listDrawers(await hub.memory.get(), { wing: one(q.wing), room: one(q.room), limit: one(q.limit), offset: one(q.offset) });
  });

  router.patch('/memory/:id', async (ctx) => {
    if (hub.readOnly) throw new HubError('hub.read_only', 'this hub is read-only (--read-only): drawers cannot be moved here');
    const parsed = await readJsonBody(ctx.req, 64 * 1024);
    if (!parsed.ok) throw bodyError(parsed, 64 * 1024, 'the body must be JSON');
    const body = parsed.value;
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('body', 'the body must be a JSON object with wing and/or room');
    const extra = Object.keys(body).filter((k) => !PATCH_KEYS.has(k));
    if (extra.length > 0) throw invalid(extra[0] ?? 'body', `only wing and room can change here (got ${extra.join(', ')}); content is never edited`);
    const { wing, room } = body as { wing?: unknown; room?: unknown };
    const target = { wing: optionalPlace('wing', wing), room: optionalPlace('room', room) };
    if (target.wing === undefined && target.room === undefined) throw invalid('body', 'give wing and/or room to move the drawer to');
    // The same identity gate as its MCP twin palace_update_drawer (which records no writer): on an
    // enforced hub an unproven caller may not move a drawer; open loopback is unchanged.
    hub.identity.bind('palace_update_drawer', NO_WRITER_FIELDS, { drawer_id: ctx.params.id, ...target }, callerOf(ctx.state));
    const memory = await hub.memory.get();
    const moved = await withLock(() => memory.relocate(ctx.params.id, target));
    ctx.body = { success: true, drawer_id: moved.drawer_id, wing: moved.wing, room: moved.room };
  });

  router.get('/graph', async (ctx) => {
    ctx.body = await graphView(await hub.memory.get(), hub.kg.get(), one(ctx.query.limit));
  });

  router.get('/stats', async (ctx) => {
    ctx.body = await statsView(await hub.memory.get(), hub.kg.get(), hubStatus(hub));
  });

  // Never waits for the embedder: before memory is loaded it says so (and starts loading it).
  router.get('/status/fast', async (ctx) => {
    if (!hub.memory.isOpen()) {
      void hub.memory.get().catch(() => undefined);
      ctx.body = { memory_loaded: false, total_drawers: null, wings: {} };
      return;
    }
    const { wings } = await (await hub.memory.get()).listWings();
    ctx.body = { memory_loaded: true, total_drawers: Object.values(wings).reduce((a, b) => a + b, 0), wings };
  });
}
