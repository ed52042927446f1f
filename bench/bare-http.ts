// The hub benchmark's floor: a bare node:http server on loopback with no framework, no MCP and no
// validation. POST /append does one JSON.parse and one SQLite INSERT (better-sqlite3, the palace
// schema, WAL + synchronous=NORMAL) and answers the row's id; POST /wait is a long-poll answered by
// the next append; GET /stream is an SSE stream that gets one frame per append. Same-run reference only.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { AppendInput } from '../hub/src/logstream/logstream.js';
import { BareDb, bareRows } from './bare-sqlite.js';

export interface BareHttp {
  url: string;
  /** Called right after each append's INSERT committed (before anyone is answered). */
  onCommit: ((at: number) => void) | undefined;
  /** Long-polls held now (so the benchmark knows a wait is pending before it appends). */
  pendingWaits(): number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Starts the bare server over a fresh database in `dir`. */
export async function startBareHttp(dir: string): Promise<BareHttp> {
  const db = new BareDb(dir, 'palace');
  let seq = 1;
  const waits = new Set<ServerResponse>();
  const streams = new Set<ServerResponse>();
  const handle: BareHttp = {
    url: '',
    onCommit: undefined,
    pendingWaits: () => waits.size,
    close: async () => undefined,
  };

  const append = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const input = JSON.parse(await readBody(req)) as AppendInput;
    const rows = bareRows([input], seq++);
    db.insertRows(rows, 1);
    handle.onCommit?.(performance.now());
    const event = { id: String(rows[0]?.[0]), ...input };
    sendJson(res, event);
    for (const waiting of waits) sendJson(waiting, { events: [event], timed_out: false });
    waits.clear();
    const frame = `id: ${event.id}\ndata: ${JSON.stringify({ events: [event], count: 1 })}\n\n`;
    for (const stream of streams) stream.write(frame);
  };

  const server: Server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/append') {
      append(req, res).catch((err: Error) => {
        res.writeHead(500);
        res.end(err.message);
      });
    } else if (req.method === 'POST' && req.url === '/wait') {
      void readBody(req).then(() => {
        waits.add(res);
        res.once('close', () => waits.delete(res));
      });
    } else if (req.method === 'GET' && req.url === '/stream') {
      req.socket.setNoDelay(true);
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      res.write(': connected\n\n');
      streams.add(res);
      res.once('close', () => streams.delete(res));
    } else if (req.method === 'GET' && req.url === '/healthz') {
      res.end('ok');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  handle.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  handle.close = async () => {
    for (const stream of streams) stream.end();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    db.close();
  };
  return handle;
}
