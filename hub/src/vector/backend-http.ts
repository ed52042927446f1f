// JSON over HTTP for the REST-based backends (Qdrant, Milvus) with the global (or an injected)
// fetch: per-request timeout, and every transport or server failure turned into a clear HubError.

import { HubError } from '../errors.js';

export type FetchFn = typeof globalThis.fetch;

export interface BackendHttpOptions {
  /** Human name for messages: `Qdrant`, `Milvus`. */
  backend: string;
  /** Base URL without a trailing slash. */
  baseUrl: string;
  headers: Record<string, string>;
  timeoutSeconds: number;
  /** The environment variable holding the credential, named when the server refuses it. */
  credentialVar: string;
  fetch?: FetchFn | undefined;
}

export interface BackendResponse {
  status: number;
  body: unknown;
}

/** The server's own error message from a JSON error body (Qdrant `status.error`, Milvus `message`). */
export function serverMessage(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const b = body as { status?: unknown; message?: unknown; error?: unknown };
  if (b.status && typeof b.status === 'object' && typeof (b.status as { error?: unknown }).error === 'string')
    return (b.status as { error: string }).error;
  if (typeof b.message === 'string' && b.message !== '') return b.message;
  if (typeof b.error === 'string') return b.error;
  return undefined;
}

/** A sender of JSON requests to one backend server. */
export interface BackendHttp {
  readonly where: string;
  /** Sends a request; 401/403 and transport failures throw; other statuses are returned. */
  send(method: string, path: string, body?: unknown): Promise<BackendResponse>;
  /** Like `send`, but any non-2xx status throws `backend.failed` with the server's message. */
  ok(method: string, path: string, body?: unknown): Promise<unknown>;
  /** A `backend.failed` error for a response that is not what the API documents. */
  malformed(path: string, detail: string): HubError;
}

function causeText(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message ?? String(err)} (${cause})` : (e.message ?? String(err));
}

export function createBackendHttp(options: BackendHttpOptions): BackendHttp {
  const fetchFn = options.fetch ?? globalThis.fetch;
  const { backend, baseUrl } = options;
  const malformed = (path: string, detail: string): HubError =>
    new HubError('backend.failed', `${backend} at ${baseUrl} answered ${path} with a malformed response: ${detail}`, { data: { backend: backend.toLowerCase(), path } });

  const send = async (method: string, path: string, body?: unknown): Promise<BackendResponse> => {
    let response: Response;
    try {
      response = await fetchFn(`${baseUrl}${path}`, {
        method,
        headers: { ...options.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(Math.round(options.timeoutSeconds * 1000)),
      });
    } catch (err) {
      const name = (err as { name?: string }).name;
      const message =
        name === 'TimeoutError' || name === 'AbortError'
          ? `${backend} at ${baseUrl} did not answer ${path} within ${options.timeoutSeconds} s (PALACE_BACKEND_TIMEOUT)`
          : `cannot reach ${backend} at ${baseUrl}: ${causeText(err)}`;
      throw new HubError('backend.unreachable', message, { cause: err, data: { backend: backend.toLowerCase(), url: baseUrl } });
    }
    const text = await response.text().catch(() => '');
    let parsed: unknown = undefined;
    if (text !== '') {
      try {
        parsed = JSON.parse(text) as unknown;
      } catch {
        if (response.status === 401 || response.status === 403) parsed = undefined;
        else if (response.ok) throw malformed(path, `not JSON: ${text.slice(0, 120)}`);
        else parsed = { message: text.slice(0, 300) };
      }
    }
    if (response.status === 401 || response.status === 403)
      throw new HubError(
        'backend.auth',
        `${backend} at ${baseUrl} refused the request (HTTP ${response.status}${serverMessage(parsed) ? `: ${serverMessage(parsed)}` : ''}); check ${options.credentialVar}`,
        { data: { backend: backend.toLowerCase(), url: baseUrl, status: response.status } },
      );
    return { status: response.status, body: parsed };
  };

  return {
    where: baseUrl,
    send,
    async ok(method, path, body) {
      const res = await send(method, path, body);
      if (res.status < 200 || res.status >= 300)
        throw new HubError('backend.failed', `${backend} at ${baseUrl} failed ${method} ${path} (HTTP ${res.status}): ${serverMessage(res.body) ?? 'no message'}`, {
          data: { backend: backend.toLowerCase(), status: res.status, path },
        });
      return res.body;
    },
    malformed,
  };
}
