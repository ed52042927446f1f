// A helper process for the cross-process wake benchmark: opens the palace given as argv[2] and,
// for each stdin line, appends an event ("append <to_agent>") or answers a clock ping ("ping").
// Each reply is one JSON line on stdout carrying wallMs() taken just before the append.

import { createInterface } from 'node:readline';

import { Logstream } from '../hub/src/logstream/logstream.js';
import { bodyText } from './event-fixtures.js';
import { seededRandom, wallMs } from './stats.js';

const palaceDir = process.argv[2];
if (!palaceDir) {
  process.stderr.write('usage: append-child.js <palace-dir>\n');
  process.exit(2);
}

const log = Logstream.open(palaceDir);
const random = seededRandom(99);
const reply = (value: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [command, arg] = line.trim().split(' ');
  if (command === 'ping') {
    reply({ t: wallMs() });
  } else if (command === 'append') {
    const t = wallMs();
    const event = log.appendNow({
      type: 'task.request',
      stream: 'palace',
      room: 'coordination',
      from_agent: 'bench-child',
      to_agent: arg ?? 'bench-remote',
      status: 'open',
      body: bodyText(random),
    });
    reply({ t, id: event.id });
  } else if (command === 'quit') {
    lines.close();
  }
});
lines.on('close', () => {
  log.close();
});
reply({ ready: true });
