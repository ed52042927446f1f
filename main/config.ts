// The tray app's one read of the environment: the palace configuration (through the hub's loader),
// which agents count as "this machine's", where logs go, and how the hub child is started.

import { hostname } from 'node:os';
import { join } from 'node:path';

import { loadConfig, type Env, type PalaceConfig } from '../hub/src/config.js';
import { canonicalPalace, readStoredToken, registrationPath } from '../hub/src/registration.js';

export interface TrayConfig {
  palace: Readonly<PalaceConfig>;
  palacePath: string;
  /** Port the supervised hub asks for (PALACE_TRAY_PORT, default 8765; 0 = any free port). */
  port: number;
  /** Bearer token for the hub: PALACE_MCP_HTTP_TOKEN, else the stored token file, else none. */
  token: string | undefined;
  registrationPath: string;
  peersPath: string;
  logDir: string;
  /** Names of this machine's agents (PALACE_TRAY_AGENTS, comma-separated), matched exactly. */
  agents: string[];
  /** Agent names starting with this (`<hostname>-`) are this machine's too. */
  agentPrefix: string;
  /** A Vite dev server to load instead of the hub's /ui (PALACE_UI_DEV_URL), for development. */
  devServerUrl: string | undefined;
  /** The environment handed to the hub child (this process's, plus the token). */
  childEnv: Record<string, string>;
}

export function loadTrayConfig(env: Env = process.env, host: string = hostname()): TrayConfig {
  const palace = loadConfig({}, env);
  const palacePath = canonicalPalace(palace.palacePath);
  const token = palace.httpToken ?? readStoredToken(palace.home, palacePath);
  const rawPort = env.PALACE_TRAY_PORT?.trim();
  const port = rawPort ? Number(rawPort) : 8765;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PALACE_TRAY_PORT: must be 0-65535, got '${rawPort}'`);
  const childEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) childEnv[key] = value;
  if (token) childEnv.PALACE_MCP_HTTP_TOKEN = token;
  return {
    palace,
    palacePath,
    port,
    token,
    registrationPath: registrationPath(palace.home, palacePath),
    peersPath: join(palacePath, 'peers.json'),
    logDir: join(palace.home, 'logs'),
    agents: (env.PALACE_TRAY_AGENTS ?? '')
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean),
    agentPrefix: `${host.split('.')[0]?.toLowerCase() ?? host}-`,
    devServerUrl: env.PALACE_UI_DEV_URL?.trim() || undefined,
    childEnv,
  };
}

/** Whether an agent name belongs to this machine: listed, or named `<hostname>-<harness>`. */
export function isLocalAgent(
  config: Pick<TrayConfig, 'agents' | 'agentPrefix'>,
  name: string | null,
): boolean {
  if (!name || name === '*') return false;
  return config.agents.includes(name) || name.toLowerCase().startsWith(config.agentPrefix);
}

export interface HubCommandInput {
  packaged: boolean;
  /** Electron's own binary (process.execPath). */
  execPath: string;
  /** The app's root: the checkout in development, resources/app.asar.unpacked when packaged. */
  appRoot: string;
  /** The node binary used in development. */
  nodePath?: string;
}

/** How to start the hub: system node in development, Electron's binary as Node when packaged. */
export function hubCommand(
  config: TrayConfig,
  input: HubCommandInput,
): { command: string; args: string[]; env: Record<string, string> } {
  const script = join(input.appRoot, 'bin', 'palace.js');
  const args = [
    script,
    '--palace',
    config.palacePath,
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(config.port),
  ];
  if (input.packaged)
    return { command: input.execPath, args, env: { ...config.childEnv, ELECTRON_RUN_AS_NODE: '1' } };
  return { command: input.nodePath ?? 'node', args, env: config.childEnv };
}
