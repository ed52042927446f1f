// Issue 29: every value the CLI writes into a shell script is quoted. The generated git pre-commit
// hook (`palace guard install --agent`, --stream, paths) and the agent hook commands of
// `palace instructions hooks` are run by a real /bin/sh with values holding $(…), backticks,
// quotes and newlines: nothing is executed, and each value reaches palace as one exact argument.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { hookSettings } from '../../cli/commands/hook.js';
import { guardScript } from '../../cli/commands/reserve.js';
import { shellQuote } from '../../cli/shell-quote.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function workdir(): string {
  const root = mkdtempSync(join(tmpdir(), 'palace-shell-'));
  roots.push(root);
  return root;
}

/** Values an attacker might choose for an agent name, stream or path. */
function evil(root: string): string[] {
  const pwned = join(root, 'PWNED');
  return [
    `x$(touch ${pwned})`,
    `x\`touch ${pwned}\``,
    `x'; touch ${pwned}; echo '`,
    `x"; touch ${pwned}; echo "`,
    `x\ntouch ${pwned}\n`,
    `$(touch ${pwned})' "\`touch ${pwned}\`"`,
    '${HOME}',
  ];
}

/** A stand-in `palace` (a node script) that records the arguments it was run with. */
function recorder(root: string): string {
  const script = join(root, 'record.cjs');
  writeFileSync(script, `require('fs').writeFileSync(${JSON.stringify(join(root, 'argv.json'))}, JSON.stringify(process.argv.slice(2)));\n`);
  return script;
}

describe('shell quoting of generated scripts', () => {
  it('shellQuote leaves plain words alone and makes any other value one literal sh word', () => {
    expect(shellQuote('laptop-claude')).toBe('laptop-claude');
    const root = workdir();
    for (const value of evil(root)) {
      const r = spawnSync('/bin/sh', ['-c', `printf '%s' ${shellQuote(value)}`], { encoding: 'utf8' });
      expect(r.stdout).toBe(value);
    }
    expect(existsSync(join(root, 'PWNED'))).toBe(false);
  });

  it('the guard hook runs none of $(…), backticks, quotes or newlines in --agent, --stream or the palace path', () => {
    const root = workdir();
    for (const value of evil(root)) {
      const script = join(root, 'pre-commit');
      writeFileSync(
        script,
        guardScript({ node: process.execPath, palace: recorder(root), palaceDir: value, agent: value, stream: value }),
      );
      chmodSync(script, 0o755);
      const env: NodeJS.ProcessEnv = { ...process.env };
      delete env.PALACE_AGENT_NAME;
      delete env.PALACE_GUARD;
      const r = spawnSync('/bin/sh', [script], { encoding: 'utf8', env });
      expect(r.status, r.stderr).toBe(0);
      expect(existsSync(join(root, 'PWNED')), `ran code from ${JSON.stringify(value)}`).toBe(false);
      const argv = JSON.parse(readFileSync(join(root, 'argv.json'), 'utf8')) as string[];
      expect(argv).toEqual(['--palace', value, 'guard', 'check', '--staged', '--agent', value, '--stream', value]);
    }
  });

  it('the agent hook commands of `palace instructions hooks` quote the agent name', () => {
    const root = workdir();
    const bin = join(root, 'bin');
    spawnSync('mkdir', ['-p', bin]);
    writeFileSync(join(bin, 'palace'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(recorder(root))} "$@"\n`);
    chmodSync(join(bin, 'palace'), 0o755);
    for (const value of evil(root)) {
      const settings = hookSettings(value, value) as { claude_code: { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> } };
      const command = settings.claude_code.hooks.SessionStart?.[0]?.hooks[0]?.command ?? '';
      const r = spawnSync('/bin/sh', ['-c', command], { encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` } });
      expect(r.status, r.stderr).toBe(0);
      expect(existsSync(join(root, 'PWNED')), `ran code from ${JSON.stringify(value)}`).toBe(false);
      const argv = JSON.parse(readFileSync(join(root, 'argv.json'), 'utf8')) as string[];
      expect(argv).toEqual(['hook', 'inbox', '--agent', value, '--event', 'SessionStart']);
    }
  });
});
