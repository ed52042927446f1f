// Runs git as a child process for the patch commands: arguments as an array (no shell), optional
// stdin, and the exit code with stdout/stderr returned (never thrown), so callers report git's words.

import { spawn } from 'node:child_process';

import { HubError } from '../hub/src/errors.js';
import { childEnv } from './config.js';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A git runner; injected so the patch commands can be driven against any repository. */
export type Git = (args: readonly string[], options: GitOptions) => Promise<GitResult>;

export interface GitOptions {
  cwd: string;
  input?: string;
  /** Extra environment for git (e.g. GIT_INDEX_FILE). */
  env?: Record<string, string>;
}

export const runGit: Git = (args, { cwd, input, env }) =>
  new Promise((resolve, reject) => {
    const child = spawn('git', [...args], { cwd, stdio: ['pipe', 'pipe', 'pipe'], env: childEnv(env) });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.stdin.on('error', () => undefined); // git may exit before reading stdin
    child.on('error', (e) =>
      reject(new HubError('git.failed', `cannot run git: ${e.message}`, { cause: e })),
    );
    child.on('close', (code) =>
      resolve({
        code: code ?? 1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
    child.stdin.end(input ?? '');
  });

/** Runs git and returns stdout; a non-zero exit becomes `git.failed` with git's own message. */
export async function gitOk(git: Git, args: readonly string[], options: GitOptions): Promise<string> {
  const r = await git(args, options);
  if (r.code !== 0)
    throw new HubError('git.failed', `git ${args[0] ?? ''} failed: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}
