// Bearer-token check with a constant-time compare, for every route except /healthz (and the
// dashboard's static files). With no token configured (a loopback bind), nothing is enforced.

import { createHash, timingSafeEqual } from 'node:crypto';

import type { Middleware } from 'koa';

import { HubError } from '../../errors.js';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time equality of a presented token and the expected one. */
export function tokenMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

export function bearerAuth(token: string | undefined, isPublic: (path: string) => boolean): Middleware {
  return async (ctx, next) => {
    if (token && !isPublic(ctx.path)) {
      const header = ctx.get('Authorization');
      const match = /^Bearer\s+(.+)$/i.exec(header);
      if (!match?.[1] || !tokenMatches(match[1].trim(), token)) {
        ctx.set('WWW-Authenticate', 'Bearer realm="palace"');
        throw new HubError('auth.unauthorized', 'missing or wrong bearer token (Authorization: Bearer <token>)');
      }
    }
    await next();
  };
}
