// The messages between a hub and its LanceDB child process (lancedb-host.ts), and errors as they
// cross: a HubError keeps its code, field and data; any other error its message and errno code.

import { HubError, type ErrorCode } from '../errors.js';
import type { VectorStore } from './vector-store.js';

export type StoreMethod = Exclude<keyof VectorStore, 'close'>;

export type HostRequest = { id: number; method: StoreMethod | 'close'; args: unknown[] };

export type HostReply =
  | { type: 'ready'; rss: number }
  | { type: 'open_failed'; error: WireError }
  | { id: number; ok: true; value: unknown; rss: number; busy: boolean }
  | { id: number; ok: false; error: WireError; rss: number; busy: boolean };

/** An error as it crosses the process boundary; HubErrors keep their code, others their errno code. */
export interface WireError {
  hub: boolean;
  code?: string;
  message: string;
  field?: string;
  data?: Record<string, unknown>;
}

export function toWire(err: unknown): WireError {
  if (err instanceof HubError) return { hub: true, ...err.toJSON() };
  const code = (err as { code?: unknown } | null)?.code;
  return { hub: false, message: err instanceof Error ? err.message : String(err), ...(typeof code === 'string' ? { code } : {}) };
}

export function fromWire(wire: WireError): Error {
  if (wire.hub)
    return new HubError(wire.code as ErrorCode, wire.message, {
      ...(wire.field === undefined ? {} : { field: wire.field }),
      ...(wire.data === undefined ? {} : { data: wire.data }),
    });
  return Object.assign(new Error(wire.message), wire.code === undefined ? {} : { code: wire.code });
}
