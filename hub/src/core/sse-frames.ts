// Incremental Server-Sent Events parsing: text chunks in, complete frames out. Pure; shared by the
// dashboard (browser) and the tray's task watcher (Node), which both read /logstream/stream.

/** One complete SSE frame: its fields, and any comment lines (`: ping`). */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comments: string[];
}

export interface SseParser {
  /** Feeds a decoded chunk; returns the frames it completed, in order. */
  push(chunk: string): SseFrame[];
}

function parseBlock(block: string): SseFrame {
  const frame: SseFrame = { comments: [] };
  const data: string[] = [];
  for (const line of block.split(/\r\n|\r|\n/)) {
    if (line === '') continue;
    if (line.startsWith(':')) {
      frame.comments.push(line.slice(1).trim());
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') frame.id = value;
    else if (field === 'event') frame.event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length > 0) frame.data = data.join('\n');
  return frame;
}

export function createSseParser(): SseParser {
  let buffer = '';
  return {
    push(chunk) {
      buffer += chunk;
      const frames: SseFrame[] = [];
      for (;;) {
        const match = /\r\n\r\n|\n\n|\r\r/.exec(buffer);
        if (!match) break;
        frames.push(parseBlock(buffer.slice(0, match.index)));
        buffer = buffer.slice(match.index + match[0].length);
      }
      return frames;
    },
  };
}
