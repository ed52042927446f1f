// Owns diagnostic output: namespaced, structured lines on stderr. Stdout belongs to protocols
// and --json output, so nothing here ever writes there.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(namespace: string): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_KEYS = /token|secret|password|authorization|api[-_]?key/i;

/** Replaces values of secret-looking keys with *** so they never reach a log line. */
export function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) out[key] = SECRET_KEYS.test(key) ? '***' : value;
  return out;
}

export interface LoggerOptions {
  level?: LogLevel;
  write?: (line: string) => void;
  now?: () => Date;
}

/** A logger for `namespace` (e.g. `palace:hub:sync`) writing one line per record to stderr. */
export function makeLogger(namespace: string, options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const now = options.now ?? (() => new Date());
  const emit = (lvl: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (ORDER[lvl] < ORDER[level]) return;
    const extra = fields && Object.keys(fields).length > 0 ? ' ' + JSON.stringify(redact(fields)) : '';
    write(`${now().toISOString()} ${lvl.toUpperCase()} ${namespace} ${message}${extra}`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (ns) => makeLogger(`${namespace}:${ns}`, options),
  };
}

/** A logger that drops everything (tests, quiet CLI paths). */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
