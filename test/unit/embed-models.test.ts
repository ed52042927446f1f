// Model files: the registry, the status of <home>/models/<name>/, and downloadModel against a local
// node:http server serving a generated model (never the network), including the offline message.

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DownloadProgress } from '../../hub/src/embed/models.js';
import {
  DEFAULT_MODEL,
  canonicalModelName,
  downloadModel,
  knownModel,
  modelDir,
  modelStatus,
  onnxSpecFor,
} from '../../hub/src/embed/models.js';
import { createOnnxEmbedder } from '../../hub/src/embed/onnx-embedder.js';
import { silentLogger } from '../../hub/src/log.js';
import { catchHubError, rejectedHubError } from '../helpers/errors.js';
import { writeTinyBert } from '../helpers/tiny-bert.js';
import type { TmpDir } from '../helpers/tmp-dir.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

type Handler = (req: IncomingMessage, res: ServerResponse, path: string) => boolean;

interface FileServer {
  baseUrl: string;
  requests: string[];
  /** Per-test overrides: return true when handled. */
  override: Handler | undefined;
  close(): Promise<void>;
}

/** Serves `root` as Hugging Face would: GET /<repo>/resolve/main/<path>, 404 otherwise. */
async function startFileServer(root: string, repo: string): Promise<FileServer> {
  const state: FileServer = { baseUrl: '', requests: [], override: undefined, close: async () => undefined };
  const prefix = `/${repo}/resolve/main/`;
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    state.requests.push(url);
    const path = url.startsWith(prefix) ? decodeURIComponent(url.slice(prefix.length)) : '';
    if (state.override?.(req, res, path)) return;
    const file = join(root, path);
    if (!path || path.includes('..') || !existsSync(file)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
      return;
    }
    const body = readFileSync(file);
    res.writeHead(200, { 'content-length': String(body.length), 'content-type': 'application/octet-stream' });
    // Two writes, so progress sees more than one chunk for the bigger files.
    const half = Math.floor(body.length / 2);
    res.write(body.subarray(0, half));
    setImmediate(() => res.end(body.subarray(half)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

/** A port nothing listens on: what an offline machine looks like to fetch. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

function leftovers(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.includes('.partial-'));
}

let tmp: TmpDir;
let repoDir: string;
let server: FileServer;
const MINILM_REPO = 'sentence-transformers/all-MiniLM-L6-v2';

beforeAll(async () => {
  tmp = makeTmpDir('palace-models-');
  repoDir = join(tmp.path, 'repo');
  // 384-d like the real all-MiniLM-L6-v2, so verification's dimension check passes.
  writeTinyBert({ dir: repoDir, hidden: 384, pooling: 'mean' });
  server = await startFileServer(repoDir, MINILM_REPO);
});
afterAll(async () => {
  await server.close();
  tmp.cleanup();
});

describe('registry and folders', () => {
  it('knows all-MiniLM-L6-v2 and bge-small-en-v1.5 by name and alias', () => {
    expect(DEFAULT_MODEL).toBe('all-MiniLM-L6-v2');
    expect(knownModel('minilm')).toMatchObject({
      name: 'all-MiniLM-L6-v2',
      repo: MINILM_REPO,
      dimensions: 384,
      pooling: 'mean',
      queryPrefix: '',
    });
    expect(knownModel('BAAI/bge-small-en-v1.5')).toMatchObject({
      name: 'bge-small-en-v1.5',
      dimensions: 384,
      pooling: 'cls',
      queryPrefix: 'Represent this sentence for searching relevant passages: ',
    });
    expect(
      knownModel('bge-small')
        ?.files.filter((f) => f.required)
        .map((f) => f.path),
    ).toEqual(['onnx/model.onnx', 'tokenizer.json', 'config.json']);
    expect(knownModel('some-other-model')).toBeUndefined();
  });

  it('places models under <home>/models/<canonical name>/ and refuses names that are not folder names', () => {
    expect(modelDir('/h', 'MiniLM')).toBe(join('/h', 'models', 'all-MiniLM-L6-v2'));
    expect(modelDir('/h', 'my-model_v2.1')).toBe(join('/h', 'models', 'my-model_v2.1'));
    expect(onnxSpecFor('/h', 'bge-small', 'cuda')).toEqual({
      provider: 'onnx',
      model: 'bge-small-en-v1.5',
      modelDir: join('/h', 'models', 'bge-small-en-v1.5'),
      device: 'cuda',
    });
    for (const bad of ['../etc', 'a/b', '', '.hidden']) {
      const err = catchHubError(() => canonicalModelName(bad));
      expect(err.code).toBe('input.invalid');
      expect(err.field).toBe('model');
    }
  });

  it('reports which files of a model folder are present and missing', () => {
    const home = join(tmp.path, 'status-home');
    const empty = modelStatus(home, 'all-MiniLM-L6-v2');
    expect(empty.ready).toBe(false);
    expect(empty.dir).toBe(join(home, 'models', 'all-MiniLM-L6-v2'));
    expect(empty.missing).toEqual(['onnx/model.onnx', 'tokenizer.json', 'config.json']);
    expect(empty.missingOptional).toContain('1_Pooling/config.json');

    writeTinyBert({ dir: join(home, 'models', 'all-MiniLM-L6-v2'), modelPath: 'model.onnx' });
    const full = modelStatus(home, 'all-MiniLM-L6-v2');
    expect(full.ready).toBe(true);
    expect(full.onnxFile).toBe('model.onnx');
    expect(full.present).toEqual(
      expect.arrayContaining(['model.onnx', 'tokenizer.json', 'config.json', 'tokenizer_config.json']),
    );
    expect(full.missing).toEqual([]);

    writeFileSync(join(home, 'models', 'all-MiniLM-L6-v2', 'config.json'), '');
    expect(modelStatus(home, 'all-MiniLM-L6-v2').missing).toEqual(['config.json']);
  });
});

describe('downloadModel', () => {
  it('fetches every file with progress, renames temp files into place, and verifies the model loads', async () => {
    const home = join(tmp.path, 'dl-home');
    const events: DownloadProgress[] = [];
    server.requests.length = 0;
    const result = await downloadModel(home, 'all-MiniLM-L6-v2', {
      baseUrl: server.baseUrl,
      onProgress: (p) => events.push(p),
    });
    const dir = join(home, 'models', 'all-MiniLM-L6-v2');
    expect(result.dir).toBe(dir);
    expect(result.dimensions).toBe(384);
    expect(result.downloaded).toEqual([
      'onnx/model.onnx',
      'tokenizer.json',
      'config.json',
      'tokenizer_config.json',
      'special_tokens_map.json',
      '1_Pooling/config.json',
    ]);
    expect(result.absent).toEqual(['sentence_bert_config.json']);
    expect(server.requests).toContain(`/${MINILM_REPO}/resolve/main/onnx/model.onnx`);
    for (const file of result.downloaded) {
      expect(readFileSync(join(dir, file)).equals(readFileSync(join(repoDir, file)))).toBe(true);
    }
    expect(leftovers(dir)).toEqual([]);

    const onnxEvents = events.filter((e) => e.file === 'onnx/model.onnx');
    const size = readFileSync(join(repoDir, 'onnx/model.onnx')).length;
    expect(onnxEvents.filter((e) => e.state === 'downloading').length).toBeGreaterThan(1);
    expect(onnxEvents.every((e) => e.fileIndex === 1 && e.fileCount === 7)).toBe(true);
    expect(onnxEvents.filter((e) => e.state === 'downloading').every((e) => e.totalBytes === size)).toBe(
      true,
    );
    expect(onnxEvents.at(-1)).toMatchObject({ state: 'done', receivedBytes: size });
    expect(events.find((e) => e.file === 'sentence_bert_config.json')?.state).toBe('absent');

    expect(modelStatus(home, 'all-MiniLM-L6-v2').ready).toBe(true);
    const embedder = await createOnnxEmbedder(onnxSpecFor(home, 'all-MiniLM-L6-v2', 'cpu'), {
      logger: silentLogger,
    });
    expect(embedder.info()).toMatchObject({ model: 'all-MiniLM-L6-v2', dimensions: 384 });
    await embedder.close();

    // A second run finds the files present and fetches nothing; force fetches them again.
    server.requests.length = 0;
    const again = await downloadModel(home, 'minilm', { baseUrl: server.baseUrl });
    expect(again.skipped).toHaveLength(6);
    expect(server.requests.filter((r) => !r.endsWith('sentence_bert_config.json'))).toEqual([]);
    const forced = await downloadModel(home, 'minilm', {
      baseUrl: server.baseUrl,
      force: true,
      verify: false,
    });
    expect(forced.downloaded).toHaveLength(6);
  });

  it('fails with the URL and the files still to place when the server errors, leaving no temp file', async () => {
    const home = join(tmp.path, 'dl-500');
    server.override = (_req, res, path) => {
      if (path !== 'tokenizer.json') return false;
      res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
      return true;
    };
    try {
      const err = await rejectedHubError(
        downloadModel(home, 'all-MiniLM-L6-v2', { baseUrl: server.baseUrl }),
      );
      expect(err.code).toBe('memory.embedder_missing');
      expect(err.message).toContain(
        `${server.baseUrl}/${MINILM_REPO}/resolve/main/tokenizer.json answered HTTP 500`,
      );
      const dir = join(home, 'models', 'all-MiniLM-L6-v2');
      expect(err.message).toContain(join(dir, 'tokenizer.json'));
      expect(err.message).not.toContain(join(dir, 'onnx/model.onnx'));
      expect(existsSync(join(dir, 'onnx/model.onnx'))).toBe(true);
      expect(leftovers(dir)).toEqual([]);
    } finally {
      server.override = undefined;
    }
  });

  it('rejects a body cut short and an empty file', async () => {
    const home = join(tmp.path, 'dl-short');
    server.override = (_req, res, path) => {
      if (path === 'onnx/model.onnx') {
        res.writeHead(200, { 'content-length': '100000' });
        res.write(Buffer.alloc(10, 1));
        setImmediate(() => res.destroy());
        return true;
      }
      if (path === 'config.json') {
        res.writeHead(200, { 'content-length': '0' }).end();
        return true;
      }
      return false;
    };
    try {
      const err = await rejectedHubError(
        downloadModel(home, 'all-MiniLM-L6-v2', { baseUrl: server.baseUrl }),
      );
      expect(err.code).toBe('memory.embedder_missing');
      expect(err.message).toMatch(/onnx\/model\.onnx broke off after \d+ bytes/);
      const dir = join(home, 'models', 'all-MiniLM-L6-v2');
      expect(existsSync(join(dir, 'onnx/model.onnx'))).toBe(false);
      expect(leftovers(dir)).toEqual([]);

      server.override = (_req, res, path) => {
        if (path !== 'config.json') return false;
        res.writeHead(200, { 'content-length': '0' }).end();
        return true;
      };
      const empty = await rejectedHubError(
        downloadModel(home, 'all-MiniLM-L6-v2', { baseUrl: server.baseUrl }),
      );
      expect(empty.message).toContain('config.json sent an empty file');
    } finally {
      server.override = undefined;
    }
  });

  it('refuses files that do not make a working model', async () => {
    const home = join(tmp.path, 'dl-garbage');
    server.override = (_req, res, path) => {
      if (path !== 'onnx/model.onnx') return false;
      res.writeHead(200).end('this is not an onnx model');
      return true;
    };
    try {
      const err = await rejectedHubError(
        downloadModel(home, 'all-MiniLM-L6-v2', { baseUrl: server.baseUrl }),
      );
      expect(err.code).toBe('memory.embedder_missing');
      expect(err.message).toContain('do not load as a working model');
      expect(err.message).toContain(join(home, 'models', 'all-MiniLM-L6-v2'));
    } finally {
      server.override = undefined;
    }
  });

  it('offline, says exactly which files to place where and where they come from', async () => {
    const home = join(tmp.path, 'offline-home');
    const offline = await closedPortUrl();
    const err = await rejectedHubError(downloadModel(home, 'bge-small-en-v1.5', { baseUrl: offline }));
    expect(err.code).toBe('memory.embedder_missing');
    const dir = join(home, 'models', 'bge-small-en-v1.5');
    expect(err.message).toContain(`could not download bge-small-en-v1.5 from ${offline}`);
    expect(err.message).toContain('is unreachable');
    expect(err.message).toContain('ECONNREFUSED');
    for (const file of ['onnx/model.onnx', 'tokenizer.json', 'config.json']) {
      expect(err.message).toContain(`${join(dir, file)}`);
      expect(err.message).toContain(`${offline}/BAAI/bge-small-en-v1.5/resolve/main/${file}`);
    }
    expect(err.message).toContain(`(optional) ${join(dir, '1_Pooling/config.json')}`);
    const missing = err.data?.missing as { file: string; path: string; url: string; required: boolean }[];
    expect(missing.find((m) => m.file === 'onnx/model.onnx')).toEqual({
      file: 'onnx/model.onnx',
      path: join(dir, 'onnx/model.onnx'),
      url: `${offline}/BAAI/bge-small-en-v1.5/resolve/main/onnx/model.onnx`,
      required: true,
    });
  });

  it('refuses to download a model it does not know', async () => {
    const err = await rejectedHubError(
      downloadModel(join(tmp.path, 'x'), 'my-own-model', { baseUrl: server.baseUrl }),
    );
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('model');
    expect(err.message).toContain('all-MiniLM-L6-v2, bge-small-en-v1.5');
  });
});
