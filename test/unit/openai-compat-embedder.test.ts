// The openai-compat provider against a local node:http server implementing POST /v1/embeddings:
// batching, ordering by index, normalisation, the bearer key, and every error path naming the URL.

import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { Embedder } from '../../hub/src/embed/embedder.js';
import {
  createOpenAiCompatEmbedder,
  embeddingsEndpoint,
} from '../../hub/src/embed/openai-compat-embedder.js';
import { makeLogger, silentLogger } from '../../hub/src/log.js';
import { catchHubError, rejectedHubError } from '../helpers/errors.js';

const KEY = 'sk-test-7f3a9c';
const DIMS = 8;

/** The server's raw (unnormalised) vector for a text: deterministic, from its sha256. */
function rawVector(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  return Array.from({ length: DIMS }, (_, i) => (digest[i] ?? 0) - 100);
}

function normalized(v: number[]): number[] {
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
}

interface Received {
  path: string;
  authorization: string | undefined;
  body: { model?: string; input?: string[] };
}

type Mode = 'ok' | 'hang' | 'not-json' | 'short' | 'base64' | 'echo-key-error' | 'dims-change';

let baseUrl = '';
let received: Received[] = [];
let mode: Mode = 'ok';
let closeServer: () => Promise<void> = async () => undefined;

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Received['body'];
  received.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
  if (req.method !== 'POST' || req.url !== '/v1/embeddings')
    return reply(res, 404, { error: { message: `no route ${req.url}` } });
  if (mode === 'hang') return;
  if (mode === 'echo-key-error')
    return reply(res, 429, { error: { message: `rate limit for key ${req.headers.authorization}` } });
  if (req.headers.authorization !== `Bearer ${KEY}`)
    return reply(res, 401, { error: { message: 'Incorrect API key provided' } });
  if (mode === 'not-json') {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html>proxy login</html>');
    return;
  }
  const input = body.input ?? [];
  if (input.some((t) => t.length === 0))
    return reply(res, 400, { error: { message: 'input must not contain empty strings' } });
  const dims = mode === 'dims-change' && !input.includes('palace') ? DIMS + 1 : DIMS;
  const data = input.map((text, index) => {
    const v = [...rawVector(text), ...(dims > DIMS ? [1] : [])];
    const embedding = mode === 'base64' ? Buffer.from(Float32Array.from(v).buffer).toString('base64') : v;
    return { object: 'embedding', index, embedding };
  });
  data.reverse(); // out of order on purpose: the client must order by index
  if (mode === 'short') data.pop();
  reply(res, 200, { object: 'list', model: body.model, data, usage: { prompt_tokens: 1, total_tokens: 1 } });
}

beforeAll(async () => {
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  closeServer = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
});
afterAll(async () => closeServer());
beforeEach(() => {
  received = [];
  mode = 'ok';
});

function spec(overrides: { url?: string; apiKey?: string | undefined; timeoutMs?: number } = {}) {
  return {
    provider: 'openai-compat' as const,
    url: baseUrl,
    model: 'text-embed-test',
    apiKey: KEY,
    ...overrides,
  };
}

describe('openai-compat embedder', () => {
  let embedder: Embedder;
  beforeEach(async () => {
    embedder = await createOpenAiCompatEmbedder(spec(), { logger: silentLogger });
  });

  it('learns dimensions by embedding one probe text at creation, sending the bearer key', () => {
    expect(embedder.info()).toEqual({
      provider: 'openai-compat',
      model: 'text-embed-test',
      dimensions: DIMS,
      device: 'remote',
    });
    expect(received).toHaveLength(1);
    expect(received[0]).toEqual({
      path: '/v1/embeddings',
      authorization: `Bearer ${KEY}`,
      body: { model: 'text-embed-test', input: ['palace'] },
    });
  });

  it('embeds in batches of 64, in input order, L2-normalised', async () => {
    received = [];
    const texts = Array.from({ length: 150 }, (_, i) => `text number ${i}`);
    const vectors = await embedder.embed(texts, 'document');
    expect(received.map((r) => r.body.input?.length)).toEqual([64, 64, 22]);
    expect(vectors).toHaveLength(150);
    for (const [i, text] of texts.entries()) {
      const expected = normalized(rawVector(text));
      const got = Array.from(vectors[i] ?? []);
      expect(got).toHaveLength(DIMS);
      got.forEach((x, d) => expect(x).toBeCloseTo(expected[d] ?? NaN, 6));
    }
    expect(await embedder.embed([], 'query')).toEqual([]);
  });

  it('honours a smaller batch size and sends empty texts as a space', async () => {
    const small = await createOpenAiCompatEmbedder(spec(), { batchSize: 2, logger: silentLogger });
    received = [];
    const [a, b, c] = await small.embed(['one', '', 'three'], 'query');
    expect(received.map((r) => r.body.input)).toEqual([['one', ' '], ['three']]);
    expect(Array.from(b ?? [])).toEqual(Array.from(Float32Array.from(normalized(rawVector(' ')))));
    expect(a).toHaveLength(DIMS);
    expect(c).toHaveLength(DIMS);
  });

  it('accepts base64-encoded embeddings', async () => {
    mode = 'base64';
    const [v] = await embedder.embed(['hello'], 'document');
    Array.from(v ?? []).forEach((x, d) => expect(x).toBeCloseTo(normalized(rawVector('hello'))[d] ?? NaN, 6));
  });

  it('refuses after close', async () => {
    await embedder.close();
    expect((await rejectedHubError(embedder.embed(['x'], 'document'))).code).toBe('memory.embed_failed');
  });
});

describe('openai-compat errors', () => {
  it('names the URL and status on a wrong or missing key, never the key', async () => {
    const wrong = await rejectedHubError(
      createOpenAiCompatEmbedder(spec({ apiKey: 'sk-wrong-key' }), { logger: silentLogger }),
    );
    expect(wrong.code).toBe('memory.embed_failed');
    expect(wrong.message).toContain(`${baseUrl}/embeddings failed: HTTP 401`);
    expect(wrong.message).toContain('Incorrect API key provided');
    expect(wrong.message).toContain('check the embedding API key');
    expect(wrong.message).not.toContain('sk-wrong-key');
    expect(wrong.data?.status).toBe(401);

    const none = await rejectedHubError(
      createOpenAiCompatEmbedder(spec({ apiKey: undefined }), { logger: silentLogger }),
    );
    expect(none.message).toContain('HTTP 401');
    expect(received.at(-1)?.authorization).toBeUndefined();
  });

  it('scrubs the key if a server echoes it back', async () => {
    mode = 'echo-key-error';
    const err = await rejectedHubError(createOpenAiCompatEmbedder(spec(), { logger: silentLogger }));
    expect(err.message).toContain('HTTP 429');
    expect(err.message).toContain('Bearer ***');
    expect(err.message).not.toContain(KEY);
  });

  it('times out a server that never answers', async () => {
    mode = 'hang';
    const err = await rejectedHubError(
      createOpenAiCompatEmbedder(spec({ timeoutMs: 200 }), { logger: silentLogger }),
    );
    expect(err.code).toBe('memory.embed_failed');
    expect(err.message).toBe(`embedding request to ${baseUrl}/embeddings timed out after 200 ms`);
  });

  it('says when the API cannot be reached', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const err = await rejectedHubError(
      createOpenAiCompatEmbedder(spec({ url: `http://127.0.0.1:${port}/v1` }), { logger: silentLogger }),
    );
    expect(err.message).toBe(
      `could not reach the embedding API at http://127.0.0.1:${port}/v1/embeddings (ECONNREFUSED)`,
    );
  });

  it('rejects answers that are not JSON, short, or change dimensions', async () => {
    const embedder = await createOpenAiCompatEmbedder(spec(), { logger: silentLogger });
    mode = 'not-json';
    expect((await rejectedHubError(embedder.embed(['a'], 'document'))).message).toContain('not JSON');
    mode = 'short';
    expect((await rejectedHubError(embedder.embed(['a', 'b'], 'document'))).message).toContain(
      'returned 1 embeddings for 2 texts',
    );
    mode = 'dims-change';
    expect((await rejectedHubError(embedder.embed(['a'], 'document'))).message).toContain(
      'returned a 9-d vector; it returned 8-d before',
    );
  });

  it('answers 404 from a wrong path with the URL it tried', async () => {
    const err = await rejectedHubError(
      createOpenAiCompatEmbedder(spec({ url: baseUrl.replace('/v1', '/v2') }), { logger: silentLogger }),
    );
    expect(err.message).toContain(`${baseUrl.replace('/v1', '/v2')}/embeddings failed: HTTP 404`);
  });

  it('never logs the key', async () => {
    const lines: string[] = [];
    const logger = makeLogger('palace:embed', { level: 'debug', write: (l) => lines.push(l) });
    const embedder = await createOpenAiCompatEmbedder(spec(), { logger });
    await embedder.embed(['x'], 'document');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toContain(KEY);
  });
});

describe('embeddingsEndpoint', () => {
  it('appends /embeddings to a base URL once, keeping the query', () => {
    expect(embeddingsEndpoint('http://box:8000/v1').href).toBe('http://box:8000/v1/embeddings');
    expect(embeddingsEndpoint('http://box:8000/v1/').href).toBe('http://box:8000/v1/embeddings');
    expect(embeddingsEndpoint('https://api.example.com/v1/embeddings').href).toBe(
      'https://api.example.com/v1/embeddings',
    );
    expect(embeddingsEndpoint('https://x.example/openai?api-version=1').href).toBe(
      'https://x.example/openai/embeddings?api-version=1',
    );
  });

  it('refuses what is not an http(s) URL', () => {
    expect(catchHubError(() => embeddingsEndpoint('gpu-box:8000')).code).toBe('hub.config');
    expect(catchHubError(() => embeddingsEndpoint('not a url')).field).toBe('url');
  });
});
