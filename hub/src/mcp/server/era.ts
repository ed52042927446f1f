// Which MCP era a JSON-RPC message belongs to (2026-07-28 or 2025), without loading the SDK or the
// tool registry: `palace mcp` checks each frame with it before deciding where to answer it.

export const MODERN_VERSION = '2026-07-28';
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/** Whether `version` names the 2026 revision or a later one (dated versions compare as strings). */
export function isModernVersion(version: unknown): version is string {
  return typeof version === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= MODERN_VERSION;
}

/**
 * The era of one JSON-RPC message: `modern` when it is server/discover, carries a 2026 (or later)
 * version in `_meta`, or came with a 2026 `MCP-Protocol-Version` header (HTTP); `legacy` otherwise,
 * initialize always (a 2025 client offering 2026-07-28 there gets the 2025-11-25 counter-offer).
 */
export function eraOf(message: { method?: unknown; params?: unknown }, headerVersion?: string): 'modern' | 'legacy' {
  if (message.method === 'initialize') return 'legacy';
  if (message.method === 'server/discover') return 'modern';
  const params = message.params;
  const meta = params && typeof params === 'object' ? (params as { _meta?: unknown })._meta : undefined;
  const declared = meta && typeof meta === 'object' ? (meta as Record<string, unknown>)[META_PROTOCOL_VERSION] : undefined;
  if (declared !== undefined) return isModernVersion(declared) ? 'modern' : 'legacy';
  return isModernVersion(headerVersion) ? 'modern' : 'legacy';
}
