// The openai-compat provider: any OpenAI-style POST {url}/embeddings endpoint (vLLM, Ollama, LM Studio,
// OpenAI, ...). Learns dimensions by embedding one probe text at creation. Never logs or echoes the key.

import { HubError } from '../errors.js';
import type { Logger } from '../log.js';
import { makeLogger } from '../log.js';
import type { EmbedKind, Embedder, EmbedderInfo } from './embedder.js';
import { normalize } from './embedder.js';
import type { EmbedderSpec } from './spec.js';

export interface OpenAiCompatOptions {
  /** The fetch to use (injected; defaults to the global one). */
  fetch?: typeof fetch;
  /** Texts per request (default 64). */
  batchSize?: number;
  logger?: Logger;
}

type OpenAiCompatSpec = Extract<EmbedderSpec, { provider: 'openai-compat' }>;

const DEFAULT_TIMEOUT_MS = 60_000;
const PROBE_TEXT = 'palace';

/** The embeddings endpoint for a base URL: `http://box:8000/v1` → `http://box:8000/v1/embeddings`. */
export function embeddingsEndpoint(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new HubError(
      'hub.config',
      `embedding API URL "${url}" is not a URL (e.g. http://gpu-box:8000/v1)`,
      { field: 'url' },
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new HubError('hub.config', `embedding API URL must be http or https, got ${parsed.protocol}`, {
      field: 'url',
    });
  }
  const path = parsed.pathname.replace(/\/+$/, '');
  parsed.pathname = path.endsWith('/embeddings') ? path : `${path}/embeddings`;
  return parsed;
}

/** The endpoint as shown in messages: no user info, no query string (either may carry a secret). */
function displayUrl(endpoint: URL): string {
  return `${endpoint.origin}${endpoint.pathname}`;
}

function decodeBase64Floats(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: number[] = [];
  for (let i = 0; i + 4 <= bytes.byteLength; i += 4) out.push(view.getFloat32(i, true));
  return out;
}

/** Builds the openai-compat Embedder; rejects with memory.embed_failed naming the URL when the probe fails. */
export async function createOpenAiCompatEmbedder(
  spec: OpenAiCompatSpec,
  options: OpenAiCompatOptions = {},
): Promise<Embedder> {
  const endpoint = embeddingsEndpoint(spec.url);
  const where = displayUrl(endpoint);
  const doFetch = options.fetch ?? fetch;
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? 64));
  const timeoutMs = spec.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const logger = options.logger ?? makeLogger('palace:embed');
  const apiKey = spec.apiKey?.trim() || undefined;
  const scrub = (text: string) => (apiKey ? text.split(apiKey).join('***') : text);
  const fail = (message: string, data: Record<string, unknown> = {}, cause?: unknown) =>
    new HubError('memory.embed_failed', scrub(message), {
      data: { url: where, ...data },
      ...(cause === undefined ? {} : { cause }),
    });

  const request = async (texts: string[]): Promise<number[][]> => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    let body: unknown;
    try {
      let response: Response;
      try {
        response = await doFetch(endpoint, {
          method: 'POST',
          headers,
          // Many servers reject empty strings in `input`; a single space embeds the same emptiness.
          body: JSON.stringify({ model: spec.model, input: texts.map((t) => (t.length === 0 ? ' ' : t)) }),
          signal: controller.signal,
        });
      } catch (err) {
        if (controller.signal.aborted)
          throw fail(`embedding request to ${where} timed out after ${timeoutMs} ms`, {}, err);
        const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
        const detail =
          typeof cause?.code === 'string'
            ? cause.code
            : typeof cause?.message === 'string'
              ? cause.message
              : (err as Error).message;
        throw fail(`could not reach the embedding API at ${where} (${detail})`, {}, err);
      }
      const text = await response.text().catch(() => '');
      if (!response.ok) {
        let detail = text.slice(0, 300);
        try {
          const parsed = JSON.parse(text) as {
            error?: { message?: unknown } | string;
            detail?: unknown;
            message?: unknown;
          };
          const message =
            typeof parsed.error === 'string'
              ? parsed.error
              : (parsed.error?.message ?? parsed.detail ?? parsed.message);
          if (typeof message === 'string') detail = message.slice(0, 300);
        } catch {
          // not JSON: keep the raw excerpt
        }
        const hint =
          response.status === 401 || response.status === 403 ? ' (check the embedding API key)' : '';
        throw fail(
          `embedding request to ${where} failed: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${hint}` +
            (detail ? `: ${detail}` : ''),
          { status: response.status },
        );
      }
      try {
        body = JSON.parse(text);
      } catch {
        throw fail(`embedding API at ${where} answered with something that is not JSON`, {
          status: response.status,
        });
      }
    } finally {
      clearTimeout(timer);
    }
    const data = (body as { data?: unknown } | null)?.data;
    if (!Array.isArray(data) || data.length !== texts.length) {
      throw fail(
        `embedding API at ${where} returned ${Array.isArray(data) ? data.length : 'no'} embeddings for ${texts.length} texts`,
      );
    }
    const rows = data.map((item: unknown, position) => {
      const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
      const vector = typeof embedding === 'string' ? decodeBase64Floats(embedding) : embedding;
      if (
        !Array.isArray(vector) ||
        vector.length === 0 ||
        !vector.every((x) => typeof x === 'number' && Number.isFinite(x))
      ) {
        throw fail(`embedding API at ${where} returned an embedding that is not a list of numbers`);
      }
      return { index: typeof index === 'number' ? index : position, vector: vector as number[] };
    });
    rows.sort((a, b) => a.index - b.index);
    if (rows.some((r, i) => r.index !== i))
      throw fail(`embedding API at ${where} returned embeddings with wrong indexes`);
    return rows.map((r) => r.vector);
  };

  const [probe] = await request([PROBE_TEXT]);
  const dimensions = probe?.length ?? 0;
  const info: EmbedderInfo = { provider: 'openai-compat', model: spec.model, dimensions, device: 'remote' };
  logger.debug('embedding through an openai-compatible API', { url: where, model: spec.model, dimensions });
  let closed = false;

  return {
    info: () => ({ ...info }),
    async embed(texts: readonly string[], _kind: EmbedKind): Promise<Float32Array[]> {
      if (closed) throw new HubError('memory.embed_failed', `the ${spec.model} embedder is closed`);
      const out: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        const vectors = await request(texts.slice(start, start + batchSize));
        for (const v of vectors) {
          if (v.length !== dimensions) {
            throw fail(
              `embedding API at ${where} returned a ${v.length}-d vector; it returned ${dimensions}-d before`,
            );
          }
          out.push(normalize(Float32Array.from(v)));
        }
      }
      return out;
    },
    async close(): Promise<void> {
      closed = true;
    },
  };
}
