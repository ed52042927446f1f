// GET /logstream/stream: Server-Sent Events. With a cursor (since_event_id or Last-Event-ID) it
// replays what came after it, then tails; without one it sends only events appended after the
// connection. Each frame's `data:` is the palace_event_list envelope and its `id:` the last event
// id in the frame, so Last-Event-ID resumes exactly. Heartbeat comment every 15 s; bounded clients.
// Backpressure: a page is read from the log only while the client's stream takes writes, one page per
// turn of the event loop; a client whose socket takes nothing for PALACE_SSE_STALL_MS while a frame
// waits gets a last `event: error` frame and is closed (it resumes with Last-Event-ID).

import { PassThrough } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';

import type { Context } from 'koa';

import { HubError } from '../../errors.js';
import type { EventPage } from '../../core/types.js';
import { eventFiltersFromParams } from '../../core/validate.js';
import type { HubServices } from '../../services.js';

const HEARTBEAT_MS = 15_000;
/** Events per frame: with backpressure, the most a client costs beyond its socket's buffers is one frame. */
const FRAME_LIMIT = 100;
/** After a drop, how long the socket may keep its unread bytes (the last frame among them) before it is destroyed. */
const DROP_GRACE_MS = 10_000;

export interface SseState {
  clients: number;
  /**
   * Frames read since the log last changed, by filters and cursor: stream clients with the same
   * filters at the same cursor (every client of an agent's inbox, after a commit) share one read and
   * one serialisation. Emptied by every change of the log and at the end of the turn that filled it.
   */
  frames?: SharedFrames;
}

interface Frame {
  page: EventPage;
  json: string;
}

class SharedFrames {
  private readonly byKey = new Map<string, Frame>();
  private clearing = false;
  private users = 0;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly hub: HubServices) {}

  /**
   * A stream client starts using the cache (call before it subscribes to the log): while any does, a
   * change of the log empties it, and this listener, subscribed before theirs, runs before they read.
   * Without clients nothing listens (the change feed polls only while something does).
   */
  attach(): () => void {
    if (this.users++ === 0) this.unsubscribe = this.hub.logstream.onChange(() => this.byKey.clear());
    let attached = true;
    return () => {
      if (!attached) return;
      attached = false;
      if (--this.users > 0) return;
      this.unsubscribe?.();
      this.unsubscribe = undefined;
      this.byKey.clear();
    };
  }

  read(key: string, load: () => EventPage): Frame {
    const known = this.byKey.get(key);
    if (known) return known;
    const page = load();
    const frame = { page, json: JSON.stringify(page) };
    this.byKey.set(key, frame);
    if (!this.clearing) {
      this.clearing = true;
      setImmediate(() => {
        this.clearing = false;
        this.byKey.clear();
      });
    }
    return frame;
  }
}

export function sseHandler(hub: HubServices, state: SseState, heartbeatMs = HEARTBEAT_MS) {
  const frames = (state.frames ??= new SharedFrames(hub));
  return (ctx: Context): void => {
    const filters = eventFiltersFromParams(ctx.query); // every palace_event_list filter, preview and since_created_at included
    const filterKey = JSON.stringify(filters);
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
    const socket = ctx.req.socket;
    socket.setTimeout(0);
    socket.setNoDelay(true);
    ctx.status = 200;
    ctx.set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    ctx.body = stream;

    const stallMs = hub.config.sseStallMs;
    let closed = false;
    /** write() returned false: nothing more is read from the log for this client until 'drain'. */
    let blocked = false;
    let stallTimer: NodeJS.Timeout | undefined;
    let lastWrite = Date.now();
    const write = (text: string): void => {
      lastWrite = Date.now();
      if (stream.write(text) || blocked) return;
      blocked = true;
      stallTimer = setTimeout(drop, stallMs);
      stallTimer.unref();
    };
    const sendFrame = ({ page, json }: Frame): void => {
      const last = page.events.at(-1)?.id;
      write(`id: ${last ?? cursor ?? ''}\ndata: ${json}\n\n`);
    };

    /** Something may be unsent (a replay is due or the log changed) since the pump last looked. */
    let pending = false;
    let pumping = false;
    const pump = async (): Promise<void> => {
      pumping = true;
      try {
        while (pending && !blocked && !closed) {
          pending = false;
          const from = cursor;
          const frame = frames.read(`${filterKey}\n${from ?? ''}`, () => hub.logstream.list({ ...filters, since_event_id: from, limit: FRAME_LIMIT }));
          const page = frame.page;
          if (page.count > 0) sendFrame(frame);
          cursor = page.cursor ?? cursor;
          if (page.has_more) pending = true;
          await nextTurn(); // one page per turn: other requests run between pages
        }
      } catch (err) {
        hub.log.warn('stream query failed', { message: (err as Error).message });
      } finally {
        pumping = false;
      }
    };
    const schedule = (): void => {
      pending = true;
      if (!pumping && !blocked && !closed) void pump();
    };
    stream.on('drain', () => {
      blocked = false;
      clearTimeout(stallTimer);
      if (pending) schedule();
    });

    const detach = frames.attach();
    const unsubscribe = hub.logstream.onChange(schedule);
    const heartbeat = setInterval(() => {
      if (!blocked && Date.now() - lastWrite >= heartbeatMs - 50) write(': ping\n\n');
    }, heartbeatMs);
    heartbeat.unref();
    const close = (): void => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      clearTimeout(stallTimer);
      unsubscribe();
      detach();
      state.clients--;
      stream.end();
    };
    /** The client stayed behind past the bound: a last frame says why and where to resume, then it is closed. */
    function drop(): void {
      if (closed || !blocked) return;
      const message = `this stream client took no data for ${stallMs} ms while the hub had events for it (PALACE_SSE_STALL_MS); reconnect with Last-Event-ID to resume`;
      const error = { code: 'http.busy', message, data: { last_event_id: cursor } };
      stream.write(`id: ${cursor ?? ''}\nevent: error\ndata: ${JSON.stringify({ error })}\n\n`);
      hub.log.warn('dropped a stalled stream client', { stall_ms: stallMs, remote: ctx.ip });
      close();
      // Its socket still holds what it has not read (the last frame among it): a grace, then the fd is freed.
      const grace = setTimeout(() => socket.destroy(), Math.max(stallMs, DROP_GRACE_MS));
      grace.unref();
      ctx.res.once('close', () => clearTimeout(grace));
    }
    ctx.req.on('close', close);
    ctx.res.on('close', close);
    stream.on('error', close);
    write(': connected\n\n');
    if (explicit) schedule();
  };
}
