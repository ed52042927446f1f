// MCP sessions of the HTTP hub (2025 Streamable HTTP), held only for what needs one: resource
// subscriptions and the logging level. Every POST is still served by a fresh server (stateless), so
// a hub restart loses nothing a request needs. docs/decisions.md, "MCP sessions over HTTP":
// - `initialize` is answered with an Mcp-Session-Id; the client sends it on later requests and opens
//   GET /mcp (text/event-stream) for notifications, which the session writes to;
// - an unknown but well-formed session id (a restarted hub, a second hub) is adopted, never refused
//   with 404: its requests work as before, its subscriptions start empty (the client re-subscribes);
// - at most MAX_SESSIONS; the oldest without a stream is dropped first; a session with no stream and
//   no request for IDLE_MS is dropped; DELETE /mcp ends one.

import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';

import type { HubServices } from '../../services.js';
import { ListenRegistry } from '../../mcp/server/modern.js';
import type { McpSession } from '../../mcp/server/session.js';

const MAX_SESSIONS = 1_024;
const IDLE_MS = 3_600_000;
const HEARTBEAT_MS = 15_000;
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class HttpSession implements McpSession {
  readonly subscriptions = new Set<string>();
  logLevel: McpSession['logLevel'];
  lastSeen = Date.now();
  private stream: ServerResponse | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(readonly id: string) {}

  notify(notification: ServerNotification): boolean {
    const stream = this.stream;
    if (!stream || stream.writableEnded || stream.destroyed) return false;
    stream.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...notification })}\n\n`);
    return true;
  }

  get streaming(): boolean {
    return this.stream !== undefined;
  }

  /** Takes `res` as the session's one notification stream (a newer GET replaces an older one). */
  attachStream(res: ServerResponse): void {
    this.detachStream();
    this.stream = res;
    res.socket?.setTimeout(0);
    res.socket?.setNoDelay(true);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      'Mcp-Session-Id': this.id,
    });
    res.write(': connected\n\n');
    this.heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
    this.heartbeat.unref();
    res.once('close', () => {
      if (this.stream === res) this.detachStream();
    });
  }

  detachStream(): void {
    clearInterval(this.heartbeat);
    const stream = this.stream;
    this.stream = undefined;
    this.lastSeen = Date.now();
    if (stream && !stream.writableEnded) stream.end();
  }
}

export class McpSessions {
  private readonly sessions = new Map<string, HttpSession>();
  /** The 2026 era's subscriptions/listen streams (no session: each is one long POST). */
  readonly listens = new ListenRegistry();

  constructor(private readonly hub: HubServices) {}

  /** A new session for an initialize request. */
  create(): HttpSession {
    this.makeRoom();
    const session = new HttpSession(randomUUID());
    this.sessions.set(session.id, session);
    return session;
  }

  /** The session a request names: known, adopted when well-formed (a restarted hub), else undefined. */
  get(id: string | undefined): HttpSession | undefined {
    if (!id) return undefined;
    let session = this.sessions.get(id);
    if (!session && SESSION_ID.test(id)) {
      this.makeRoom();
      session = new HttpSession(id);
      this.sessions.set(id, session);
    }
    if (session) session.lastSeen = Date.now();
    return session;
  }

  end(id: string): boolean {
    const session = this.sessions.get(id);
    if (!session) return false;
    this.drop(session);
    return true;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Sessions with subscriptions and an open notification stream: clients waiting to be told (the hub does not idle out). */
  get listening(): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.streaming && s.subscriptions.size > 0) n++;
    return n + this.listens.listening;
  }

  closeAll(): void {
    this.listens.closeAll();
    for (const session of [...this.sessions.values()]) this.drop(session);
  }

  private drop(session: HttpSession): void {
    this.sessions.delete(session.id);
    session.detachStream();
    this.hub.resourceWatch.detach(session);
  }

  private makeRoom(): void {
    const now = Date.now();
    for (const s of this.sessions.values()) if (!s.streaming && now - s.lastSeen > IDLE_MS) this.drop(s);
    if (this.sessions.size < MAX_SESSIONS) return;
    const idle = [...this.sessions.values()].filter((s) => !s.streaming).sort((a, b) => a.lastSeen - b.lastSeen);
    const victim = idle[0] ?? [...this.sessions.values()].sort((a, b) => a.lastSeen - b.lastSeen)[0];
    if (victim) this.drop(victim);
  }
}
