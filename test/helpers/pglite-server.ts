// A real Postgres engine for tests: PGlite 0.3.16 (bundles pgvector and Apache AGE) served on a
// loopback port by pglite-socket, so the real `pg` client talks to it over the wire protocol.

import { PGlite } from '@electric-sql/pglite';
import { age } from '@electric-sql/pglite/age';
import { vector } from '@electric-sql/pglite/vector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface PgliteServer {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  dsn: string;
  db: PGlite;
  stop: () => Promise<void>;
}

export async function startPgliteServer(): Promise<PgliteServer> {
  const db = await PGlite.create({ extensions: { vector, age } });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 64 });
  await server.start();
  return {
    dsn: `postgres://postgres@${server.getServerConn()}/postgres`,
    db,
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}

let serial = 0;

/** A namespace no other test in this process uses. */
export function freshNamespace(prefix = 't'): string {
  serial += 1;
  return `${prefix}${process.pid}_${serial}_`;
}
