// A loopback HTTP server (node:http, port 0) that records every request and answers from a
// handler: the allowed fake for servers that cannot run here (Qdrant, Milvus), to check what the
// adapters send against each server's documented REST API.

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path with query string. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The JSON body, parsed (undefined when there was none). */
  body: unknown;
}

export interface Reply {
  status?: number;
  /** Sent as JSON unless it is a string (sent verbatim). */
  body?: unknown;
}

export type Handler = (req: RecordedRequest) => Reply | undefined;

export interface RecordingServer {
  url: string;
  requests: RecordedRequest[];
  /** Replaces the handler; an undefined reply is a 404 `{}`. */
  handle(handler: Handler): void;
  /** Requests whose `METHOD path` (query string dropped) matches. */
  find(method: string, path: string): RecordedRequest[];
  stop(): Promise<void>;
}

export async function startRecordingServer(handler: Handler = () => undefined): Promise<RecordingServer> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = undefined;
      if (text !== '') {
        try {
          body = JSON.parse(text) as unknown;
        } catch {
          body = text;
        }
      }
      const recorded: RecordedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body };
      requests.push(recorded);
      let reply: Reply | undefined;
      try {
        reply = current(recorded);
      } catch (err) {
        reply = { status: 500, body: { message: String(err) } };
      }
      const status = reply?.status ?? (reply ? 200 : 404);
      const payload = reply?.body ?? {};
      res.writeHead(status, { 'content-type': typeof payload === 'string' ? 'text/plain' : 'application/json' });
      res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    handle(next) {
      current = next;
    },
    find(method, path) {
      return requests.filter((r) => r.method === method && r.url.split('?')[0] === path);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
