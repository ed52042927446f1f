// PeerTransport over HTTP(S) with an injected fetch: bearer token from peers.json, a per-request
// timeout covering the whole body, a cap on response size, gzip accepted, no redirects (a token is
// never replayed to another origin). Every failure becomes a HubError whose message names the peer.

import { HubError } from '../errors.js';
import { readArtifactStream } from './artifact-stream.js';
import { peerBaseUrl } from './peer-url.js';
import type { PeerTransport } from './peer-transport.js';
import {
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  parseMessage,
  type MessageOf,
  type SyncMessageType,
} from './protocol.js';

export { peerBaseUrl };

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Largest decoded response accepted (an event page is served within 4 MiB of event text). */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/**
 * Largest artifact response read: a 4 MiB artifact (the local limit) with room for JSON escaping;
 * a larger one is refused while it streams, before it is held.
 */
export const MAX_ARTIFACT_RESPONSE_BYTES = 2 * 4 * 1024 * 1024 + 64 * 1024;

export interface HttpPeerTransportOptions {
  /** The peer's base URL (http or https); a trailing slash is ignored. */
  url: string;
  /** The peer's bearer token (from peers.json or PALACE_SYNC_PEER_TOKEN). */
  token?: string | undefined;
  /** The peer's name in messages. */
  name?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** An artifact body that sends nothing for this long is cut off (ms, default 15000). */
  stallMs?: number;
}

export const DEFAULT_STALL_MS = 15_000;


async function readCapped(res: Response, cap: number, what: string): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > cap) {
      await reader.cancel().catch(() => undefined);
      throw new HubError('sync.bad_message', `${what}: response is larger than ${cap} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `timed out after ${timeoutMs / 1000} s`;
  if (e.name === 'AbortError') return 'aborted (the sync loop is stopping)';
  const cause = e.cause?.code ?? e.cause?.message;
  if (e.message === 'terminated') return `connection lost mid-response${cause ? ` (${cause})` : ''}`;
  return `unreachable (${cause ?? e.message ?? String(err)})`;
}

function errorFromBody(body: string): { code?: string; message?: string } {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    const code = typeof parsed.error?.code === 'string' ? parsed.error.code : undefined;
    const message = typeof parsed.error?.message === 'string' ? parsed.error.message : undefined;
    return { ...(code ? { code } : {}), ...(message ? { message } : {}) };
  } catch {
    return {};
  }
}

export function createHttpPeerTransport(options: HttpPeerTransportOptions): PeerTransport {
  const base = peerBaseUrl(options.url);
  const name = options.name ?? base;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const cap = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  const headers: Record<string, string> = {
    Accept: 'application/json',
    'Accept-Encoding': 'gzip',
    [PROTOCOL_HEADER]: String(PROTOCOL_VERSION),
  };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;

  const failHttp = (status: number, body: string): HubError => {
    const remote = errorFromBody(body);
    const detail = remote.message ?? (body.trim().slice(0, 200) || `HTTP ${status}`);
    const data = { status, ...(remote.code ? { remote_code: remote.code } : {}) };
    if (status === 401)
      return new HubError(
        'sync.peer_failed',
        `peer '${name}' answered 401 Unauthorized: its token in peers.json is missing or wrong`,
        { data },
      );
    if (remote.code === 'sync.version_mismatch')
      return new HubError('sync.version_mismatch', `peer '${name}': ${detail}`, { data });
    if (remote.code === 'artifact.not_found')
      return new HubError('artifact.not_found', `peer '${name}': ${detail}`, { data });
    if (status === 404)
      return new HubError(
        'sync.peer_failed',
        `peer '${name}' does not serve palace sync at ${base} (404): not a palace hub, or too old`,
        { data },
      );
    return new HubError('sync.peer_failed', `peer '${name}' answered ${status}: ${detail}`, { data });
  };

  async function get<T extends SyncMessageType>(
    type: T,
    path: string,
    params: Record<string, string>,
    signal?: AbortSignal,
    limit = cap,
    extraHeaders: Record<string, string> = {},
  ): Promise<MessageOf<T>> {
    const query = new URLSearchParams(params).toString();
    const url = `${base}${path}${query ? `?${query}` : ''}`;
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let text: string;
    let status: number;
    try {
      const res = await doFetch(url, { method: 'GET', headers: { ...headers, ...extraHeaders }, signal: combined, redirect: 'error' });
      status = res.status;
      const declared = Number(res.headers.get('content-length') ?? '0');
      if (res.headers.get('content-encoding') === null && declared > limit) {
        await res.body?.cancel().catch(() => undefined);
        throw new HubError('sync.bad_message', `peer '${name}' ${path}: declares ${declared} bytes, more than the ${limit} accepted`);
      }
      text = await readCapped(res, limit, `peer '${name}' ${path}`);
    } catch (err) {
      if (err instanceof HubError) throw err;
      throw new HubError('sync.peer_failed', `peer '${name}' ${path}: ${describeFailure(err, timeoutMs)}`, {
        cause: err,
      });
    }
    if (status < 200 || status >= 300) throw failHttp(status, text);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new HubError('sync.bad_message', `peer '${name}' ${path}: the response is not JSON`);
    }
    try {
      return parseMessage(type, json);
    } catch (err) {
      const e = err as HubError;
      throw new HubError(e.code, `peer '${name}' ${path}: ${e.message}`, {
        cause: err,
        ...(e.data ? { data: e.data } : {}),
      });
    }
  }

  /** GET /sync/artifact with the content streamed to `path` (artifact-stream.ts). */
  async function artifactToFile(
    id: string,
    path: string,
    signal?: AbortSignal,
  ): Promise<{ message: MessageOf<'artifact'>; bytes: number; sha256: string }> {
    const what = `peer '${name}' /sync/artifact`;
    const limit = Math.min(cap, MAX_ARTIFACT_RESPONSE_BYTES);
    const url = `${base}/sync/artifact?${new URLSearchParams({ id }).toString()}`;
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let streamed;
    try {
      const res = await doFetch(url, { method: 'GET', headers, signal: combined, redirect: 'error' });
      if (res.status < 200 || res.status >= 300) throw failHttp(res.status, await readCapped(res, 64 * 1024, what));
      const declared = Number(res.headers.get('content-length') ?? '0');
      if (res.headers.get('content-encoding') === null && declared > limit) {
        await res.body?.cancel().catch(() => undefined);
        throw new HubError('sync.bad_message', `${what}: declares ${declared} bytes, more than the ${limit} accepted`);
      }
      const reader = res.body?.getReader();
      if (!reader) throw new HubError('sync.bad_message', `${what}: the response has no body`);
      streamed = await readArtifactStream(reader, { path, what, maxResponseBytes: limit, stallMs });
    } catch (err) {
      if (err instanceof HubError) throw err;
      throw new HubError('sync.peer_failed', `${what}: ${describeFailure(err, timeoutMs)}`, { cause: err });
    }
    try {
      return { message: parseMessage('artifact', streamed.message), bytes: streamed.bytes, sha256: streamed.sha256 };
    } catch (err) {
      const e = err as HubError;
      throw new HubError(e.code, `${what}: ${e.message}`, { cause: err, ...(e.data ? { data: e.data } : {}) });
    }
  }

  return {
    artifactToFile,
    versionVector: (signal) => get('version_vector', '/sync/version_vector', {}, signal),
    ops: (origin, after, limit, signal) =>
      get('ops', '/sync/ops', { origin, after: String(after), limit: String(limit) }, signal),
    artifact: (id, signal) => get('artifact', '/sync/artifact', { id }, signal, Math.min(cap, MAX_ARTIFACT_RESPONSE_BYTES)),
    artifacts: (after, limit, signal) =>
      get('artifacts', '/sync/artifacts', { after: String(after), limit: String(limit) }, signal),
    memoryHeads: (forReplica, signal, extra) => get('memory_heads', '/sync/memory/heads', { for: forReplica }, signal, cap, extra),
    memoryPage: (origin, wing, after, limit, signal, extra) =>
      get('memory_page', '/sync/memory/page', { origin, wing, after: String(after), limit: String(limit) }, signal, cap, extra),
  };
}
