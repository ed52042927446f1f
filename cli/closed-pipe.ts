// A reader that goes away early (`palace … | head`) closes our stdout: the next write fails with EPIPE.
// That is the reader's choice, not an error of ours, so the command ends quietly with exit 0, as
// Unix tools do, instead of an unhandled 'error' event and its stack trace.

/** Makes EPIPE on stdout or stderr end the process quietly with exit 0; other stream errors are rethrown. */
export function exitQuietlyOnClosedPipe(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams)
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
      throw err;
    });
}
