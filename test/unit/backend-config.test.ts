// Backend selection and the networked backend settings: defaults, precedence, and bad values
// refused at start naming the variable.

import { describe, expect, it } from 'vitest';

import { loadConfig } from '../../hub/src/config.js';
import { catchHubError } from '../helpers/errors.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

const home = makeTmpDir('palace-backend-config-');
const base = { PALACE_HOME: home.path };

describe('backend selection', () => {
  it('defaults to the embedded lancedb with documented networked defaults', () => {
    const config = loadConfig({}, base);
    expect(config.backend).toBe('lancedb');
    expect(config.backendSettings).toMatchObject({
      namespace: 'palace_',
      timeoutSeconds: 30,
      qdrantUrl: 'http://localhost:6333',
      qdrantApiKey: undefined,
      milvusConsistencyLevel: 'Strong',
    });
  });

  it('takes --backend over PALACE_BACKEND, case-insensitively', () => {
    const env = { ...base, PALACE_BACKEND: 'QDRANT' };
    expect(loadConfig({}, env).backend).toBe('qdrant');
    expect(loadConfig({ backend: 'milvus' }, env).backend).toBe('milvus');
  });

  it('refuses an unknown backend naming where it came from', () => {
    const err = catchHubError(() => loadConfig({}, { ...base, PALACE_BACKEND: 'chroma' }));
    expect(err.code).toBe('hub.config');
    expect(err.field).toBe('PALACE_BACKEND');
    expect(err.message).toContain('lancedb, pgvector, qdrant, milvus');
    expect(catchHubError(() => loadConfig({ backend: 'sqlite' }, base)).field).toBe('--backend');
  });

  it('needs a postgres DSN for pgvector', () => {
    expect(catchHubError(() => loadConfig({}, { ...base, PALACE_BACKEND: 'pgvector' })).field).toBe('PALACE_PGVECTOR_DSN');
    expect(catchHubError(() => loadConfig({}, { ...base, PALACE_BACKEND: 'pgvector', PALACE_PGVECTOR_DSN: 'mysql://x' })).field).toBe('PALACE_PGVECTOR_DSN');
    const config = loadConfig({}, { ...base, PALACE_BACKEND: 'pgvector', PALACE_PGVECTOR_DSN: 'postgres://u@db:5432/palace' });
    expect(config.backendSettings.pgvectorDsn).toBe('postgres://u@db:5432/palace');
  });

  it.each([
    ['PALACE_BACKEND_NAMESPACE', 'Bad-Name'],
    ['PALACE_BACKEND_TIMEOUT', '0'],
    ['PALACE_QDRANT_URL', 'localhost:6333'],
    ['PALACE_MILVUS_URI', 'ftp://milvus'],
    ['PALACE_MILVUS_CONSISTENCY_LEVEL', 'Maybe'],
    ['PALACE_MILVUS_DB_NAME', 'has space'],
  ])('refuses a bad %s', (name, value) => {
    const err = catchHubError(() => loadConfig({}, { ...base, [name]: value }));
    expect(err.code).toBe('hub.config');
    expect(err.field).toBe(name);
  });

  it('reads the networked settings and normalises the consistency level', () => {
    const config = loadConfig(
      {},
      {
        ...base,
        PALACE_BACKEND_NAMESPACE: 'team_a_',
        PALACE_BACKEND_TIMEOUT: '2.5',
        PALACE_QDRANT_URL: 'https://qdrant.internal:6333/',
        PALACE_QDRANT_API_KEY: 'k',
        PALACE_MILVUS_URI: 'http://milvus:19530',
        PALACE_MILVUS_TOKEN: 'root:Milvus',
        PALACE_MILVUS_DB_NAME: 'palace',
        PALACE_MILVUS_CONSISTENCY_LEVEL: 'bounded',
      },
    );
    expect(config.backendSettings).toMatchObject({
      namespace: 'team_a_',
      timeoutSeconds: 2.5,
      qdrantUrl: 'https://qdrant.internal:6333',
      qdrantApiKey: 'k',
      milvusUri: 'http://milvus:19530',
      milvusToken: 'root:Milvus',
      milvusDbName: 'palace',
      milvusConsistencyLevel: 'Bounded',
    });
  });
});
