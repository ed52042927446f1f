// The CLI's one read of the process environment: it hands process.env to the hub's config loader
// so flag > PALACE_* > ~/.palace/config.json > defaults resolves in exactly one place.

import { loadConfig, type ConfigOverrides, type PalaceConfig } from '../hub/src/config.js';

export function cliConfig(overrides: ConfigOverrides = {}): Readonly<PalaceConfig> {
  return loadConfig(overrides, process.env);
}

/** The environment, for commands that start child processes (never used to read settings). */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...extra };
}

/** The bearer token for `palace sync --peer URL` (PALACE_SYNC_PEER_TOKEN): tokens never go on argv. */
export function syncPeerToken(): string | undefined {
  return process.env.PALACE_SYNC_PEER_TOKEN?.trim() || undefined;
}

/** Whether results on stdout may use colour: a terminal, and NO_COLOR (no-color.org) unset or empty. */
export function stdoutColor(): boolean {
  return Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
}
