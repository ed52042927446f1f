// Reads a sentence-transformers ONNX export folder: where the ONNX file is, the tokenizer files, and the
// settings that shape embedding (pooling, max length, query prefix). No onnxruntime here.

import { join } from 'node:path';

import { HubError } from '../errors.js';
import { folderStatus, knownModel, missingModelError, readModelJson } from './model-files.js';
import type { Pooling } from './pooling.js';

export interface OnnxModelFolder {
  onnxPath: string;
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  pooling: Pooling;
  /** Tokens per text, special tokens included; longer texts are truncated. */
  maxLength: number;
  queryPrefix: string;
  documentPrefix: string;
}

const DEFAULT_MAX_LENGTH = 512;

function positiveInt(value: unknown, below = Number.MAX_SAFE_INTEGER): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value < below
    ? value
    : undefined;
}

/** sentence-transformers' 1_Pooling/config.json → our pooling; sqrt-length mean equals mean after L2. */
function poolingFromConfig(config: Record<string, unknown>, path: string): Pooling | undefined {
  const modes: Pooling[] = [];
  if (config.pooling_mode_cls_token === true) modes.push('cls');
  if (config.pooling_mode_mean_tokens === true || config.pooling_mode_mean_sqrt_len_tokens === true)
    modes.push('mean');
  if (config.pooling_mode_max_tokens === true) modes.push('max');
  if (config.pooling_mode_lasttoken === true) modes.push('lasttoken');
  if (modes.length > 1) {
    throw new HubError(
      'memory.embedder_missing',
      `${path} combines pooling modes (${modes.join(' + ')}); palace supports one`,
    );
  }
  return modes[0];
}

function stringRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/**
 * Loads and interprets `dir`. Missing required files fail with memory.embedder_missing naming each file
 * and where it goes. Pooling: 1_Pooling/config.json, else the registry, else mean. Max length:
 * sentence_bert_config.json, else the registry, else tokenizer/model config, capped by the position table.
 */
export function readOnnxModelFolder(model: string, dir: string): OnnxModelFolder {
  const status = folderStatus(dir, model);
  if (!status.ready || status.onnxFile === undefined) throw missingModelError(status);
  const known = knownModel(model);
  const tokenizerJson = readModelJson(dir, 'tokenizer.json') ?? {};
  const config = readModelJson(dir, 'config.json') ?? {};
  const tokenizerConfig = readModelJson(dir, 'tokenizer_config.json') ?? {};
  const poolingConfig = readModelJson(dir, '1_Pooling/config.json');
  const sentenceBert = readModelJson(dir, 'sentence_bert_config.json') ?? {};
  const stConfig = readModelJson(dir, 'config_sentence_transformers.json') ?? {};

  const pooling =
    (poolingConfig && poolingFromConfig(poolingConfig, join(dir, '1_Pooling/config.json'))) ??
    known?.pooling ??
    'mean';

  const positions = positiveInt(config.max_position_embeddings);
  const declared =
    positiveInt(sentenceBert.max_seq_length) ??
    known?.maxLength ??
    positiveInt(tokenizerConfig.model_max_length, 1_000_000) ??
    positions ??
    DEFAULT_MAX_LENGTH;
  const maxLength = positions === undefined ? declared : Math.min(declared, positions);

  const prompts = stringRecord(stConfig.prompts);
  const promptOf = (key: string) => (typeof prompts[key] === 'string' ? (prompts[key] as string) : undefined);
  return {
    onnxPath: join(dir, status.onnxFile),
    tokenizerJson,
    tokenizerConfig,
    pooling,
    maxLength,
    queryPrefix: known?.queryPrefix ?? promptOf('query') ?? '',
    documentPrefix: known ? '' : (promptOf('document') ?? promptOf('passage') ?? ''),
  };
}
