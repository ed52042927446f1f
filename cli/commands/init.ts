// `palace init <dir>`: sets up ~/.palace/ and the palace, scans <dir> for projects (a wing each, rooms
// from their top-level folders) and people, keeps the proposal under ~/.palace/init/, declares the
// rooms once confirmed (--yes or a y at the prompt) and says what to run next. Never mines by itself.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import type { Command } from 'commander';

import { addFileMineRoot } from '../../hub/src/config.js';
import { invalid } from '../../hub/src/errors.js';
import { admitted, deniedDir, minePolicy } from '../../hub/src/mine/roots.js';
import { detect, type Detection, type GitAuthors } from '../../hub/src/mine/detect.js';
import { defaultWing } from '../../hub/src/mine/walk.js';
import { action, type CommandContext } from '../context.js';
import { runTool } from '../tool-runner.js';
import { askYesNo } from '../ask.js';

type ExecFile = typeof execFile;

/** Commit authors through `git log --format=%an` (the spawn is injectable); undefined when git fails. */
export function gitAuthorsVia(exec: ExecFile = execFile): GitAuthors {
  return (cwd) =>
    new Promise((done) => {
      exec('git', ['-C', cwd, 'log', '--format=%an'], { timeout: 15_000, maxBuffer: 64 * 1024 * 1024, windowsHide: true }, (err, stdout) => {
        done(err ? undefined : String(stdout).split('\n').filter((l) => l.trim() !== ''));
      });
    });
}

interface InitResult extends Detection {
  home: string;
  palace: string;
  proposal_file: string;
  /** false when a proposal already existed there and --yes was not given (it is kept as it was). */
  proposal_written: boolean;
  declared: Array<{ wing: string; room: string; created: boolean }>;
  /** The folder this run recorded as a mining root in config.json (it was outside the roots), or null. */
  mine_root_added: string | null;
  next: string[];
}

function ensureDir(path: string): boolean {
  if (existsSync(path)) return false;
  mkdirSync(path, { recursive: true, mode: 0o700 });
  return true;
}

function proposalFile(home: string, dir: string): string {
  return join(home, 'init', `${defaultWing(dir)}-${createHash('sha256').update(dir).digest('hex').slice(0, 8)}.json`);
}

function nextSteps(ctx: CommandContext, d: Detection, declared: boolean, mayMine: (path: string) => boolean): string[] {
  const palace = typeof ctx.opts.palace === 'string' ? `palace --palace ${resolve(ctx.opts.palace)}` : 'palace';
  const rooms = d.projects.some((p) => p.rooms.length > 0);
  return [
    ...(declared || !rooms ? [] : [`${palace} init ${d.dir} --yes   # declare the proposed rooms`]),
    // Only folders the hub may mine (the roots, now with <dir>; never a credential folder or the palace).
    ...d.projects.filter((p) => mayMine(p.path)).map((p) => `${palace} mine ${p.path}`),
    ...d.skipped
      .filter((f) => f.reason === 'no_marker' && mayMine(f.path))
      .map((f) => `${palace} mine ${f.path}   # skipped above (no project marker); mine it as a plain folder if it holds knowledge`),
    `${palace} mine <transcripts-dir> --mode convos   # or: ${palace} sweep (Claude Code, Codex and Gemini CLI sessions)`,
    `${palace} mine <documents-dir> --mode extract   # PDF, DOCX, HTML, Markdown`,
    `${palace} daemon start   # or ${palace} serve: the hub; it prints the client config to paste`,
    `${palace} search "<question>"`,
  ];
}

function detectionText(d: Detection): string[] {
  const lines: string[] = [];
  for (const p of d.projects)
    lines.push(
      `${p.markers.length > 0 ? 'project' : 'folder'} ${p.path}  → wing ${p.wing}  (${p.markers.length > 0 ? p.markers.join(', ') : 'no package.json, .git, pyproject.toml, Cargo.toml, go.mod, ... found'})`,
      `  rooms: ${p.rooms.join(', ') || '(none)'}`,
    );
  for (const f of d.skipped) lines.push(`skipped ${f.path}/  (${f.why})`);
  lines.push(d.people.length === 0 ? 'people: none found' : `people: ${d.people.map((p) => `${p.name} (${p.sources.join('+')})`).join(', ')}`);
  return lines;
}

function text(r: InitResult): string {
  const lines = [`palace ${r.palace} (state in ${r.home})`, ...detectionText(r)];
  lines.push(r.proposal_written ? `proposal written to ${r.proposal_file}` : `kept the existing proposal at ${r.proposal_file} (--yes replaces it)`);
  const created = r.declared.filter((d) => d.created).length;
  const proposed = r.projects.reduce((n, p) => n + p.rooms.length, 0);
  if (r.mine_root_added)
    lines.push(`${r.mine_root_added} was outside the folders this palace may mine: recorded it in mine_roots of ${join(r.home, 'config.json')} (a running hub reads it on every mine; no restart)`);
  if (r.declared.length > 0) lines.push(`declared ${r.declared.length} rooms (${created} new)`);
  else if (proposed > 0) lines.push(`${proposed} rooms proposed, not declared (run again with --yes to declare them)`);
  lines.push('', 'Next:', ...r.next.map((n) => `  ${n}`));
  return lines.join('\n');
}

export function registerInit(program: Command, gitAuthors: GitAuthors = gitAuthorsVia()): void {
  program
    .command('init <dir>')
    .description('set up ~/.palace and the palace, propose wings and rooms for the projects in <dir>, list the people found')
    .option('--yes', 'declare the proposed rooms without asking; replace an earlier proposal')
    .option('--json', 'machine-readable output (never asks)')
    .action(
      action(async (ctx, rawDir: string) => {
        const dir = resolve(rawDir);
        if (!existsSync(dir) || !statSync(dir).isDirectory()) throw invalid('dir', `${dir} is not a directory`);
        const { home, palacePath } = ctx.config;
        // init offers only what mine then accepts: a folder outside the mining roots becomes one
        // (recorded in config.json, read by the hub at every mine); a credential folder never does.
        const before = minePolicy(ctx.config);
        if (deniedDir(before, dir))
          throw invalid('dir', `${dir} is a credential folder, palace's state or the palace itself, which are never mined; choose your projects folder`);
        ensureDir(home);
        ensureDir(palacePath);
        const real = realpathSync(dir);
        const rootAdded = admitted(before, real) ? null : addFileMineRoot(home, real) ? real : null;
        const policy = rootAdded ? minePolicy(ctx.config) : before;
        const mayMine = (path: string): boolean => {
          try {
            return admitted(policy, realpathSync(path));
          } catch {
            return false;
          }
        };
        const detection = await detect(dir, gitAuthors);
        const rooms = detection.projects.flatMap((p) => p.rooms.map((room) => ({ wing: p.wing, room })));
        let yes = ctx.opts.yes === true;
        if (!yes && rooms.length > 0 && !ctx.out.json && process.stdin.isTTY && process.stderr.isTTY) {
          ctx.out.note(detectionText(detection).join('\n'));
          yes = await askYesNo(`Declare these ${rooms.length} rooms in ${detection.projects.length} wing(s)?`);
        }
        const file = proposalFile(home, dir);
        const write = yes || !existsSync(file);
        const declared: InitResult['declared'] = [];
        if (yes)
          for (const r of rooms) {
            const added = await runTool(ctx.config, 'palace_rooms_add', r);
            declared.push({ ...r, created: added.created });
          }
        const result: InitResult = {
          ...detection,
          home,
          palace: palacePath,
          proposal_file: file,
          proposal_written: write,
          declared,
          mine_root_added: rootAdded,
          next: nextSteps(ctx, detection, yes, mayMine),
        };
        if (write) {
          ensureDir(join(home, 'init'));
          writeFileSync(file, JSON.stringify({ created_at: new Date().toISOString(), ...detection }, null, 2) + '\n', { mode: 0o600 });
        }
        ctx.out.result(result, () => text(result));
      }),
    );
}
