// Ready-to-paste MCP client configuration for Claude Code, Codex and Cursor, over HTTP (to a hub)
// and over stdio (`palace mcp`, which forwards to the live hub). Used by `palace serve`, the dashboard
// and the tray. The stdio ones run the absolute command the hub reports (launcher.ts: node and
// bin/palace.js), so they work pasted as they are, with no `palace` on the client's PATH.

/** An absolute command that runs palace: node (or Electron as node) and bin/palace.js. */
export interface StdioCommand {
  /** Absolute path of the executable. */
  command: string;
  /** Arguments before `mcp` (the launcher script). */
  args: string[];
  /** Environment the command needs (Electron's binary runs as node only with ELECTRON_RUN_AS_NODE=1). */
  env?: Record<string, string> | undefined;
}

export interface ClientConfigInput {
  /** Hub base URL, e.g. http://127.0.0.1:8765 */
  url: string;
  /** The token to show literally, or undefined to show an environment reference. */
  token?: string | undefined;
  /** Whether the hub needs a token at all. */
  needsToken: boolean;
  palacePath?: string;
  /** The absolute command that runs palace (the hub's /status palace.stdio_command); default `palace` on PATH. */
  stdio?: StdioCommand | undefined;
}

export interface ClientConfig {
  client: 'claude-code' | 'codex' | 'cursor';
  transport: 'http' | 'stdio';
  /** Where it goes: a shell command or a config file path. */
  where: string;
  text: string;
}

/**
 * The base URL to give clients: a loopback bind's own address; for a wildcard bind (0.0.0.0, ::)
 * the machine's host name, since 127.0.0.1 is useless to a remote client; else the bound address.
 */
export function clientBaseUrl(bound: { scheme: string; host: string; port: number }, machineHostname: string): string {
  const host = bound.host.toLowerCase();
  const wildcard = ['0.0.0.0', '::', '[::]', ''].includes(host);
  const name = wildcard ? machineHostname : host;
  const field = name.includes(':') && !name.startsWith('[') ? `[${name}]` : name;
  return `${bound.scheme}://${field}:${bound.port}`;
}

/** A word for a POSIX shell: as is when it holds only safe characters, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A TOML basic string. */
function tomlString(text: string): string {
  return JSON.stringify(text);
}

export function clientConfigs(input: ClientConfigInput): ClientConfig[] {
  const mcpUrl = `${input.url}/mcp`;
  const tokenText = input.token ?? '$PALACE_MCP_HTTP_TOKEN';
  const header = input.needsToken ? ` --header "Authorization: Bearer ${tokenText}"` : '';
  const palaceArgs = input.palacePath ? ['--palace', input.palacePath] : [];
  const stdio = input.stdio ?? { command: 'palace', args: [] };
  const stdioArgs = [...stdio.args, 'mcp', ...palaceArgs];
  const env = stdio.env && Object.keys(stdio.env).length > 0 ? stdio.env : undefined;
  const cursorHttp = {
    mcpServers: { palace: { url: mcpUrl, ...(input.needsToken ? { headers: { Authorization: `Bearer ${tokenText}` } } : {}) } },
  };
  const cursorStdio = { mcpServers: { palace: { command: stdio.command, args: stdioArgs, ...(env ? { env } : {}) } } };
  const claudeEnv = env ? Object.entries(env).map(([k, v]) => ` -e ${shellWord(`${k}=${v}`)}`).join('') : '';
  const codexEnv = env ? [`env = { ${Object.entries(env).map(([k, v]) => `${k} = ${tomlString(v)}`).join(', ')} }`] : [];
  return [
    { client: 'claude-code', transport: 'http', where: 'shell', text: `claude mcp add --transport http palace ${mcpUrl}${header}` },
    {
      client: 'claude-code',
      transport: 'stdio',
      where: 'shell',
      text: `claude mcp add${claudeEnv} palace -- ${[stdio.command, ...stdioArgs].map(shellWord).join(' ')}`,
    },
    {
      client: 'codex',
      transport: 'http',
      where: '~/.codex/config.toml',
      text: [`[mcp_servers.palace]`, `url = "${mcpUrl}"`, ...(input.needsToken ? [`bearer_token_env_var = "PALACE_MCP_HTTP_TOKEN"`] : [])].join('\n'),
    },
    {
      client: 'codex',
      transport: 'stdio',
      where: '~/.codex/config.toml',
      text: [`[mcp_servers.palace]`, `command = ${tomlString(stdio.command)}`, `args = [${stdioArgs.map(tomlString).join(', ')}]`, ...codexEnv].join('\n'),
    },
    { client: 'cursor', transport: 'http', where: '~/.cursor/mcp.json', text: JSON.stringify(cursorHttp, null, 2) },
    { client: 'cursor', transport: 'stdio', where: '~/.cursor/mcp.json', text: JSON.stringify(cursorStdio, null, 2) },
  ];
}

/** The configs as a printable block: over HTTP, the lean profile, then over stdio (`palace mcp`). */
export function clientConfigText(input: ClientConfigInput): string {
  const names = { 'claude-code': 'Claude Code', codex: 'Codex', cursor: 'Cursor' } as const;
  const configs = clientConfigs(input);
  const block = (transport: ClientConfig['transport']): string =>
    configs
      .filter((c) => c.transport === transport)
      .map((c) => `# ${names[c.client]} (${c.where})\n${c.text}`)
      .join('\n\n');
  const lean = [
    '# Lean tool profile (everyday tools + palace_tools/palace_call; a fraction of the context): the same',
    `# configs with this URL, or \`mcp --profile lean\` over stdio`,
    `${input.url}/mcp?profile=lean`,
  ].join('\n');
  const stdio = [
    '# Or over stdio: `palace mcp`, started by the client, forwards to this hub (answers locally when none',
    '# runs). The command is absolute, so it needs no `palace` on the PATH.',
  ].join('\n');
  return `${block('http')}\n\n${lean}\n\n${stdio}\n\n${block('stdio')}`;
}
