// Reads and parses a JSON request body with a hard size cap (the SDK applies no cap when it is
// handed a parsed body). Oversized bodies are refused before they are buffered; bytes that are not
// valid UTF-8 are refused, never replaced with U+FFFD.

import type { IncomingMessage } from 'node:http';

import { HubError, invalid } from '../errors.js';

export const MAX_BODY_BYTES = 16 * 1024 * 1024;

export type ParsedBody = { ok: true; value: unknown } | { ok: false; reason: 'too_large' | 'encoding' | 'parse' };

/** What a refused body is told, per reason. */
export const BODY_ENCODING_MESSAGE = 'the request body is not valid UTF-8 (JSON text must be UTF-8); nothing was stored';

export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<ParsedBody> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return { ok: false, reason: 'too_large' };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      return { ok: false, reason: 'too_large' };
    }
    chunks.push(chunk as Buffer);
  }
  let text: string;
  try {
    // fatal: a malformed sequence throws instead of becoming U+FFFD (Buffer#toString replaces silently).
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.concat(chunks));
  } catch {
    return { ok: false, reason: 'encoding' };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, reason: 'parse' };
  }
}

export function tooLarge(limit = MAX_BODY_BYTES): HubError {
  return new HubError('input.too_large', `request body is larger than ${limit} bytes`);
}

/** The HubError of a refused body: too large, not UTF-8, or not JSON (`notJson` says what was expected). */
export function bodyError(parsed: { reason: 'too_large' | 'encoding' | 'parse' }, limit: number, notJson = 'the request body is not JSON'): HubError {
  if (parsed.reason === 'too_large') return tooLarge(limit);
  if (parsed.reason === 'encoding') return invalid('body', BODY_ENCODING_MESSAGE);
  return invalid('body', notJson);
}
