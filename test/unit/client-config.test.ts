// Client configurations (hub/src/client-config.ts): the stdio ones run the absolute command the hub
// reports, quoted for the shell, TOML and JSON, with the environment Electron-as-node needs.
import { describe, expect, it } from 'vitest';

import { clientConfigs, clientConfigText, shellWord } from '../../hub/src/client-config.js';
import { launcherPath, stdioCommand } from '../../hub/src/launcher.js';

const stdio = { command: '/opt/node 22/bin/node', args: ["/home/a b/it's/bin/palace.js"] };

describe('stdio client configs', () => {
  it('use the absolute command in all three clients, each in its own quoting', () => {
    const c = clientConfigs({ url: 'http://127.0.0.1:8765', needsToken: false, palacePath: '/p', stdio });
    const by = (client: string) => c.find((x) => x.client === client && x.transport === 'stdio')!.text;
    expect(by('claude-code')).toBe(`claude mcp add palace -- '/opt/node 22/bin/node' '/home/a b/it'\\''s/bin/palace.js' mcp --palace /p`);
    expect(by('codex')).toBe(`[mcp_servers.palace]\ncommand = "/opt/node 22/bin/node"\nargs = ["/home/a b/it's/bin/palace.js", "mcp", "--palace", "/p"]`);
    expect(JSON.parse(by('cursor'))).toEqual({ mcpServers: { palace: { command: stdio.command, args: [...stdio.args, 'mcp', '--palace', '/p'] } } });
  });

  it('carry ELECTRON_RUN_AS_NODE when the command is Electron', () => {
    const c = clientConfigs({ url: 'http://x:1', needsToken: false, stdio: { command: '/app/palace', args: ['/app/bin/palace.js'], env: { ELECTRON_RUN_AS_NODE: '1' } } });
    const by = (client: string) => c.find((x) => x.client === client && x.transport === 'stdio')!.text;
    expect(by('claude-code')).toBe('claude mcp add -e ELECTRON_RUN_AS_NODE=1 palace -- /app/palace /app/bin/palace.js mcp');
    expect(by('codex')).toContain('env = { ELECTRON_RUN_AS_NODE = "1" }');
    expect(JSON.parse(by('cursor')).mcpServers.palace.env).toEqual({ ELECTRON_RUN_AS_NODE: '1' });
  });

  it('are printed by serve beside the HTTP ones', () => {
    const text = clientConfigText({ url: 'http://127.0.0.1:8765', needsToken: false, stdio });
    expect(text.indexOf('# Or over stdio')).toBeGreaterThan(text.indexOf('claude mcp add --transport http'));
    expect(text).toContain('# Cursor (~/.cursor/mcp.json)\n{\n  "mcpServers": {\n    "palace": {\n      "command": "/opt/node 22/bin/node"');
  });

  it('shellWord leaves plain paths alone', () => {
    expect(shellWord('/usr/bin/node')).toBe('/usr/bin/node');
    expect(shellWord('a$b')).toBe(`'a$b'`);
  });

  it('the launcher is this checkout\'s bin/palace.js, run by this node', () => {
    expect(launcherPath()).toMatch(/\/bin\/palace\.js$/);
    expect(stdioCommand()).toEqual({ command: process.execPath, args: [launcherPath()] });
  });
});
