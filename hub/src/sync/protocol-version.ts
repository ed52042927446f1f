// The peer-sync protocol's version on its own (protocol.ts re-exports it): what memory-sync.ts needs
// at load, without the protocol's zod schemas, which a CLI process (no sync) never builds.

export const PROTOCOL_VERSION = 2;
