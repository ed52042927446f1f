// An artifact message read off the wire without holding its content (issue 29): a streaming JSON
// parser that builds every field of `{"type":"artifact",…,"artifact":{…,"content":"…"},…}` but routes
// the string at artifact.content, decoded as it arrives, to a file and a sha256. The content is cut off
// the moment it passes the local artifact limit, the response the moment it passes its byte cap, and a
// body that sends nothing for `stallMs` is cancelled; each with a reason naming what happened.
// What the caller gets back is the message with an empty content, its size and its hash: it then
// checks the fields (zod), the declared sha256 and size, and reads the body from the file when stored.

import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';

import { LIMITS } from '../core/validate.js';
import { HubError } from '../errors.js';

export interface StreamedArtifact {
  /** The parsed message, its artifact's content replaced by ''. */
  message: unknown;
  /** UTF-8 bytes of the content written to the file. */
  bytes: number;
  /** Hex sha256 of those bytes, computed while streaming. */
  sha256: string;
}

export interface ArtifactStreamOptions {
  /** Where the content goes (created; the caller removes it). */
  path: string;
  /** What the messages name ("peer 'x' /sync/artifact"). */
  what: string;
  /** Most response bytes read. */
  maxResponseBytes: number;
  /** Most content bytes (default the local artifact limit, 4 MiB). */
  maxContentBytes?: number;
  /** Most bytes of everything but the content (default 256 KiB). */
  maxOtherBytes?: number;
  /** Cancel a body that sends nothing for this long (ms). */
  stallMs: number;
}

const bad = (message: string): HubError => new HubError('sync.bad_message', message);

/**
 * Content sink: the raw UTF-8 bytes of the JSON string (validated here as UTF-8, never decoded) and
 * the characters its escapes stand for (checked for NUL and lone surrogates, then encoded), buffered,
 * hashed and written in blocks; the byte count is checked on every piece.
 */
const BLOCK_BYTES = 256 * 1024;

class ContentSink {
  private readonly hash = createHash('sha256');
  /** Full blocks waiting to be hashed and written, and the block being filled. */
  private full: Buffer[] = [];
  private block = Buffer.allocUnsafe(BLOCK_BYTES);
  private used = 0;
  private escaped = ''; // characters from escapes not yet encoded
  // UTF-8 validation state: continuation bytes still needed, and the allowed range of the next one.
  private need = 0;
  private lo = 0x80;
  private hi = 0xbf;
  bytes = 0;

  constructor(
    private readonly file: FileHandle,
    private readonly max: number,
    private readonly what: string,
  ) {}

  private lone(): HubError {
    return bad(`${this.what}: the artifact's content is not valid Unicode (lone surrogate); refused`);
  }

  private count(n: number): void {
    this.bytes += n;
    if (this.bytes > this.max)
      throw bad(`${this.what}: the artifact's content passes ${this.max} bytes (the local artifact limit); cut off while streaming`);
  }

  private rotate(): void {
    this.full.push(this.block.subarray(0, this.used));
    this.block = Buffer.allocUnsafe(BLOCK_BYTES);
    this.used = 0;
  }

  /** Encodes text into the current block. */
  private addText(text: string): void {
    if (BLOCK_BYTES - this.used < text.length * 3) this.rotate();
    const n = this.block.write(text, this.used, 'utf8');
    this.count(n);
    this.used += n;
  }

  /** Encodes the escaped characters gathered so far (a high surrogate may wait for its low half). */
  private flushEscaped(final: boolean): void {
    if (this.escaped.length === 0) return;
    let text = this.escaped;
    this.escaped = '';
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0) throw bad(`${this.what}: the artifact's content holds a NUL character; refused`);
      if (c >= 0xd800 && c <= 0xdbff) {
        if (i === text.length - 1) {
          if (final) throw this.lone();
          this.escaped = text.slice(-1);
          text = text.slice(0, -1);
          break;
        }
        const next = text.charCodeAt(i + 1);
        if (next < 0xdc00 || next > 0xdfff) throw this.lone();
        i++;
      } else if (c >= 0xdc00 && c <= 0xdfff) throw this.lone();
    }
    if (text.length > 0) this.addText(text);
  }

  /** Characters an escape stood for. */
  char(c: string): void {
    if (this.need > 0) throw bad(`${this.what}: the response is not valid UTF-8`);
    this.escaped += c;
    if (this.escaped.length >= 1024) this.flushEscaped(false);
  }

  /** One ASCII byte a short escape (\n, \", …) stood for. */
  byte(b: number): void {
    if (this.need > 0) throw bad(`${this.what}: the response is not valid UTF-8`);
    if (this.escaped.length > 0) this.flushEscaped(true);
    this.count(1);
    this.block[this.used++] = b;
    if (this.used === BLOCK_BYTES) this.rotate();
  }

  /** Raw bytes src[start, end) of the string (no quote or backslash among them). */
  raw(src: Buffer, start: number, end: number): void {
    if (end <= start) return;
    if (this.escaped.length > 0) this.flushEscaped(true); // a high surrogate escape must be followed by its low one
    let { need, lo, hi } = this;
    for (let k = start; k < end; k++) {
      const b = src[k] ?? 0;
      if (need > 0) {
        if (b < lo || b > hi) throw bad(`${this.what}: the response is not valid UTF-8`);
        need--;
        lo = 0x80;
        hi = 0xbf;
        continue;
      }
      if (b < 0x80) {
        if (b < 0x20) throw bad(`${this.what}: a raw control character inside a JSON string`);
        continue;
      }
      if (b >= 0xc2 && b <= 0xdf) need = 1;
      else if (b === 0xe0) [need, lo] = [2, 0xa0];
      else if (b === 0xed) [need, hi] = [2, 0x9f]; // no encoded surrogates
      else if (b >= 0xe1 && b <= 0xef) need = 2;
      else if (b === 0xf0) [need, lo] = [3, 0x90];
      else if (b >= 0xf1 && b <= 0xf3) need = 3;
      else if (b === 0xf4) [need, hi] = [3, 0x8f];
      else throw bad(`${this.what}: the response is not valid UTF-8`);
    }
    Object.assign(this, { need, lo, hi });
    this.count(end - start);
    let from = start;
    while (from < end) {
      const n = Math.min(end - from, BLOCK_BYTES - this.used);
      src.copy(this.block, this.used, from, from + n);
      this.used += n;
      from += n;
      if (this.used === BLOCK_BYTES) this.rotate();
    }
  }

  /** Hashes and writes the full blocks (all: the partial one too). */
  async drain(all = false): Promise<void> {
    if (all && this.used > 0) this.rotate();
    const blocks = this.full;
    this.full = [];
    for (const block of blocks) {
      this.hash.update(block);
      await this.file.write(block);
    }
  }

  /** The string ended: nothing may be left half-way. */
  close(): void {
    if (this.need > 0) throw bad(`${this.what}: the response is not valid UTF-8`);
    this.flushEscaped(true);
  }

  async end(): Promise<string> {
    await this.drain(true);
    return this.hash.digest('hex');
  }
}

type Mode = 'value' | 'after' | 'key' | 'colon' | 'string' | 'atom';
type Frame = { kind: 'object'; value: Record<string, unknown>; key: string | null } | { kind: 'array'; value: unknown[] };

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
/** JSON's one-character escapes, by the byte after the backslash. */
const ESCAPES: Record<number, string> = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' };
const isEmptyArray = (f: Frame | undefined): boolean => f?.kind === 'array' && f.value.length === 0;
const isEmptyObject = (f: Frame | undefined): boolean => f?.kind === 'object' && Object.keys(f.value).length === 0;

/**
 * Parses the artifact message streamed by `reader`, the content going to `options.path`. Throws
 * `sync.bad_message` (malformed, oversized, stalled) or `sync.peer_failed` (the connection failed).
 */
export async function readArtifactStream(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  options: ArtifactStreamOptions,
): Promise<StreamedArtifact> {
  const { what } = options;
  const maxOther = options.maxOtherBytes ?? 256 * 1024;
  const file = await open(options.path, 'wx', 0o600);
  const sink = new ContentSink(file, options.maxContentBytes ?? LIMITS.artifactBytes, what);
  try {
    const stack: Frame[] = [];
    let root: unknown;
    let haveRoot = false;
    // Lexer state.
    let mode = 'value' as Mode;
    let stringIsKey = false;
    let toSink = false;
    let str = '';
    let strDecoder = new TextDecoder('utf-8', { fatal: true });
    let escape: '' | '\\' | 'u' = '';
    let hex = '';
    let atom = '';
    let total = 0;
    let other = 0;
    let sawContent = false;

    const place = (value: unknown): void => {
      const top = stack.at(-1);
      if (!top) {
        if (haveRoot) throw bad(`${what}: more than one JSON value`);
        root = value;
        haveRoot = true;
      } else if (top.kind === 'array') top.value.push(value);
      else {
        if (top.key === null) throw bad(`${what}: malformed JSON`);
        Object.defineProperty(top.value, top.key, { value, enumerable: true, writable: true, configurable: true });
        top.key = null;
      }
      mode = 'after';
    };
    const isContentPath = (): boolean => {
      const [outer, inner] = stack;
      return stack.length === 2 && outer?.kind === 'object' && outer.key === 'artifact' && inner?.kind === 'object' && inner.key === 'content';
    };
    const emit = (piece: string): void => {
      if (piece.length === 0) return;
      if (toSink) sink.char(piece);
      else {
        other += piece.length;
        if (other > maxOther) throw bad(`${what}: the message's fields outside the content pass ${maxOther} bytes; refused`);
        str += piece;
      }
    };
    const endAtom = (): void => {
      let value: unknown;
      if (atom === 'true') value = true;
      else if (atom === 'false') value = false;
      else if (atom === 'null') value = null;
      else if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(atom)) value = Number(atom);
      else throw bad(`${what}: malformed JSON near '${atom.slice(0, 20)}'`);
      atom = '';
      place(value);
    };

    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<'stalled'>((resolve) => {
        timer = setTimeout(() => resolve('stalled'), options.stallMs);
      });
      let step: Awaited<ReturnType<typeof reader.read>> | 'stalled';
      try {
        step = await Promise.race([reader.read(), stalled]);
      } finally {
        clearTimeout(timer);
      }
      if (step === 'stalled') {
        await reader.cancel().catch(() => undefined);
        throw bad(`${what}: the body stalled (no bytes for ${options.stallMs / 1000} s after ${total} bytes); cut off`);
      }
      if (step.done) break;
      const chunk = step.value;
      total += chunk.length;
      if (total > options.maxResponseBytes) {
        await reader.cancel().catch(() => undefined);
        throw bad(`${what}: response is larger than ${options.maxResponseBytes} bytes; cut off while streaming`);
      }
      let runStart = -1; // start of a run of plain string bytes in this chunk
      const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
      let nextQuote = -1; // where the next quote / backslash of this chunk is, once searched
      let nextSlash = -1;
      const flushRun = (end: number): void => {
        if (runStart >= 0 && end > runStart) {
          if (toSink) sink.raw(view, runStart, end);
          else emit(strDecoder.decode(chunk.subarray(runStart, end), { stream: true }));
        }
        runStart = -1;
      };
      try {
        for (let i = 0; i < chunk.length; i++) {
          const b = chunk[i] ?? 0;
          if (mode === 'string') {
            if (escape === '\\') {
              escape = '';
              if (b === 0x75) {
                escape = 'u';
                hex = '';
              } else {
                const decoded = ESCAPES[b];
                if (decoded === undefined) throw bad(`${what}: malformed JSON string escape`);
                if (toSink) sink.byte(decoded.charCodeAt(0));
                else emit(decoded);
              }
              continue;
            }
            if (escape === 'u') {
              hex += String.fromCharCode(b);
              if (!/^[0-9a-fA-F]*$/.test(hex)) throw bad(`${what}: malformed JSON \\u escape`);
              if (hex.length === 4) {
                escape = '';
                emit(String.fromCharCode(parseInt(hex, 16)));
              }
              continue;
            }
            if (b === 0x5c) {
              // The run before it ends on an ASCII byte: the decoder holds nothing back unless the
              // UTF-8 was cut, which its next call (or the string's end) refuses.
              flushRun(i);
              escape = '\\';
              continue;
            }
            if (b === 0x22) {
              flushRun(i);
              emit(strDecoder.decode());
              strDecoder = new TextDecoder('utf-8', { fatal: true });
              if (stringIsKey) {
                const top = stack.at(-1);
                if (top?.kind !== 'object') throw bad(`${what}: malformed JSON`);
                top.key = str;
                mode = 'colon';
              } else if (toSink) {
                sink.close();
                toSink = false;
                sawContent = true;
                place('');
              } else place(str);
              str = '';
              continue;
            }
            if (b < 0x20) throw bad(`${what}: a raw control character inside a JSON string`);
            if (runStart < 0) runStart = i;
            // The plain bytes up to the next quote or backslash: for the content a native search
            // (the sink checks control bytes as it validates the UTF-8), else one tight scan.
            let j = i + 1;
            if (toSink) {
              if (nextQuote < j) nextQuote = view.indexOf(0x22, j) < 0 ? chunk.length : view.indexOf(0x22, j);
              if (nextSlash < j) nextSlash = view.indexOf(0x5c, j) < 0 ? chunk.length : view.indexOf(0x5c, j);
              j = Math.min(nextQuote, nextSlash);
            } else
              while (j < chunk.length) {
                const c = chunk[j] ?? 0;
                if (c === 0x22 || c === 0x5c || c < 0x20) break;
                j++;
              }
            i = j - 1;
            continue;
          }
          if (mode === 'atom') {
            if ((b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x7a) || b === 0x2d || b === 0x2b || b === 0x2e || b === 0x45) {
              atom += String.fromCharCode(b);
              if (atom.length > 32) throw bad(`${what}: malformed JSON (a number or literal too long)`);
              continue;
            }
            endAtom();
          }
          if (WHITESPACE.has(b)) continue;
          other++;
          if (other > maxOther) throw bad(`${what}: the message's fields outside the content pass ${maxOther} bytes; refused`);
          if (mode === 'value') {
            if (b === 0x7b) {
              stack.push({ kind: 'object', value: Object.create(null) as Record<string, unknown>, key: null });
              mode = 'key';
            } else if (b === 0x5b) {
              stack.push({ kind: 'array', value: [] });
              mode = 'value';
            } else if (b === 0x22) {
              mode = 'string';
              stringIsKey = false;
              toSink = isContentPath();
              if (toSink && sawContent) throw bad(`${what}: the artifact names its content twice`);
            } else if (b === 0x5d && isEmptyArray(stack.at(-1))) {
              place(stack.pop()?.value);
            } else {
              mode = 'atom';
              atom = String.fromCharCode(b);
            }
            if (stack.length > 8) throw bad(`${what}: JSON nested too deeply`);
          } else if (mode === 'key') {
            if (b === 0x22) {
              mode = 'string';
              stringIsKey = true;
              toSink = false;
            } else if (b === 0x7d && isEmptyObject(stack.at(-1))) {
              place(stack.pop()?.value);
            } else throw bad(`${what}: malformed JSON (expected a key)`);
          } else if (mode === 'colon') {
            if (b !== 0x3a) throw bad(`${what}: malformed JSON (expected ':')`);
            mode = 'value';
          } else if ((mode as Mode) === 'after') {
            const top = stack.at(-1);
            if (!top) throw bad(`${what}: data after the JSON value`);
            if (b === 0x2c) mode = top.kind === 'object' ? 'key' : 'value';
            else if ((b === 0x7d && top.kind === 'object') || (b === 0x5d && top.kind === 'array')) {
              stack.pop();
              place(top.value);
            } else throw bad(`${what}: malformed JSON`);
          }
        }
        if (mode === 'string') flushRun(chunk.length);
      } catch (err) {
        if (err instanceof TypeError) throw bad(`${what}: the response is not valid UTF-8`);
        throw err;
      }
      await sink.drain();
    }
    if ((mode as Mode) === 'atom' && stack.length === 0) endAtom();
    if (!haveRoot || stack.length > 0 || (mode as Mode) === 'string') throw bad(`${what}: the response ended mid-message`);
    const sha256 = await sink.end();
    return { message: root, bytes: sink.bytes, sha256 };
  } finally {
    await file.close();
  }
}
