// A one-line progress bar on stderr for terminals; silent when stderr is not a TTY, so scripted
// output stays parseable.

export interface Progress {
  update(done: number, total: number | undefined, label: string): void;
  finish(message?: string): void;
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  const tty = Boolean(stream.isTTY);
  const started = Date.now();
  let last = 0;
  return {
    update(done, total, label) {
      if (!tty || Date.now() - last < 80) return;
      last = Date.now();
      const width = 28;
      const ratio = total ? Math.min(1, done / total) : 0;
      const bar = total ? `[${'#'.repeat(Math.round(ratio * width)).padEnd(width)}] ${Math.floor(ratio * 100)}%` : `${done}`;
      const secs = (Date.now() - started) / 1000;
      const eta = total && done > 0 && ratio < 1 ? `  eta ${Math.ceil((secs / done) * (total - done))}s` : '';
      // The ETA sits right after the bar so a narrow terminal cuts the label, not the ETA.
      const cols = (stream.columns || 100) - 1;
      stream.write(`\r${`${bar}${eta}  ${label}`.slice(0, cols).padEnd(Math.min(99, cols))}`);
    },
    finish(message) {
      if (tty) stream.write('\r\u001b[2K');
      if (message) stream.write(message + '\n');
    },
  };
}
