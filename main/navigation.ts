// Which URLs the dashboard window may show and which pages may talk to main: the hub's own
// origin (it follows the hub to a new port), a dev server in development, and the app's bundled
// fallback page. Pure.

/** The origin of a URL, or null when it has none (about:blank, malformed). */
export function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    if (u.protocol === 'file:') return 'file://';
    return u.origin === 'null' ? null : u.origin;
  } catch {
    return null;
  }
}

/** True when `target` is on one of the allowed origins (a file: URL only when 'file://' is allowed). */
export function isAllowedUrl(
  target: string,
  allowedOrigins: readonly (string | null | undefined)[],
): boolean {
  const origin = originOf(target);
  if (origin === null) return false;
  return allowedOrigins.some((allowed) => allowed != null && originOf(allowed) === origin);
}
