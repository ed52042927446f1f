// SHA-256 of text as lowercase hex, via WebCrypto. Undefined where WebCrypto is unavailable (a page
// served over plain http from a non-loopback host is not a secure context).

export async function sha256Hex(text: string): Promise<string | undefined> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return undefined;
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
