// Owns the stable error codes and their one mapping to HTTP status, JSON-RPC codes and CLI exit codes.
// Callers branch on `code`, never on `message`.

/** Every error code palace can raise. Codes are stable API; messages are for people. */
export const ERROR_CODES = {
  'input.invalid': { http: 400, exit: 2 },
  'input.too_large': { http: 413, exit: 2 },
  'log.event_not_found': { http: 404, exit: 1 },
  'log.unknown_cursor': { http: 400, exit: 2 },
  'artifact.not_found': { http: 404, exit: 1 },
  'artifact.unknown_ref': { http: 400, exit: 2 },
  'store.failed': { http: 500, exit: 1 },
  'store.busy': { http: 503, exit: 1 },
  'store.full': { http: 507, exit: 1 },
  'auth.unauthorized': { http: 401, exit: 1 },
  'auth.forbidden': { http: 403, exit: 1 },
  'hub.read_only': { http: 403, exit: 1 },
  'hub.unreachable': { http: 502, exit: 1 },
  'hub.shutting_down': { http: 503, exit: 1 },
  'hub.config': { http: 500, exit: 2 },
  'lease.held': { http: 409, exit: 1 },
  'task.dependency_cycle': { http: 409, exit: 2 },
  'task.not_claimed': { http: 409, exit: 1 },
  /** An ack whose status skips the task order (applied on a task never claimed or patched, a claim on a done task). */
  'task.out_of_order': { http: 409, exit: 2 },
  'reservation.conflict': { http: 409, exit: 1 },
  /** `palace guard check`: a staged path is reserved exclusively by another agent (the hook refuses). */
  'guard.refused': { http: 409, exit: 3 },
  'memory.not_found': { http: 404, exit: 1 },
  'memory.embedder_mismatch': { http: 409, exit: 1 },
  'memory.embedder_missing': { http: 500, exit: 1 },
  'memory.embed_failed': { http: 500, exit: 1 },
  'memory.secret_refused': { http: 400, exit: 2 },
  'memory.vector_disabled': { http: 503, exit: 2 },
  'kg.not_found': { http: 404, exit: 1 },
  'sync.version_mismatch': { http: 409, exit: 1 },
  'sync.bad_message': { http: 502, exit: 1 },
  'sync.peer_failed': { http: 502, exit: 1 },
  'sync.hash_mismatch': { http: 422, exit: 1 },
  'sync.peers_file': { http: 500, exit: 2 },
  'sync.no_peers': { http: 400, exit: 2 },
  'sync.untrusted': { http: 403, exit: 1 },
  'sync.bad_signature': { http: 422, exit: 1 },
  'sync.clock_skew': { http: 422, exit: 1 },
  'sync.not_shared': { http: 403, exit: 1 },
  'sync.equivocation': { http: 409, exit: 1 },
  'backend.unreachable': { http: 502, exit: 1 },
  'backend.driver_missing': { http: 500, exit: 2 },
  'backend.auth': { http: 502, exit: 2 },
  'backend.failed': { http: 502, exit: 1 },
  'cypher.write_refused': { http: 403, exit: 1 },
  'cypher.unavailable': { http: 501, exit: 2 },
  'cypher.failed': { http: 400, exit: 2 },
  'http.not_found': { http: 404, exit: 1 },
  'http.method_not_allowed': { http: 405, exit: 1 },
  'http.unsupported_media_type': { http: 415, exit: 2 },
  'http.busy': { http: 503, exit: 1 },
  'mine.unknown_adapter': { http: 400, exit: 2 },
  'mine.unsupported_adapter': { http: 400, exit: 2 },
  'mine.source_missing': { http: 404, exit: 2 },
  'mine.path_refused': { http: 403, exit: 2 },
  'mine.extractor_missing': { http: 501, exit: 1 },
  'mine.extract_failed': { http: 422, exit: 1 },
  'patch.does_not_apply': { http: 409, exit: 1 },
  /** `palace patch apply`: the patch is not the live claim's (author, attempt or origin), or touches .git / links out. */
  'patch.foreign': { http: 409, exit: 3 },
  'patch.unsafe_path': { http: 422, exit: 3 },
  /** Identity (docs/identity.md): a write names someone other than the authenticated agent. */
  'identity.mismatch': { http: 403, exit: 1 },
  /** A registered name used without its secret, or a secret that is unknown, revoked or retired. */
  'identity.unproven': { http: 401, exit: 1 },
  /** An unregistered name on an enforced hub. */
  'identity.unregistered': { http: 403, exit: 1 },
  /** A name only the hub writes under (hub, a replica id, ...), or a name that cannot be registered. */
  'identity.reserved': { http: 403, exit: 1 },
  /** The caller may not do this (an agent retiring another, ...). */
  'identity.forbidden': { http: 403, exit: 1 },
  'agent.exists': { http: 409, exit: 1 },
  'agent.not_found': { http: 404, exit: 1 },
  /** An event type only the hub (or a tool with checks) appends, sent to palace_event_append. */
  'event.hub_only': { http: 403, exit: 1 },
  /** Releasing a live claim that is neither yours, nor on a task you requested, nor from the desk. */
  'claim.not_yours': { http: 403, exit: 1 },
  /** A write naming a claim attempt that is no longer live. */
  'task.stale_attempt': { http: 409, exit: 1 },
  /** Claiming a task whose request requires capabilities the agent was not registered with. */
  'task.capability_missing': { http: 403, exit: 1 },
  'git.failed': { http: 500, exit: 1 },
  internal: { http: 500, exit: 1 },
} as const satisfies Record<string, { http: number; exit: number }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error with a stable code, the offending field when there is one, and optional data. */
export class HubError extends Error {
  override readonly name = 'HubError';
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly data: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { field?: string; cause?: unknown; data?: Record<string, unknown> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.field = options.field;
    this.data = options.data;
  }

  /** The wire form used by HTTP bodies, tool results and `--json` CLI output. */
  toJSON(): { code: ErrorCode; message: string; field?: string; data?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      ...(this.field === undefined ? {} : { field: this.field }),
      ...(this.data === undefined ? {} : { data: this.data }),
    };
  }
}

/** Shorthand for the commonest error: bad input in one named field. */
export function invalid(field: string, message: string): HubError {
  return new HubError('input.invalid', message, { field });
}

export function isHubError(err: unknown): err is HubError {
  return err instanceof HubError;
}

/** Any thrown value as a HubError; unknown failures become `internal` with the original as cause. */
export function toHubError(err: unknown): HubError {
  if (err instanceof HubError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const sqliteCode = (err as { code?: unknown } | null)?.code;
  if (sqliteCode === 'SQLITE_BUSY' || sqliteCode === 'SQLITE_LOCKED') {
    return new HubError('store.busy', `the log is busy: ${message}`, { cause: err });
  }
  if (sqliteCode === 'SQLITE_CONSTRAINT_UNIQUE' || sqliteCode === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    return new HubError('input.invalid', `already stored: ${message}`, { cause: err });
  }
  if (sqliteCode === 'SQLITE_FULL' || sqliteCode === 'ENOSPC' || sqliteCode === 'EFBIG') {
    return new HubError('store.full', `the disk is full (or a file-size limit was reached): ${message}; free space and retry, nothing was stored`, { cause: err });
  }
  if (sqliteCode === 'SQLITE_IOERR_WRITE') {
    return new HubError(
      'store.failed',
      `could not write to storage (${sqliteCode}): ${message}; the disk may be full, a file-size limit reached or the device failing; nothing was stored`,
      { cause: err },
    );
  }
  if (typeof sqliteCode === 'string' && sqliteCode.startsWith('SQLITE_')) {
    return new HubError('store.failed', `storage error (${sqliteCode}): ${message}`, { cause: err });
  }
  return new HubError('internal', message, { cause: err });
}

export function httpStatusFor(code: ErrorCode): number {
  return ERROR_CODES[code].http;
}

export function exitCodeFor(code: ErrorCode): number {
  return ERROR_CODES[code].exit;
}

/**
 * palace's one JSON-RPC code of its own, for protocol-level faults only (the stdio proxy's "the hub
 * did not answer"): -32010, in the implementation-defined range and clear of the MCP SDK's codes
 * (-32000 connection closed, -32001 request timeout, -32042 URL elicitation). Tool failures, schema
 * violations included, are isError results carrying {error: {code, message, field}}, never this.
 */
export const RPC_HUB_FAULT = -32010;

/** JSON-RPC error code for a HubError: invalid params for input errors, palace's fault code otherwise. */
export function jsonRpcCodeFor(code: ErrorCode): number {
  if (code === 'input.invalid' || code === 'input.too_large' || code === 'log.unknown_cursor') return -32602;
  return RPC_HUB_FAULT;
}
