// Entry of `npm run soak [-- --agents N --duration S --long-pollers N --sse N --no-drawers --no-hostile --fail-on-rss-growth]`
// (defaults: 20 agents, 60 s, 20 long-polls, 4 SSE watchers, the hostile load in the second half;
// SOAK_AGENTS / SOAK_DURATION_S also work). Prints the report; exits 1 on any error, lost or
// duplicated write, or missed SSE delivery.

import { reportLines, runSoak, soakPassed } from './soak.js';

function flag(args: readonly string[], name: string, fallback: number): number {
  const at = args.indexOf(name);
  const raw = at >= 0 ? args[at + 1] : undefined;
  const value = Number(raw ?? fallback);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} needs a non-negative number, got '${String(raw)}'`);
  return value;
}

async function main(args: readonly string[]): Promise<number> {
  if (args.includes('--help')) {
    process.stdout.write(
      'usage: npm run soak [-- --agents N --duration SECONDS --long-pollers N --sse N --no-drawers --no-hostile --fail-on-rss-growth]\n',
    );
    return 0;
  }
  const agents = Math.max(2, flag(args, '--agents', Number(process.env.SOAK_AGENTS ?? 20)));
  const durationS = flag(args, '--duration', Number(process.env.SOAK_DURATION_S ?? 60));
  const report = await runSoak({
    agents,
    durationMs: durationS * 1000,
    longPollers: flag(args, '--long-pollers', 20),
    sseWatchers: Math.min(8, flag(args, '--sse', 4)),
    rssEveryMs: Math.max(500, (durationS * 1000) / 60),
    drawers: !args.includes('--no-drawers'),
    hostile: !args.includes('--no-hostile'),
    env: process.env,
    progress: (line) => process.stderr.write(`[soak] ${line}\n`),
  });
  process.stdout.write(reportLines(report).join('\n') + '\n');
  for (const error of report.errors.slice(0, 20)) process.stderr.write(`[soak] error: ${error}\n`);
  if (!soakPassed(report)) return 1;
  if (args.includes('--fail-on-rss-growth') && report.rssVerdict === 'growing') return 1;
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[soak] ${(err as Error).stack ?? String(err)}\n`);
    process.exit(2);
  },
);
