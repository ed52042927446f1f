// Who is calling, for every route except /healthz (and the dashboard's static files): the hub token
// (compared in constant time), an agent's own secret (as the bearer token or in X-Palace-Agent-Token),
// or nothing (only on a hub with no token). The caller lands in ctx.state.caller and, for /mcp, in
// req.auth, where the MCP tool factory reads it (identity/identity.ts binds writes to it).

import { createHash, timingSafeEqual } from 'node:crypto';

import type { Middleware } from 'koa';

import { HubError } from '../../errors.js';
import { SECRET_PREFIX } from '../../identity/agent-registry.js';
import { AGENT_TOKEN_HEADER, ANONYMOUS, OPERATOR, authOfCaller, type Caller, type IdentityService } from '../../identity/identity.js';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time equality of a presented token and the expected one. */
export function tokenMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

function unauthorized(ctx: Parameters<Middleware>[0], error: HubError): never {
  ctx.set('WWW-Authenticate', 'Bearer realm="palace"');
  throw error;
}

/** Resolves the caller; refuses (401) a wrong hub token, or an agent secret the hub does not know. */
export function bearerAuth(token: string | undefined, isPublic: (path: string) => boolean, identity?: IdentityService): Middleware {
  return async (ctx, next) => {
    if (isPublic(ctx.path)) return next();
    const match = /^Bearer\s+(.+)$/i.exec(ctx.get('Authorization'));
    const bearer = match?.[1]?.trim();
    const header = ctx.get(AGENT_TOKEN_HEADER).trim();
    const hubOk = token !== undefined && bearer !== undefined && tokenMatches(bearer, token);
    let caller: Caller = token ? OPERATOR : ANONYMOUS;
    // An agent secret: in its own header, or as the bearer token when that is not the hub token.
    const secret = header || (!hubOk && bearer?.startsWith(SECRET_PREFIX) ? bearer : '');
    if (secret && identity) {
      try {
        caller = identity.agentOf(secret);
      } catch (err) {
        unauthorized(ctx, err as HubError);
      }
    } else if (token && !hubOk) {
      unauthorized(ctx, new HubError('auth.unauthorized', 'missing or wrong bearer token (Authorization: Bearer <token>, or your agent secret)'));
    }
    ctx.state.caller = caller;
    (ctx.req as { auth?: unknown }).auth = authOfCaller(caller);
    await next();
  };
}
