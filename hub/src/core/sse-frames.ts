// Incremental Server-Sent Events parsing: text chunks in, complete frames out. Pure; the one parser
// shared by the dashboard, the tray, the hub client and the stdio proxy.

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
  /** Resets the parser; true when an incomplete frame (no blank line after it) was left over. */
  end(): boolean;
}

/**
 * Line by line, so a large frame arriving in many chunks is scanned once, and a CR ending one chunk
 * pairs with a LF starting the next. A frame is complete at a blank line.
 */
export function createSseParser(): SseParser {
  let buffer = '';
  let scanned = 0;
  /** The last chunk ended in CR: a LF starting the next one belongs to that line end. */
  let skipLf = false;
  let frame: SseFrame = { comments: [] };
  let data: string[] = [];
  let open = false;

  const line = (text: string, out: SseFrame[]): void => {
    if (text === '') {
      if (!open) return;
      if (data.length > 0) frame.data = data.join('\n');
      out.push(frame);
      frame = { comments: [] };
      data = [];
      open = false;
      return;
    }
    open = true;
    if (text.startsWith(':')) {
      frame.comments.push(text.slice(1).trim());
      return;
    }
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? '' : text.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') frame.id = value;
    else if (field === 'event') frame.event = value;
    else if (field === 'data') data.push(value);
  };

  return {
    push(chunk) {
      if (skipLf && chunk.startsWith('\n')) chunk = chunk.slice(1);
      skipLf = false;
      buffer += chunk;
      const out: SseFrame[] = [];
      for (;;) {
        const lf = buffer.indexOf('\n', scanned);
        const cr = buffer.indexOf('\r', scanned);
        const at = cr >= 0 && (lf < 0 || cr < lf) ? cr : lf;
        if (at < 0) {
          scanned = buffer.length;
          break;
        }
        let width = 1;
        if (at === cr) {
          if (at === buffer.length - 1) skipLf = true;
          else if (buffer[at + 1] === '\n') width = 2;
        }
        line(buffer.slice(0, at), out);
        buffer = buffer.slice(at + width);
        scanned = 0;
      }
      return out;
    },
    end() {
      const partial = open || buffer.trim() !== '';
      buffer = '';
      scanned = 0;
      skipLf = false;
      frame = { comments: [] };
      data = [];
      open = false;
      return partial;
    },
  };
}
