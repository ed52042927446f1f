// The top middleware: the one place a thrown error becomes an HTTP status and {error: {code, message}}.
// Handlers never set failure statuses themselves.

import type { Middleware } from 'koa';

import { httpStatusFor, toHubError } from '../../errors.js';
import type { Logger } from '../../log.js';

export function errorMiddleware(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const error = toHubError(err);
      if (error.code === 'internal') log.error('request failed', { path: ctx.path, message: error.message });
      ctx.status = httpStatusFor(error.code);
      ctx.body = { error: error.toJSON() };
      if (error.code === 'http.method_not_allowed' && Array.isArray(error.data?.allow))
        ctx.set('Allow', (error.data.allow as string[]).join(', '));
    }
  };
}
