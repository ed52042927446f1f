// Binary documents to plain text for `--mode extract`: PDF through pdfjs-dist (legacy Node build, no
// worker; text items joined into lines and paragraphs by position, pages kept) and DOCX through
// mammoth (headings kept). Both are optional dependencies loaded on first use; never imported eagerly.

import { extname } from 'node:path';

import { HubError } from '../errors.js';
import { htmlToText } from './extract.js';

/** Extensions read as bytes and extracted here (every other extract-mode file is text). */
export const BINARY_DOCUMENT_EXTENSIONS: ReadonlySet<string> = new Set(['.pdf', '.docx']);

/** A document's text, and for a PDF the offset in `text` where each page starts. */
export interface ExtractedDocument {
  format: 'pdf' | 'docx';
  text: string;
  pageStarts?: number[];
}

// The small part of each library's API used here, declared in our terms so the build does not need
// the optional packages' type declarations (pdfjs-dist's pull in DOM types).
interface PdfTextItem {
  str?: string;
  transform?: number[];
  width?: number;
  height?: number;
  hasEOL?: boolean;
}
interface PdfPage {
  getTextContent(): Promise<{ items: PdfTextItem[] }>;
  cleanup(): void;
}
interface PdfDocument {
  numPages: number;
  getPage(n: number): Promise<PdfPage>;
  destroy(): Promise<void>;
}
export interface PdfJs {
  getDocument(src: Record<string, unknown>): { promise: Promise<PdfDocument>; destroy(): Promise<void> };
}
export interface Mammoth {
  convertToHtml(input: { buffer: Buffer }, options?: Record<string, unknown>): Promise<{ value: string }>;
  images: { imgElement(f: () => Promise<{ src: string }>): unknown };
}

/** How the optional libraries are loaded (injectable, so a missing package can be tested). */
export interface DocumentLoaders {
  pdfjs: () => Promise<PdfJs>;
  mammoth: () => Promise<Mammoth>;
}

// Held in variables so TypeScript does not resolve (or require) the optional packages at build time.
const PDFJS_MODULE = 'pdfjs-dist/legacy/build/pdf.mjs';
const MAMMOTH_MODULE = 'mammoth';

export const DEFAULT_LOADERS: DocumentLoaders = {
  pdfjs: async () => (await import(PDFJS_MODULE)) as PdfJs,
  mammoth: async () => {
    const mod = (await import(MAMMOTH_MODULE)) as Mammoth & { default?: Mammoth };
    return mod.default ?? mod;
  },
};

function isMissingModule(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

async function load<T>(what: string, pkg: string, loader: () => Promise<T>): Promise<T> {
  try {
    return await loader();
  } catch (err) {
    if (isMissingModule(err))
      throw new HubError('mine.extractor_missing', `reading ${what} needs the optional package ${pkg}, which is not installed: run \`npm install ${pkg}\` where palace is installed`, {
        cause: err,
        data: { package: pkg },
      });
    throw err;
  }
}

/** Whether `file` is a binary document this module extracts. */
export function isBinaryDocument(file: string): boolean {
  return BINARY_DOCUMENT_EXTENSIONS.has(extname(file).toLowerCase());
}

/** One page's text: items on one baseline form a line; a gap wider than ~1.8 lines starts a paragraph. */
export function pageText(items: readonly PdfTextItem[]): string {
  let out = '';
  let line = '';
  let lastY: number | undefined;
  let lastEnd: number | undefined;
  let lastSize = 0;
  let broke = false;
  const flush = (): void => {
    out += line.replace(/[ \t]+$/, '');
    line = '';
  };
  for (const item of items) {
    if (typeof item.str !== 'string') continue; // marked-content boundaries carry no text
    if (item.str !== '') {
      const [, , , , x = 0, y = 0] = item.transform ?? [];
      const size = Math.abs(item.height ?? 0) || lastSize || 10;
      if (lastY !== undefined && (broke || Math.abs(y - lastY) > size * 0.5)) {
        flush();
        out += Math.abs(lastY - y) > Math.max(size, lastSize) * 1.8 ? '\n\n' : '\n';
        lastEnd = undefined;
      }
      const gap = lastEnd === undefined ? 0 : x - lastEnd;
      if (line !== '' && gap > size * 0.15 && !/\s$/.test(line) && !/^\s/.test(item.str)) line += ' ';
      line += item.str;
      lastY = y;
      lastEnd = x + (item.width ?? 0);
      lastSize = size;
      broke = false;
    }
    if (item.hasEOL === true && lastY !== undefined) broke = true;
  }
  flush();
  return out.replace(/\n{3,}/g, '\n\n').trim();
}

async function extractPdf(file: string, bytes: Uint8Array, loaders: DocumentLoaders): Promise<ExtractedDocument> {
  const pdfjs = await load('PDF files', 'pdfjs-dist', loaders.pdfjs);
  // pdfjs takes ownership of (and detaches) the buffer it is given: hand it a copy.
  const task = pdfjs.getDocument({ data: new Uint8Array(bytes), verbosity: 0, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, stopAtErrors: false });
  let doc: PdfDocument;
  try {
    doc = await task.promise;
  } catch (err) {
    await task.destroy().catch(() => undefined);
    const name = (err as { name?: string } | null)?.name;
    const why = name === 'PasswordException' ? 'it is encrypted (password protected)' : `it is not a readable PDF (${(err as Error).message})`;
    throw new HubError('mine.extract_failed', `cannot extract ${file}: ${why}`, { cause: err });
  }
  try {
    let text = '';
    const pageStarts: number[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const body = pageText((await page.getTextContent()).items);
      page.cleanup();
      if (text !== '') text += '\n\n';
      pageStarts.push(text.length);
      text += body;
    }
    return { format: 'pdf', text: text.trim() === '' ? '' : text, pageStarts };
  } catch (err) {
    throw new HubError('mine.extract_failed', `cannot extract ${file}: ${(err as Error).message}`, { cause: err });
  } finally {
    await doc.destroy().catch(() => undefined);
  }
}

async function extractDocx(file: string, bytes: Uint8Array, loaders: DocumentLoaders): Promise<ExtractedDocument> {
  const mammoth = await load('DOCX files', 'mammoth', loaders.mammoth);
  try {
    const html = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      { convertImage: mammoth.images.imgElement(async () => ({ src: '' })), externalFileAccess: false },
    );
    return { format: 'docx', text: htmlToText(html.value) };
  } catch (err) {
    throw new HubError('mine.extract_failed', `cannot extract ${file}: it is not a readable DOCX (${(err as Error).message})`, { cause: err });
  }
}

/** The text of a PDF or DOCX; HubError `mine.extractor_missing` or `mine.extract_failed` otherwise. */
export async function extractDocument(file: string, bytes: Uint8Array, loaders: DocumentLoaders = DEFAULT_LOADERS): Promise<ExtractedDocument> {
  const ext = extname(file).toLowerCase();
  if (ext === '.pdf') return extractPdf(file, bytes, loaders);
  if (ext === '.docx') return extractDocx(file, bytes, loaders);
  throw new HubError('mine.extract_failed', `cannot extract ${file}: ${ext || 'no extension'} is not a binary document kind palace reads`);
}
