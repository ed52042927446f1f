// Artifact put latency: a 1 MiB text artifact through Logstream.putArtifact against a bare
// sha256 + INSERT of the same content.

import { Logstream } from '../hub/src/logstream/logstream.js';
import { BareDb } from './bare-sqlite.js';
import type { Figure, SuiteContext } from './figure.js';
import { percentile, seededRandom, timeEach } from './stats.js';

const PUTS = 50;
const WARMUP = 5;
const MIB = 1024 * 1024;

/** `count` distinct ~1 MiB unified-diff-like texts (ASCII, so bytes = characters). */
function contents(count: number): string[] {
  const random = seededRandom(3);
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < MIB; i++) {
    const line =
      i % 40 === 0
        ? `@@ -${i},7 +${i},8 @@ export function handler${i}(req, res) {`
        : `${random() < 0.5 ? '+' : ' '}  const value${i} = await store.read('${Math.floor(random() * 1e9).toString(36)}');`;
    lines.push(line);
    size += line.length + 1;
  }
  const body = lines.join('\n').slice(0, MIB - 32);
  // Through a Buffer so each string is flat, as one decoded from a request body would be.
  return Array.from({ length: count }, (_, i) =>
    Buffer.from(`# artifact ${i}\n${body}`.padEnd(MIB, '\n'), 'utf8').toString('utf8'),
  );
}

export function artifactFigures(ctx: SuiteContext, palaceDir: string, bareDir: string): Figure[] {
  const items = contents(WARMUP + PUTS);
  ctx.progress(`artifact: ${PUTS} puts of 1 MiB, alternating with bare puts`);
  const log = Logstream.open(palaceDir);
  const bare = new BareDb(bareDir);
  const palace: number[] = [];
  const raw: number[] = [];
  try {
    const put = {
      palace: (content: string): unknown => log.putArtifact({ kind: 'file', created_by: 'bench', content }),
      bare: (content: string, i: number): unknown => bare.putArtifact(`art_${i}`, content),
    };
    items.forEach((content, i) => {
      // Alternate which goes first: the second put finds the content hot in the CPU caches.
      const order = i % 2 === 0 ? (['palace', 'bare'] as const) : (['bare', 'palace'] as const);
      const [first = Number.NaN, second = Number.NaN] = timeEach(order, (which) => put[which](content, i));
      if (i < WARMUP) return;
      palace.push(i % 2 === 0 ? first : second);
      raw.push(i % 2 === 0 ? second : first);
    });
  } finally {
    log.close();
    bare.close();
  }
  return [
    {
      name: '1 MiB artifact put p50',
      value: percentile(palace, 50),
      unit: 'ms',
      reference: { value: percentile(raw, 50), label: 'bare sha256 + INSERT', measured: true },
    },
  ];
}
