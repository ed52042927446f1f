// `palace mine` on the palace directly (real CLI processes, real LanceDB, the bundled embedder):
// a code repository with a .gitignore, idempotent re-mining, changed and deleted files, transcripts
// of every format, documents, the adapter errors and repair of the vector index.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../../hub/src/log.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';
import type { MineReport } from '../../hub/src/mine/miner.js';
import { PALACE_BIN, makeTempPalace, parseJson, type CliResult, type ErrorJson, type TempPalace } from '../helpers/cli.js';
import { makeDocx, makePdf } from '../helpers/documents.js';
import { FORMAT_OF, Q1, REPO, TRANSCRIPTS, writeTree } from '../helpers/transcripts.js';

const SLOW = { timeout: 180_000 };

function ok(result: CliResult): CliResult {
  if (result.code !== 0) throw new Error(`exit ${String(result.code)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

async function drawers(palace: TempPalace): Promise<Array<{ id: string; source_file: string | null; chunk_index: number; wing: string; room: string; content: string }>> {
  const store = await LanceDbVectorStore.open({ palacePath: palace.dir, dimensions: 512, log: silentLogger });
  try {
    const rows = await store.scan({}, { columns: ['id', 'source_file', 'chunk_index', 'wing', 'room', 'content'] });
    return rows.map((r) => ({ id: r.id, source_file: r.source_file, chunk_index: r.chunk_index, wing: r.wing, room: r.room, content: r.content })).sort((a, b) => a.id.localeCompare(b.id));
  } finally {
    await store.close();
  }
}

describe('palace mine (project files, on the palace directly)', SLOW, () => {
  let palace: TempPalace;
  let repo: string;
  const mine = async (...extra: string[]): Promise<MineReport> => parseJson<MineReport>(ok(await palace.run(['mine', repo, '--json', ...extra])));

  beforeAll(() => {
    palace = makeTempPalace('palace-mine-');
    repo = join(palace.root, 'demo-repo');
    writeTree(repo, REPO);
  });
  afterAll(async () => palace.cleanup());

  it('dry-run lists what would be filed and writes nothing', async () => {
    const r = await mine('--dry-run');
    expect(r.dry_run).toBe(true);
    expect(r.wing).toBe('demo-repo');
    expect(r.files?.map((f) => f.file.slice(repo.length + 1))).toEqual(['README.md', 'docs/design.md', 'src/lease.ts', 'src/server.ts']);
    expect(r.files_skipped).toBe(1); // empty.txt
    expect(r.drawers_filed).toBe(r.files?.reduce((n, f) => n + f.chunks, 0));
    const mined = parseJson<{ total_files: number }>(ok(await palace.run(['mined', '--json'])));
    expect(mined.total_files).toBe(0);
  });

  it('when one folder holds most files (a src/ layout), its sub-folders become the rooms', async () => {
    const layout = join(palace.root, 'src-layout');
    writeTree(layout, {
      'README.md': '# Layout\n',
      'auth/notes.md': 'A top-level auth folder.\n',
      'src/index.ts': 'export {};\n',
      'src/auth/login.ts': 'export const login = 1;\n',
      'src/auth/logout.ts': 'export const logout = 1;\n',
      'src/billing/invoice.ts': 'export const invoice = 1;\n',
      'src/billing/tax.ts': 'export const tax = 1;\n',
    });
    const r = parseJson<MineReport>(ok(await palace.run(['mine', layout, '--json', '--dry-run'])));
    const rooms = Object.fromEntries((r.files ?? []).map((f) => [f.file.slice(layout.length + 1), f.room]));
    expect(rooms).toEqual({
      'README.md': 'general',
      'auth/notes.md': 'auth',
      'src/index.ts': 'src',
      'src/auth/login.ts': 'src-auth', // a top-level auth/ exists too: never merged into it
      'src/auth/logout.ts': 'src-auth',
      'src/billing/invoice.ts': 'billing',
      'src/billing/tax.ts': 'billing',
    });
  });

  it('files every chunk with source_file and position; re-mining is idempotent and cheap', async () => {
    const first = await mine();
    expect(first.files_mined).toBe(4);
    const rows = await drawers(palace);
    expect(rows).toHaveLength(first.drawers_filed);
    expect(new Set(rows.map((r) => r.source_file))).toEqual(new Set(['README.md', 'docs/design.md', 'src/lease.ts', 'src/server.ts'].map((f) => join(repo, f))));
    expect(rows.find((r) => r.source_file?.endsWith('lease.ts'))?.room).toBe('src');
    expect(rows.some((r) => r.content.includes('ignored'))).toBe(false);

    const again = await mine();
    expect(again).toMatchObject({ files_mined: 0, files_unchanged: 4, drawers_filed: 0, drawers_removed: 0 });
    expect(await drawers(palace)).toEqual(rows);

    // Forced: every file is re-filed under the same ids.
    const forced = await mine('--force');
    expect(forced.files_mined).toBe(4);
    // Two reads: the rows (here) and a search (a CLI process), at once.
    const searchRun = palace.run(['search', 'who keeps the writer lease', '--json']);
    expect((await drawers(palace)).map((r) => r.id)).toEqual(rows.map((r) => r.id));

    const search = parseJson<{ results: Array<{ source_file: string }> }>(ok(await searchRun));
    expect(search.results[0]?.source_file.startsWith(repo)).toBe(true);
  });

  it('re-mining a changed file replaces exactly that file\'s drawers', async () => {
    const before = await drawers(palace);
    const lease = join(repo, 'src/lease.ts');
    const others = before.filter((r) => r.source_file !== lease);
    writeFileSync(lease, '// lease, rewritten\nThe lease is now a single advisory lock file held by the hub process.\n');
    const r = await mine();
    expect(r).toMatchObject({ files_mined: 1, files_unchanged: 3, drawers_filed: 1 });
    expect(r.drawers_removed).toBe(before.length - others.length);
    const after = await drawers(palace);
    expect(after.filter((d) => d.source_file !== lease)).toEqual(others);
    expect(after.filter((d) => d.source_file === lease).map((d) => d.content)).toEqual([
      '// lease, rewritten\nThe lease is now a single advisory lock file held by the hub process.\n',
    ]);
  });

  it('keeps the drawers of a deleted file until --prune', async () => {
    const server = join(repo, 'src/server.ts');
    rmSync(server);
    const kept = await mine();
    expect(kept.files_vanished).toBe(1);
    expect((await drawers(palace)).some((d) => d.source_file === server)).toBe(true);
    const pruned = await mine('--prune');
    expect(pruned.files_pruned).toBe(1);
    expect((await drawers(palace)).some((d) => d.source_file === server)).toBe(false);
    const mined = parseJson<{ files: Array<{ source_file: string }> }>(ok(await palace.run(['mined', '--files', '--json'])));
    expect(mined.files.map((f) => f.source_file)).not.toContain(server);
  });

  it('repair-status reports a healthy index; repair --mode rebuild re-embeds every drawer from its text', async () => {
    const count = (await drawers(palace)).length;
    const status = parseJson<{ ok: boolean; drawers: number; manifest: { drawers: number } }>(ok(await palace.run(['repair-status', '--json'])));
    expect(status).toMatchObject({ ok: true, drawers: count, manifest: { drawers: count } });
    const rebuilt = parseJson<{ reembedded: number }>(ok(await palace.run(['repair', '--mode', 'rebuild', '--json'])));
    expect(rebuilt.reembedded).toBe(count);
    expect((await drawers(palace)).length).toBe(count);
  });
});

describe('palace mine --mode convos, --mode extract and --source', SLOW, () => {
  let palace: TempPalace;
  beforeAll(() => {
    palace = makeTempPalace('palace-mine-convos-');
  });
  afterAll(async () => palace.cleanup());

  it('mines one transcript of every format, one drawer per exchange, in a room per format', async () => {
    const dir = join(palace.root, 'exports');
    writeTree(dir, { ...TRANSCRIPTS, 'package.json': '{"name": "not-a-conversation"}' });
    const r = parseJson<MineReport>(ok(await palace.run(['mine', dir, '--mode', 'convos', '--wing', 'chats', '--json'])));
    expect(r.files_mined).toBe(Object.keys(TRANSCRIPTS).length);
    expect(r.files_skipped).toBe(1);
    expect(r.drawers_filed).toBe(2 * Object.keys(TRANSCRIPTS).length);
    const searchRun = palace.run(['search', 'what stores the event log', '--wing', 'chats', '--json']); // read beside the rows
    const rows = await drawers(palace);
    for (const [name, format] of Object.entries(FORMAT_OF)) {
      const own = rows.filter((d) => d.source_file === join(dir, name));
      expect(own).toHaveLength(2);
      expect(own[0]?.room).toBe(format === 'transcript' ? 'conversations' : format);
      expect(own.some((d) => d.content.includes(Q1))).toBe(true);
    }
    const search = parseJson<{ results: Array<{ content: string }> }>(ok(await searchRun));
    expect(search.results[0]?.content).toContain('SQLite in WAL mode');
  });

  it('extracts the text of HTML and Markdown documents', async () => {
    const dir = join(palace.root, 'docs');
    writeTree(dir, {
      'guide.html': '<html><head><title>Runbook</title></head><body><p>Restart the hub with <code>palace daemon start</code> &amp; check /healthz.</p></body></html>',
      'notes.md': '---\ntitle: x\n---\n# Notes\n\nThe backup runs nightly.\n',
    });
    const r = parseJson<MineReport>(ok(await palace.run(['mine', dir, '--mode', 'extract', '--wing', 'docs', '--json'])));
    expect(r.files_mined).toBe(2);
    const rows = (await drawers(palace)).filter((d) => d.wing === 'docs');
    expect(rows.map((d) => d.content).sort()).toEqual(['# Notes\n\nThe backup runs nightly.', '# Runbook\n\nRestart the hub with palace daemon start & check /healthz.']);
  });

  it('extracts PDF and DOCX documents generated here; an encrypted PDF is a counted per-file error', async () => {
    const dir = join(palace.root, 'papers');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'failover.pdf'),
      makePdf([['Failover runbook: when the primary hub dies,', 'promote the standby replica within five minutes.'], ['Then rotate the peer tokens in peers.json.']]),
    );
    writeFileSync(join(dir, 'backups.docx'), await makeDocx([{ heading: 'Backups' }, 'Snapshots of the palace are copied to cold storage every Sunday night.']));
    writeFileSync(join(dir, 'locked.pdf'), makePdf([['nothing to see']], { encrypt: true }));
    const res = await palace.run(['mine', dir, '--mode', 'extract', '--wing', 'papers', '--json']);
    expect(res.code).toBe(1); // some files failed; the others were filed
    const r = parseJson<MineReport>(res);
    expect(r).toMatchObject({ files_seen: 3, files_mined: 2 });
    expect(r.errors).toEqual([{ file: join(dir, 'locked.pdf'), code: 'mine.extract_failed', error: expect.stringContaining('encrypted') }]);

    // The PDF's search-then-get and the DOCX's run side by side (each call is its own CLI process).
    const docxChain = (async () => {
      const hit = parseJson<{ results: Array<{ drawer_id: string; source_file: string }> }>(
        ok(await palace.run(['search', 'cold storage snapshots on Sunday', '--wing', 'papers', '--json'])),
      ).results[0];
      return [hit, hit ? ok(await palace.run(['drawer', 'get', hit.drawer_id])).stdout : undefined] as const;
    })();
    docxChain.catch(() => undefined); // awaited below; a PDF failure first must not leave it unhandled
    const [pdfHit, drawer] = await (async () => {
      const hit = parseJson<{ results: Array<{ drawer_id: string; source_file: string; content: string }> }>(
        ok(await palace.run(['search', 'promote the standby replica when the primary hub dies', '--wing', 'papers', '--json'])),
      ).results[0];
      expect(hit?.source_file).toBe(join(dir, 'failover.pdf'));
      return [hit, parseJson<{ content: string; room: string; metadata: Record<string, unknown> }>(ok(await palace.run(['drawer', 'get', hit!.drawer_id, '--json'])))] as const;
    })();
    expect(pdfHit?.drawer_id).toBeDefined();
    expect(drawer.content).toBe('Failover runbook: when the primary hub dies,\npromote the standby replica within five minutes.\n\nThen rotate the peer tokens in peers.json.');
    expect(drawer.room).toBe('documents');
    expect(drawer.metadata).toMatchObject({ format: 'pdf', page_start: 1, page_end: 2 });

    const [docxHit, text] = await docxChain;
    expect(docxHit?.source_file).toBe(join(dir, 'backups.docx'));
    expect(text).toContain('# Backups\n\nSnapshots of the palace are copied to cold storage every Sunday night.');

    // Off a TTY the text summary is plain lines: the summary, then one line per failed file.
    const again = await palace.run(['mine', dir, '--mode', 'extract', '--wing', 'papers']);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain('0 files mined');
    expect(again.stdout).toContain(`error: ${join(dir, 'locked.pdf')}: cannot extract`);
  });

  it('refuses an unknown adapter and an adapter needing unsupported runner semantics with distinct errors', async () => {
    // Two refusals and a dry run: none writes, all at once.
    const [unknown, unsupported, knownRun] = await Promise.all([
      palace.run(['mine', palace.root, '--source', 'nope', '--json']),
      palace.run(['mine', '--source', 'slack-live']),
      palace.run(['mine', join(palace.root, 'exports', 'codex'), '--source', 'codex', '--wing', 'chats', '--dry-run', '--json']),
    ]);
    expect(unknown.code).toBe(2);
    expect(parseJson<ErrorJson>(unknown).error.code).toBe('mine.unknown_adapter');
    expect(unsupported.code).toBe(2);
    expect(unsupported.stderr).toContain("needs the 'poll' runner semantics");
    const known = parseJson<MineReport>(ok(knownRun));
    expect(known).toMatchObject({ adapter: 'codex', mode: 'convos', files_unchanged: 1 });
  });
});

describe('palace sweep and palace split', SLOW, () => {
  let palace: TempPalace;
  beforeAll(() => {
    palace = makeTempPalace('palace-sweep-');
  });
  afterAll(async () => palace.cleanup());

  it('sweep mines only the transcripts not yet mined; with no folder and no session folders it finds nothing', async () => {
    const dir = join(palace.root, 'sessions');
    writeTree(dir, { 'a.jsonl': TRANSCRIPTS['claude-code/session.jsonl'] ?? '' });
    const first = parseJson<{ reports: MineReport[] }>(ok(await palace.run(['sweep', dir, '--wing', 'chats', '--json'])));
    expect(first.reports).toHaveLength(1);
    expect(first.reports[0]).toMatchObject({ mode: 'convos', wing: 'chats', files_mined: 1, drawers_filed: 2 });
    writeTree(dir, { 'b.jsonl': TRANSCRIPTS['gemini/session-1.jsonl'] ?? '' });
    const second = parseJson<{ reports: MineReport[] }>(ok(await palace.run(['sweep', dir, '--wing', 'chats', '--json'])));
    expect(second.reports[0]).toMatchObject({ files_mined: 1, files_unchanged: 1, drawers_filed: 2 });
    // HOME is a fresh temp folder: no ~/.claude/projects, ~/.codex/sessions or ~/.gemini/tmp.
    const none = ok(await palace.run(['sweep']));
    expect(none.stdout.trim()).toBe('No transcript folders found.');
  });

  it('split writes one file per session into --output-dir and leaves the original alone', async () => {
    const dir = join(palace.root, 'mega');
    const one = TRANSCRIPTS['claude-code/session.jsonl'] ?? '';
    writeTree(dir, { 'all.jsonl': one + one.replaceAll('"s1"', '"s2"') + one.replaceAll('"s1"', '"s3"') });
    const out = join(palace.root, 'split-out');
    // The dry run, a split that finds nothing to do and a refused one write nothing: at once.
    const [dryRun, tooFew, bad] = await Promise.all([
      palace.run(['split', dir, '--output-dir', out, '--dry-run', '--json']),
      palace.run(['split', dir, '--min-sessions', '4']),
      palace.run(['split', dir, '--min-sessions', 'two', '--json']),
    ]);
    const dry = parseJson<{ files: Array<{ sessions: string[] }> }>(ok(dryRun));
    expect(dry.files[0]?.sessions).toHaveLength(3);
    expect(existsSync(out)).toBe(false);
    expect(ok(tooFew).stdout).toContain('holds 4 or more sessions');
    const done = parseJson<{ files: Array<{ sessions: string[]; backup?: string }> }>(ok(await palace.run(['split', dir, '--output-dir', out, '--json'])));
    expect(done.files[0]?.sessions.map((f) => f.slice(out.length + 1))).toEqual(['all.session-001.jsonl', 'all.session-002.jsonl', 'all.session-003.jsonl']);
    expect(existsSync(join(dir, 'all.jsonl'))).toBe(true);
    expect(bad.code).toBe(2);
  });
});

/** Runs the CLI on a pseudo-terminal through script(1); resolves with everything the terminal showed. */
function runOnTty(palace: TempPalace, args: readonly string[]): Promise<{ code: number | null; screen: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PALACE_')) env[k] = v;
  const command = [process.execPath, PALACE_BIN, '--palace', palace.dir, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { env: { ...env, HOME: palace.home, COLUMNS: '160', PALACE_MINE_ROOTS: tmpdir() }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => out.push(b));
  const killer = setTimeout(() => child.kill('SIGKILL'), 150_000);
  return new Promise((done) =>
    child.on('close', (code) => {
      clearTimeout(killer);
      done({ code, screen: Buffer.concat(out).toString('utf8') });
    }),
  );
}

function summaryOf(stdout: string): Record<string, string> {
  const last = stdout.trimEnd().split('\n').at(-1) ?? '';
  expect(last).toMatch(/^summary:( [a-z_]+=[0-9.]+)+$/);
  return Object.fromEntries(last.slice('summary: '.length).split(' ').map((kv) => kv.split('=') as [string, string]));
}

describe('palace mine output: a progress line on a terminal, parseable lines otherwise', SLOW, () => {
  let palace: TempPalace;
  let dir: string;
  beforeAll(() => {
    palace = makeTempPalace('palace-mine-output-');
    dir = join(palace.root, 'notes');
    const files: Record<string, string> = {};
    for (let i = 0; i < 100; i++) files[`n${i}.md`] = `# Note ${i}\n\nDeploy step ${i} restarts worker ${i % 7} after the migration.\n`;
    writeTree(dir, files);
  });
  afterAll(async () => palace.cleanup());

  it('off a terminal: no progress output, the summary, then a key=value line', async () => {
    const r = ok(await palace.run(['mine', dir, '--wing', 'notes']));
    expect(r.stderr).not.toContain('\r');
    expect(r.stdout.split('\n')[0]).toContain('notes → wing notes: 100 files mined, filed 100 drawers');
    expect(summaryOf(r.stdout)).toMatchObject({ files_seen: '100', files_mined: '100', files_failed: '0', drawers_filed: '100' });
    const again = summaryOf(ok(await palace.run(['mine', dir, '--wing', 'notes'])).stdout);
    expect(again).toMatchObject({ files_mined: '0', files_unchanged: '100', drawers_filed: '0' });
  });

  it.skipIf(!existsSync('/usr/bin/script'))('on a terminal: one line updated in place with files, drawers, throughput and ETA, cleared at the end', async () => {
    const { code, screen } = await runOnTty(palace, ['mine', dir, '--wing', 'notes', '--force']);
    expect(code).toBe(0);
    const frames = screen.split('\r').filter((f) => f.startsWith('['));
    expect(frames.length).toBeGreaterThan(1);
    expect(frames.some((f) => /^\[#* *\] \d+% {2}eta \d+s {2}\d+\/100 files {2}\d+ drawers {2}[0-9.]+ files\/s {2}[0-9.]+ drawers\/s/.test(f))).toBe(true);
    expect(screen).toContain('\r\u001b[2K');
    expect(screen).toMatch(/summary: files_seen=100 files_mined=100 /);
  });
});
