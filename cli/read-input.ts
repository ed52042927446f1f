// Reads text input for the CLI byte-exactly: files or stdin as raw bytes, decoded as strict UTF-8
// (a BOM is kept, invalid bytes are an error, nothing is translated).

import { readFileSync } from 'node:fs';

import { invalid } from '../hub/src/errors.js';

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Reads `path` (or stdin for '-') as exact UTF-8 text. `field` names the flag in errors. */
export function readText(path: string, field: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path === '-' ? 0 : path);
  } catch (err) {
    throw invalid(field, `cannot read ${path === '-' ? 'stdin' : path}: ${(err as Error).message}`);
  }
  try {
    return decoder.decode(bytes);
  } catch {
    throw invalid(field, `${path === '-' ? 'stdin' : path} is not valid UTF-8 text; artifacts and bodies are UTF-8 text in version 1`);
  }
}

/** Parses a JSON object given on the command line. */
export function jsonObject(text: string | undefined, field: string): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalid(field, `${field} is not valid JSON: ${(err as Error).message}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid(field, `${field} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** A flag's text as a number when it is a whole number; anything else is passed on for the tool's schema to refuse by name. */
export function wholeNumberArg(v: unknown): unknown {
  return typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v;
}
