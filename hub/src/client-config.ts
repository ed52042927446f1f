// Ready-to-paste MCP client configuration for Claude Code, Codex and Cursor, over HTTP (to a hub)
// and over stdio (`palace mcp`, which forwards to the live hub). Used by `palace serve` and the tray.

export interface ClientConfigInput {
  /** Hub base URL, e.g. http://127.0.0.1:8765 */
  url: string;
  /** The token to show literally, or undefined to show an environment reference. */
  token?: string | undefined;
  /** Whether the hub needs a token at all. */
  needsToken: boolean;
  palacePath?: string;
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

export function clientConfigs(input: ClientConfigInput): ClientConfig[] {
  const mcpUrl = `${input.url}/mcp`;
  const tokenText = input.token ?? '$PALACE_MCP_HTTP_TOKEN';
  const header = input.needsToken ? ` --header "Authorization: Bearer ${tokenText}"` : '';
  const palaceArgs = input.palacePath ? ['--palace', input.palacePath] : [];
  const stdioArgs = JSON.stringify(['mcp', ...palaceArgs]);
  const cursorHttp = {
    mcpServers: { palace: { url: mcpUrl, ...(input.needsToken ? { headers: { Authorization: `Bearer ${tokenText}` } } : {}) } },
  };
  const cursorStdio = { mcpServers: { palace: { command: 'palace', args: ['mcp', ...palaceArgs] } } };
  return [
    { client: 'claude-code', transport: 'http', where: 'shell', text: `claude mcp add --transport http palace ${mcpUrl}${header}` },
    { client: 'claude-code', transport: 'stdio', where: 'shell', text: `claude mcp add palace -- palace ${['mcp', ...palaceArgs].join(' ')}` },
    {
      client: 'codex',
      transport: 'http',
      where: '~/.codex/config.toml',
      text: [`[mcp_servers.palace]`, `url = "${mcpUrl}"`, ...(input.needsToken ? [`bearer_token_env_var = "PALACE_MCP_HTTP_TOKEN"`] : [])].join('\n'),
    },
    { client: 'codex', transport: 'stdio', where: '~/.codex/config.toml', text: `[mcp_servers.palace]\ncommand = "palace"\nargs = ${stdioArgs}` },
    { client: 'cursor', transport: 'http', where: '~/.cursor/mcp.json', text: JSON.stringify(cursorHttp, null, 2) },
    { client: 'cursor', transport: 'stdio', where: '~/.cursor/mcp.json', text: JSON.stringify(cursorStdio, null, 2) },
  ];
}

/** The configs as a printable block: the full tool profile, then how to take the lean one. */
export function clientConfigText(input: ClientConfigInput): string {
  const names = { 'claude-code': 'Claude Code', codex: 'Codex', cursor: 'Cursor' } as const;
  const full = clientConfigs(input)
    .filter((c) => c.transport === 'http')
    .map((c) => `# ${names[c.client]} (${c.where})\n${c.text}`)
    .join('\n\n');
  const lean = [
    '# Lean tool profile (everyday tools + palace_tools/palace_call; a fraction of the context): the same',
    `# configs with this URL, or \`palace mcp --profile lean\` over stdio`,
    `${input.url}/mcp?profile=lean`,
  ].join('\n');
  return `${full}\n\n${lean}`;
}
