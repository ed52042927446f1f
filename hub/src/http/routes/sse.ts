// GET /logstream/stream: Server-Sent Events. With a cursor (since_event_id or Last-Event-ID) it
// replays what came after it, then tails; without one it sends only events appended after the
// connection. Each frame's `data:` is the palace_event_list envelope and its `id:` the last event
// id in the frame, so Last-Event-ID resumes exactly. Heartbeat comment every 15 s; bounded clients.

import { PassThrough } from 'node:stream';

import type { Context } from 'koa';

import { HubError } from '../../errors.js';
import type { EventPage } from '../../core/types.js';
import type { RawQuery } from '../../core/validate.js';
import type { HubServices } from '../../services.js';

const HEARTBEAT_MS = 15_000;
const FRAME_LIMIT = 500;
const FILTERS = ['to_agent', 'exclude_from_agent', 'from_agent', 'type', 'status', 'correlation_id', 'stream', 'room'] as const;

export interface SseState {
  clients: number;
}

function queryFrom(ctx: Context): RawQuery {
  const raw: RawQuery = {};
  for (const key of FILTERS) {
    const value = ctx.query[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  return raw;
}

export function sseHandler(hub: HubServices, state: SseState, heartbeatMs = HEARTBEAT_MS) {
  return (ctx: Context): void => {
    const filters = queryFrom(ctx);
    const explicit = (typeof ctx.query.since_event_id === 'string' && ctx.query.since_event_id) || ctx.get('Last-Event-ID') || null;
    // Validate filters and the cursor before any byte of the stream: a bad request is a 400.
    hub.logstream.list({ ...filters, since_event_id: explicit, limit: 1 });
    if (state.clients >= hub.config.sseMaxClients) {
      ctx.set('Retry-After', '5');
      throw new HubError('http.busy', `too many stream clients (PALACE_SSE_MAX_CLIENTS=${hub.config.sseMaxClients}); fall back to palace_event_wait`);
    }
    let cursor: string | null = explicit ?? hub.logstream.tipId();
    state.clients++;
    const stream = new PassThrough();
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    ctx.status = 200;
    ctx.set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    ctx.body = stream;

    let lastWrite = Date.now();
    const write = (text: string): void => {
      lastWrite = Date.now();
      stream.write(text);
    };
    const sendFrame = (page: EventPage): void => {
      const last = page.events.at(-1)?.id;
      write(`id: ${last ?? cursor ?? ''}\ndata: ${JSON.stringify(page)}\n\n`);
    };
    let draining = false;
    const drain = (): void => {
      if (draining || closed) return;
      draining = true;
      try {
        for (;;) {
          const page = hub.logstream.list({ ...filters, since_event_id: cursor, limit: FRAME_LIMIT });
          if (page.count > 0) sendFrame(page);
          cursor = page.cursor ?? cursor;
          if (!page.has_more) break;
        }
      } catch (err) {
        hub.log.warn('stream query failed', { message: (err as Error).message });
      } finally {
        draining = false;
      }
    };

    let closed = false;
    const unsubscribe = hub.logstream.onChange(drain);
    const heartbeat = setInterval(() => {
      if (Date.now() - lastWrite >= heartbeatMs - 50) write(': ping\n\n');
    }, heartbeatMs);
    heartbeat.unref();
    const close = (): void => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      unsubscribe();
      state.clients--;
      stream.end();
    };
    ctx.req.on('close', close);
    stream.on('error', close);
    write(': connected\n\n');
    if (explicit) drain();
  };
}
