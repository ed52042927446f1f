// PDF and DOCX extraction for `--mode extract` on documents generated here: real pdfjs-dist and
// mammoth; line and paragraph joining by position; page numbers per chunk; encrypted, corrupt and
// missing-library failures as distinct, clear errors.

import { describe, expect, it } from 'vitest';

import { DEFAULT_LOADERS, extractDocument, pageText } from '../../hub/src/mine/documents.js';
import { documentChunks } from '../../hub/src/mine/miner.js';
import { makeDocx, makePdf } from '../helpers/documents.js';
import { rejectedHubError } from '../helpers/errors.js';

const item = (str: string, x: number, y: number, width = str.length * 6, height = 12, hasEOL = false) => ({
  str,
  transform: [height, 0, 0, height, x, y],
  width,
  height,
  hasEOL,
});

describe('pageText', () => {
  it('joins items on one baseline, breaks lines by y, and paragraphs at a wide gap', () => {
    const text = pageText([
      item('The hub', 72, 720),
      item('holds', 72 + 7 * 6 + 3, 720),
      item(' the lease.', 72 + 7 * 6 + 3 + 30, 720),
      item('Second line', 72, 704),
      { str: '', transform: [1, 0, 0, 1, 0, 0], width: 0, height: 0, hasEOL: true },
      item('New paragraph', 72, 660),
    ]);
    expect(text).toBe('The hub holds the lease.\nSecond line\n\nNew paragraph');
  });

  it('keeps items that touch (no gap) together and ignores marked-content parts', () => {
    expect(pageText([item('lea', 72, 700, 18), {}, item('se', 90, 700)])).toBe('lease');
  });
});

describe('extractDocument', () => {
  it('reads a generated PDF: lines, page breaks as blank lines, page starts', async () => {
    const pdf = makePdf([['The writer lease is held by the hub.', 'Only one hub serves a palace.'], ['Page two: restart with palace daemon start.']]);
    const doc = await extractDocument('/x/guide.pdf', pdf);
    expect(doc.format).toBe('pdf');
    expect(doc.text).toBe('The writer lease is held by the hub.\nOnly one hub serves a palace.\n\nPage two: restart with palace daemon start.');
    expect(doc.pageStarts).toEqual([0, doc.text.indexOf('Page two')]);
    const { chunks } = documentChunks(doc);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.metadata).toEqual({ page_start: 1, page_end: 2 });
  });

  it('gives each chunk of a long PDF the pages it spans', async () => {
    const line = (p: number, i: number) => `Page ${p} line ${i}: the quick brown fox files a drawer in the palace.`;
    const pages = [1, 2, 3].map((p) => Array.from({ length: 20 }, (_, i) => line(p, i)));
    const { chunks } = documentChunks(await extractDocument('/x/long.pdf', makePdf(pages)));
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks[0]?.metadata).toMatchObject({ page_start: 1 });
    expect(chunks.at(-1)?.metadata).toMatchObject({ page_end: 3 });
    for (const c of chunks) {
      const first = Number(/Page (\d)/.exec(c.text)?.[1]);
      expect(c.metadata?.page_start).toBeLessThanOrEqual(first);
    }
  });

  it('reads a generated DOCX with mammoth, keeping headings', async () => {
    const docx = await makeDocx([{ heading: 'Backups' }, 'The backup runs nightly at 02:00.', 'Restores are tested monthly & logged.']);
    const doc = await extractDocument('/x/ops.docx', docx);
    expect(doc).toEqual({ format: 'docx', text: '# Backups\n\nThe backup runs nightly at 02:00.\n\nRestores are tested monthly & logged.' });
  });

  it('refuses an encrypted PDF, a corrupt PDF and a corrupt DOCX with mine.extract_failed', async () => {
    const encrypted = await rejectedHubError(extractDocument('/x/locked.pdf', makePdf([['secret']], { encrypt: true })));
    expect(encrypted.code).toBe('mine.extract_failed');
    expect(encrypted.message).toContain('encrypted');
    const corrupt = await rejectedHubError(extractDocument('/x/broken.pdf', Buffer.from('%PDF-1.4\nnot really a pdf')));
    expect(corrupt.code).toBe('mine.extract_failed');
    expect(corrupt.message).toContain('/x/broken.pdf');
    const docx = await rejectedHubError(extractDocument('/x/broken.docx', Buffer.from('not a zip')));
    expect(docx.code).toBe('mine.extract_failed');
  });

  it('names the package to install when an optional library is missing', async () => {
    const missing = async (): Promise<never> => {
      throw Object.assign(new Error("Cannot find package 'pdfjs-dist'"), { code: 'ERR_MODULE_NOT_FOUND' });
    };
    const pdf = await rejectedHubError(extractDocument('/x/a.pdf', makePdf([['x']]), { ...DEFAULT_LOADERS, pdfjs: missing }));
    expect(pdf.code).toBe('mine.extractor_missing');
    expect(pdf.message).toContain('npm install pdfjs-dist');
    const docx = await rejectedHubError(extractDocument('/x/a.docx', await makeDocx(['x']), { ...DEFAULT_LOADERS, mammoth: missing }));
    expect(docx.code).toBe('mine.extractor_missing');
    expect(docx.message).toContain('npm install mammoth');
  });
});
