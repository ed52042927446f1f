// Reads and parses a JSON request body with a hard size cap (the SDK applies no cap when it is
// handed a parsed body). Oversized bodies are refused before they are buffered.

import type { IncomingMessage } from 'node:http';

import { HubError } from '../errors.js';

export const MAX_BODY_BYTES = 16 * 1024 * 1024;

export type ParsedBody = { ok: true; value: unknown } | { ok: false; reason: 'too_large' | 'parse' };

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
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { ok: false, reason: 'parse' };
  }
}

export function tooLarge(limit = MAX_BODY_BYTES): HubError {
  return new HubError('input.too_large', `request body is larger than ${limit} bytes`);
}
