// Documents to plain text for `--mode extract`: Markdown is kept verbatim (front matter dropped),
// HTML loses scripts, styles and tags and keeps its text with paragraph breaks and decoded entities.

import { extname } from 'node:path';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', mdash: '—', ndash: '–', hellip: '…', copy: '©' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** Visible text of an HTML document: block elements become line breaks, headings keep a `#`. */
export function htmlToText(html: string): string {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]?.trim();
  const body = /<body[^>]*>([\s\S]*)<\/body>/i.exec(html)?.[1] ?? html;
  const text = body
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(script|style|noscript|template|svg)\b[\s\S]*?<\/\1>/gi, '')
    .replace(/<h([1-6])\b[^>]*>/gi, (_m, level: string) => `\n\n${'#'.repeat(Number(level))} `)
    .replace(/<li\b[^>]*>/gi, '\n- ')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/?(p|div|section|article|header|footer|main|aside|nav|h[1-6]|ul|ol|table|tr|pre|blockquote|figure)\b[^>]*>/gi, '\n\n')
    .replace(/<\/?(td|th)\b[^>]*>/gi, ' ')
    .replace(/<[^>]+>/g, '');
  const clean = decodeEntities(text)
    .split('\n')
    .map((l) => l.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return title && !clean.startsWith(`# ${title}`) ? `# ${title}\n\n${clean}` : clean;
}

/** Markdown without its YAML front matter. */
export function markdownText(md: string): string {
  return md.replace(/^---\n[\s\S]*?\n---\n/, '').trim();
}

/** The text of a document by its extension; undefined for a kind this build cannot read. */
export function extractText(file: string, raw: string): string | undefined {
  const ext = extname(file).toLowerCase();
  if (ext === '.html' || ext === '.htm') return htmlToText(raw);
  if (ext === '.md' || ext === '.markdown') return markdownText(raw);
  if (ext === '.txt') return raw;
  return undefined;
}
