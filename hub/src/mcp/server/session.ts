// What an MCP session holds beyond one request: its subscriptions (pushed by the palace's
// ResourceWatch, logstream/resource-watch.ts) and its logging level. A session is whatever carries
// notifications to one client: the HTTP hub's GET stream (http/routes/mcp-sessions.ts), the
// long-lived stdio server, or nothing (the CLI's in-process road, a client that never initialized).

import type { LoggingLevel, ServerNotification } from '@modelcontextprotocol/sdk/types.js';

import { findSecret } from '../../core/secrets.js';
import { redact } from '../../log.js';
import type { Subscriber } from '../../logstream/resource-watch.js';

export { INBOX_URI, TASK_URI, inboxUri, subscribable, taskUri } from '../../logstream/resource-watch.js';

export interface McpSession extends Subscriber {
  readonly id: string;
  /** Resource URIs this client subscribed to (resources/subscribe). */
  readonly subscriptions: Set<string>;
  /** The level logging/setLevel chose; undefined: no log messages are sent. */
  logLevel: LoggingLevel | undefined;
  /** Sends a notification outside any request; false when the session has no open channel. */
  notify(notification: ServerNotification): boolean;
}

const LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Whether a message at `level` passes the session's chosen level. */
export function logPasses(session: McpSession | undefined, level: LoggingLevel): boolean {
  if (!session?.logLevel) return false;
  return LEVELS.indexOf(level) >= LEVELS.indexOf(session.logLevel);
}

/**
 * Log data as a client may see it: secret-looking keys masked (log.ts redact) and any string that
 * looks like a credential (core/secrets.ts) replaced, at any depth. Callers send codes, names and
 * counts, never arguments or bodies; this is the second line.
 */
export function scrubLogData(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return findSecret(value) ? '[redacted: looks like a credential]' : value;
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubLogData(v, depth + 1));
  const masked = redact(value as Record<string, unknown>);
  return Object.fromEntries(Object.entries(masked).map(([k, v]) => [k, scrubLogData(v, depth + 1)]));
}

/** Sends a log message to the session when its level lets it through. */
export function sendLog(session: McpSession | undefined, level: LoggingLevel, data: Record<string, unknown>): void {
  if (!logPasses(session, level)) return;
  session?.notify({ method: 'notifications/message', params: { level, logger: 'palace', data: scrubLogData(data) } });
}

