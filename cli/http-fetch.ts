// A fetch for the hub client over node:http(s): what the CLI's calls to a local hub need (method,
// headers, a string body, a signal; status, headers, text/json and a streamed body), without loading
// Node's built-in fetch (undici), which costs more start-up than the rest of a logstream command.

import type { IncomingMessage } from 'node:http';

import type { FetchLike } from '../hub/src/client/hub-client.js';
import { PALACE_VERSION } from '../hub/src/version.js';

/** Every CLI request names the CLI, so the hub's /statusz keys CLI traffic apart from MCP clients. */
const USER_AGENT = `palace-cli/${PALACE_VERSION}`;

function headersOf(init: RequestInit | undefined): Record<string, string> {
  const out: Record<string, string> = { 'User-Agent': USER_AGENT };
  const h = init?.headers;
  if (!h) return out;
  if (Array.isArray(h)) for (const [k, v] of h as Array<[string, string]>) out[k] = v;
  else if (typeof (h as Headers).forEach === 'function') (h as Headers).forEach((v, k) => (out[k] = v));
  else Object.assign(out, h);
  return out;
}

/** The subset of Response the hub client reads, over one IncomingMessage. */
function responseOf(res: IncomingMessage): Response {
  let consumed = false;
  const chunks = async function* (): AsyncGenerator<Uint8Array> {
    if (consumed) throw new TypeError('body already read');
    consumed = true;
    for await (const chunk of res) yield chunk as Uint8Array;
  };
  const text = async (): Promise<string> => {
    const parts: Buffer[] = [];
    for await (const c of chunks()) parts.push(Buffer.from(c));
    return Buffer.concat(parts).toString('utf8');
  };
  const status = res.statusCode ?? 0;
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: res.statusMessage ?? '',
    headers: {
      get: (name: string): string | null => {
        const v = res.headers[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
      },
    },
    text,
    json: async (): Promise<unknown> => JSON.parse(await text()),
    body: {
      getReader: () => {
        const it = chunks();
        return {
          read: async () => {
            const r = await it.next();
            return r.done ? { done: true, value: undefined } : { done: false, value: r.value };
          },
          cancel: async () => {
            res.destroy();
          },
          releaseLock: () => undefined,
        };
      },
      cancel: async () => {
        res.destroy();
      },
    },
  } as unknown as Response;
}

export const httpFetch: FetchLike = async (input, init) => {
  const url = new URL(input);
  const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const body = typeof init?.body === 'string' ? init.body : undefined;
  return new Promise<Response>((resolve, reject) => {
    const req = request(
      url,
      { method: init?.method ?? 'GET', headers: headersOf(init), ...(init?.signal ? { signal: init.signal } : {}) },
      (res) => resolve(responseOf(res)),
    );
    req.once('error', reject);
    req.end(body);
  });
};
