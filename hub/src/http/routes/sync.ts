// The /sync/* routes (bearer-protected like every route but /healthz): version vector, one origin's
// events after an origin_seq (ending at a signed checkpoint), single artifacts with their signature,
// the list of artifacts that travel, the mesh estate, and POST /sync/round (run one round
// now; what `palace sync` asks a live hub for). Bodies are gzipped when the client accepts it.

import { hostname } from 'node:os';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

import type Router from '@koa/router';
import type { Context } from 'koa';

import { HubError, invalid } from '../../errors.js';
import type { HubServices } from '../../services.js';
import { localEstate } from '../../sync/mesh-estate.js';
import { parsePeerEntry } from '../../sync/peers-file.js';
import {
  PROTOCOL_HEADER,
  isSupportedProtocol,
  requestedProtocol,
  versionMismatch,
  type SyncMessage,
} from '../../sync/protocol.js';
import { artifactMessage, artifactsMessage, opsMessage, versionVectorMessage } from '../../sync/serve.js';
import { bodyError, readJsonBody } from '../read-body.js';

const gzipAsync = promisify(gzip);
const GZIP_MIN_BYTES = 1024;
// Level 1 already shrinks event pages about 6x, at a fifth of the CPU of the default level 6.
const GZIP_LEVEL = 1;
const ROUND_BODY_LIMIT = 64 * 1024;

/** Methods each sync path answers (for 405 + Allow). */
export const SYNC_ALLOW: Record<string, string[]> = {
  '/sync/version_vector': ['GET', 'HEAD'],
  '/sync/ops': ['GET', 'HEAD'],
  '/sync/artifact': ['GET', 'HEAD'],
  '/sync/artifacts': ['GET', 'HEAD'],
  '/sync/memory/heads': ['GET', 'HEAD'],
  '/sync/memory/page': ['GET', 'HEAD'],
  '/sync/peers': ['GET', 'HEAD'],
  '/sync/round': ['POST'],
};

function checkProtocol(ctx: Context): void {
  const version = requestedProtocol(ctx.get(PROTOCOL_HEADER) || undefined);
  if (version !== undefined && !isSupportedProtocol(version)) throw versionMismatch(ctx.get(PROTOCOL_HEADER));
}

async function send(ctx: Context, message: SyncMessage): Promise<void> {
  const json = Buffer.from(JSON.stringify(message), 'utf8');
  ctx.vary('Accept-Encoding');
  ctx.type = 'application/json; charset=utf-8';
  if (json.length >= GZIP_MIN_BYTES && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = await gzipAsync(json, { level: GZIP_LEVEL });
  } else ctx.body = json;
  ctx.type = 'application/json; charset=utf-8';
}

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function hubName(hub: HubServices): string {
  return hub.sync?.name ?? hostname();
}

/** How the routes are protected: with `tokenRequired`, every request here carried the hub's token. */
export interface SyncRouteOptions {
  tokenRequired: boolean;
}

export function syncRoutes(router: Router, hub: HubServices, options: SyncRouteOptions): void {
  const replica = () => hub.logstream.store.replica;

  router.get('/sync/version_vector', async (ctx) => {
    checkProtocol(ctx);
    await send(ctx, versionVectorMessage(replica(), hubName(hub)));
  });

  router.get('/sync/ops', async (ctx) => {
    checkProtocol(ctx);
    await send(
      ctx,
      opsMessage(replica(), {
        origin: one(ctx.query.origin),
        after: one(ctx.query.after),
        limit: one(ctx.query.limit),
      }),
    );
  });

  router.get('/sync/artifact', async (ctx) => {
    checkProtocol(ctx);
    await send(ctx, artifactMessage(replica(), one(ctx.query.id)));
  });

  router.get('/sync/artifacts', async (ctx) => {
    checkProtocol(ctx);
    await send(ctx, artifactsMessage(replica(), { after: one(ctx.query.after), limit: one(ctx.query.limit) }));
  });

  router.get('/sync/memory/heads', async (ctx) => {
    checkProtocol(ctx);
    if (!hub.memorySync) throw new HubError('sync.not_shared', 'this hub replicates no memory');
    await send(ctx, await hub.memorySync.heads({ params: { for: one(ctx.query.for) }, headers: ctx.headers }));
  });

  router.get('/sync/memory/page', async (ctx) => {
    checkProtocol(ctx);
    if (!hub.memorySync) throw new HubError('sync.not_shared', 'this hub replicates no memory');
    await send(
      ctx,
      hub.memorySync.page({
        params: { origin: one(ctx.query.origin), wing: one(ctx.query.wing), after: one(ctx.query.after), limit: one(ctx.query.limit) },
        headers: ctx.headers,
      }),
    );
  });

  router.get('/sync/peers', async (ctx) => {
    const estate =
      hub.sync?.estate() ??
      localEstate(replica(), {
        palacePath: hub.config.palacePath,
        name: hubName(hub),
        intervalSeconds: hub.config.syncIntervalSeconds,
      });
    await send(ctx, estate);
  });

  router.post('/sync/round', async (ctx) => {
    if (hub.readOnly)
      throw new HubError(
        'hub.read_only',
        'this hub is read-only: it serves sync but does not pull; run `palace sync` against the writer hub',
      );
    if (!hub.sync) throw new HubError('sync.peer_failed', 'peer sync is not running in this process');
    const parsed = await readJsonBody(ctx.req, ROUND_BODY_LIMIT);
    if (!parsed.ok && parsed.reason !== 'parse') throw bodyError(parsed, ROUND_BODY_LIMIT);
    const body = parsed.ok ? parsed.value : undefined;
    if (!parsed.ok && Number(ctx.get('content-length') || '0') > 0)
      throw invalid('body', 'the request body is not JSON');
    const rawPeer = body && typeof body === 'object' ? (body as { peer?: unknown }).peer : undefined;
    let peers;
    if (rawPeer !== undefined && rawPeer !== null) {
      let asked;
      try {
        asked = parsePeerEntry(rawPeer);
      } catch (err) {
        throw invalid('peer', (err as Error).message);
      }
      // A round targets a peer of peers.json (its entry, pinned key and token, is used); an ad-hoc URL
      // only when this hub requires its token, so no tokenless local process can aim the hub anywhere.
      const listed = hub.sync.listedPeer(asked.url);
      if (listed) peers = [{ ...listed, token: listed.token ?? asked.token }];
      else if (options.tokenRequired) peers = [asked];
      else
        throw new HubError(
          'sync.untrusted',
          `peer ${asked.url} is not in peers.json: a hub without a token syncs only with the peers listed there; add it to ${hub.sync.peersPath} (palace sync trust <url> --pin) or run the hub with a token`,
          { field: 'peer' },
        );
    }
    await send(ctx, await hub.sync.runRound(peers));
  });
}
