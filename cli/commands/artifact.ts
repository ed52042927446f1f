// `palace artifact put|get`: exact content (patches, logs, reports) stored byte-for-byte with its sha256.

import { writeFileSync } from 'node:fs';

import type { Command } from 'commander';

import { action } from '../context.js';
import { artifactText } from '../format.js';
import { jsonObject, readText } from '../read-input.js';
import { flag } from '../tool-args.js';
import { runTool } from '../tool-runner.js';

export function registerArtifact(program: Command): void {
  const art = program.command('artifact').description('exact artifacts (patches, logs, reports) with their sha256');

  art
    .command('put')
    .description('store content read from stdin (or --file) byte-for-byte')
    .requiredOption('--kind <kind>', 'patch, file, log, json, note, report, or any lowercase words with dashes (test-log)')
    .requiredOption('--created-by <agent>', 'your agent name')
    .option('--file <path>', 'read content from this file instead of stdin (- = stdin)', '-')
    .option('--metadata <json>', 'a JSON object stored with the artifact')
    .option('--json', 'print metadata as JSON (id, sha256, size_bytes, warnings)')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const content = readText(String(o.file), o.file === '-' ? 'stdin' : '--file');
        const stored = await runTool(ctx.config, 'palace_artifact_put', {
          kind: flag(o.kind),
          created_by: flag(o.createdBy),
          content,
          metadata: jsonObject(typeof o.metadata === 'string' ? o.metadata : undefined, '--metadata'),
        });
        for (const warning of stored.warnings ?? []) ctx.out.warn(warning);
        ctx.out.result(stored, () => artifactText(stored));
      }),
    );

  art
    .command('get <artifact_id>')
    .description('write the exact bytes to stdout (or --out); --json prints metadata')
    .option('--out <path>', 'write the content to this file')
    .option('--json', 'print metadata including sha256 (and the content unless --out is given)')
    .action(
      action(async (ctx, id: string) => {
        const o = ctx.opts;
        const artifact = await runTool(ctx.config, 'palace_artifact_get', { artifact_id: id });
        const bytes = Buffer.from(artifact.content, 'utf8');
        if (typeof o.out === 'string') {
          writeFileSync(o.out, bytes);
          const { content: _content, ...meta } = artifact;
          ctx.out.result({ ...meta, content_written_to: o.out }, () => `Wrote ${bytes.length} bytes to ${String(o.out)}`);
        } else if (ctx.out.json) ctx.out.result(artifact, () => '');
        else ctx.out.bytes(bytes);
      }),
    );
}
