// The known-model registry and model folders (<home>/models/<name>/): which files are present, and the
// error that says exactly which files to place where. No network and no onnxruntime here.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { HubError, invalid } from '../errors.js';
import type { Pooling } from './pooling.js';
import type { EmbedderSpec } from './spec.js';

export interface ModelFile {
  /** Path inside the model folder, identical to the path in the Hugging Face repository. */
  path: string;
  /** Required files must be present for the model to load; optional ones refine it (pooling, length). */
  required: boolean;
}

export interface KnownModel {
  /** Folder name under <home>/models/ and the name recorded with a palace. */
  name: string;
  /** Other names accepted on the command line (case-insensitive). */
  aliases: readonly string[];
  /** Hugging Face repository id. */
  repo: string;
  dimensions: number;
  pooling: Pooling;
  /** Prepended to texts embedded as queries (bge's retrieval instruction); documents get none. */
  queryPrefix: string;
  /** sentence-transformers max_seq_length, used when sentence_bert_config.json is absent. */
  maxLength: number;
  files: readonly ModelFile[];
}

/** The ONNX file may sit at either path; the registry fetches the first. */
export const ONNX_PATHS = ['onnx/model.onnx', 'model.onnx'] as const;

const SENTENCE_TRANSFORMERS_FILES: readonly ModelFile[] = [
  { path: 'onnx/model.onnx', required: true },
  { path: 'tokenizer.json', required: true },
  { path: 'config.json', required: true },
  { path: 'tokenizer_config.json', required: false },
  { path: 'special_tokens_map.json', required: false },
  { path: '1_Pooling/config.json', required: false },
  { path: 'sentence_bert_config.json', required: false },
];

export const KNOWN_MODELS: readonly KnownModel[] = [
  {
    name: 'all-MiniLM-L6-v2',
    aliases: ['minilm', 'sentence-transformers/all-MiniLM-L6-v2'],
    repo: 'sentence-transformers/all-MiniLM-L6-v2',
    dimensions: 384,
    pooling: 'mean',
    queryPrefix: '',
    maxLength: 256,
    files: SENTENCE_TRANSFORMERS_FILES,
  },
  {
    name: 'bge-small-en-v1.5',
    aliases: ['bge-small', 'BAAI/bge-small-en-v1.5'],
    repo: 'BAAI/bge-small-en-v1.5',
    dimensions: 384,
    pooling: 'cls',
    queryPrefix: 'Represent this sentence for searching relevant passages: ',
    maxLength: 512,
    files: SENTENCE_TRANSFORMERS_FILES,
  },
];

export const DEFAULT_MODEL = 'all-MiniLM-L6-v2';
export const HUGGING_FACE_URL = 'https://huggingface.co';

/** The registry entry for a name or alias (case-insensitive), or undefined for other models. */
export function knownModel(name: string): KnownModel | undefined {
  const wanted = name.trim().toLowerCase();
  return KNOWN_MODELS.find(
    (m) => m.name.toLowerCase() === wanted || m.aliases.some((a) => a.toLowerCase() === wanted),
  );
}

/** The canonical folder name: the registry name for known models, the name itself otherwise. */
export function canonicalModelName(name: string): string {
  const known = knownModel(name);
  if (known) return known.name;
  const trimmed = name.trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(trimmed)) {
    throw invalid(
      'model',
      `model name "${name}" must be letters, digits, '.', '_' or '-' (it names a folder under models/)`,
    );
  }
  return trimmed;
}

export function modelsDir(home: string): string {
  return join(home, 'models');
}

export function modelDir(home: string, name: string): string {
  return join(modelsDir(home), canonicalModelName(name));
}

/** The onnx EmbedderSpec for a model under <home>/models/. */
export function onnxSpecFor(
  home: string,
  name: string,
  device: string,
): Extract<EmbedderSpec, { provider: 'onnx' }> {
  return { provider: 'onnx', model: canonicalModelName(name), modelDir: modelDir(home, name), device };
}

export function fileUrl(repo: string, path: string, baseUrl = HUGGING_FACE_URL): string {
  return `${baseUrl.replace(/\/+$/, '')}/${repo}/resolve/main/${path}`;
}

export interface ModelStatus {
  name: string;
  dir: string;
  known: KnownModel | undefined;
  /** Every required file is present and non-empty. */
  ready: boolean;
  /** Relative paths present and non-empty. */
  present: string[];
  /** Required files missing (the ONNX file is reported as onnx/model.onnx; model.onnx also counts). */
  missing: string[];
  /** Optional files missing (pooling and length then come from the registry or defaults). */
  missingOptional: string[];
  /** Relative path of the ONNX file found, if any. */
  onnxFile: string | undefined;
}

/** A regular file with at least one byte. */
export function nonEmptyFile(path: string): boolean {
  try {
    const st = statSync(path);
    return st.isFile() && st.size > 0;
  } catch {
    return false;
  }
}

/** Which files of a model folder are present; `name` picks the registry's file list when known. */
export function folderStatus(dir: string, name: string): ModelStatus {
  const known = knownModel(name);
  const files = known?.files ?? SENTENCE_TRANSFORMERS_FILES;
  const onnxFile = ONNX_PATHS.find((p) => nonEmptyFile(join(dir, p)));
  const present: string[] = [];
  const missing: string[] = [];
  const missingOptional: string[] = [];
  for (const file of files) {
    const isOnnx = (ONNX_PATHS as readonly string[]).includes(file.path);
    const here = isOnnx ? onnxFile !== undefined : nonEmptyFile(join(dir, file.path));
    if (here) present.push(isOnnx && onnxFile ? onnxFile : file.path);
    else if (file.required) missing.push(file.path);
    else missingOptional.push(file.path);
  }
  return {
    name: known?.name ?? name,
    dir,
    known,
    ready: missing.length === 0,
    present,
    missing,
    missingOptional,
    onnxFile,
  };
}

/** Which files of <home>/models/<name>/ are present and which are missing. */
export function modelStatus(home: string, name: string): ModelStatus {
  return folderStatus(modelDir(home, name), name);
}

/** One line per file to place: where it goes and, for known models, where to get it. */
function placementLines(status: ModelStatus, baseUrl: string): string[] {
  const lines: string[] = [];
  for (const [files, optional] of [
    [status.missing, false],
    [status.missingOptional, true],
  ] as const) {
    for (const file of files) {
      const where = join(status.dir, file);
      const from = status.known ? `  <-  ${fileUrl(status.known.repo, file, baseUrl)}` : '';
      const note = file === 'onnx/model.onnx' ? ' (or model.onnx)' : '';
      lines.push(`  ${optional ? '(optional) ' : ''}${where}${note}${from}`);
    }
  }
  return lines;
}

/** The error for a model whose files are missing: names each file, where it goes and where it comes from. */
export function missingModelError(
  status: ModelStatus,
  reason?: string,
  options: { baseUrl?: string; cause?: unknown } = {},
): HubError {
  const baseUrl = options.baseUrl ?? HUGGING_FACE_URL;
  const head =
    reason ??
    `embedding model "${status.name}" is not installed: ${status.missing.join(', ')} missing in ${status.dir}`;
  const body = status.known
    ? [
        `Place these files there (same relative paths as in the Hugging Face repository ${status.known.repo}):`,
        ...placementLines(status, baseUrl),
      ]
    : [
        'Place a sentence-transformers ONNX export there:',
        ...placementLines(status, baseUrl),
        '  (1_Pooling/config.json selects mean or CLS pooling; mean is the default)',
      ];
  const tail = status.known
    ? `Where the internet is reachable, \`palace set-embedder --model ${status.name}\` downloads and verifies them.`
    : `Known models that palace can download: ${KNOWN_MODELS.map((m) => m.name).join(', ')}.`;
  const missing = [...status.missing, ...status.missingOptional].map((file) => ({
    file,
    path: join(status.dir, file),
    required: status.missing.includes(file),
    ...(status.known ? { url: fileUrl(status.known.repo, file, baseUrl) } : {}),
  }));
  return new HubError('memory.embedder_missing', [head + '.', ...body, tail].join('\n'), {
    data: { model: status.name, dir: status.dir, missing },
    ...(options.cause === undefined ? {} : { cause: options.cause }),
  });
}

/** Reads a JSON object from a model folder; undefined when absent, a clear error when malformed. */
export function readModelJson(dir: string, file: string): Record<string, unknown> | undefined {
  const path = join(dir, file);
  if (!existsSync(path)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new HubError(
      'memory.embedder_missing',
      `${path} is not valid JSON (${(err as Error).message}); replace it`,
      { cause: err },
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new HubError('memory.embedder_missing', `${path} must hold a JSON object; replace it`);
  }
  return parsed as Record<string, unknown>;
}
