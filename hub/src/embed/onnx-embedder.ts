// The onnx provider: a sentence-transformers ONNX export run by onnxruntime-node. Tokenises with
// @huggingface/tokenizers, feeds only the inputs the graph declares, pools (mean/CLS/...) and L2-normalises.

import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';

import { HubError } from '../errors.js';
import type { Logger } from '../log.js';
import { makeLogger } from '../log.js';
import type { EmbedKind, Embedder, EmbedderInfo } from './embedder.js';
import { normalize } from './embedder.js';
import type { OnnxModelFolder } from './onnx-model-folder.js';
import { readOnnxModelFolder } from './onnx-model-folder.js';
import { createDeviceSession } from './onnx-session.js';
import { poolTokens } from './pooling.js';
import type { EmbedderSpec } from './spec.js';

export interface OnnxEmbedderOptions {
  /** Defaults to the palace:embed logger on stderr. */
  logger?: Logger;
  /** Texts per session.run (default 32). */
  batchSize?: number;
  /** Platform used to pick GPU providers under `auto` (default process.platform). */
  platform?: NodeJS.Platform;
}

const FEEDABLE = ['input_ids', 'attention_mask', 'token_type_ids', 'position_ids'] as const;
type Feedable = (typeof FEEDABLE)[number];
type IntType = 'int64' | 'int32';

interface Encoded {
  ids: number[];
  types: number[];
}

interface SessionPlan {
  inputs: { name: Feedable; type: IntType }[];
  output: string;
  /** The output is already one vector per text (sentence_embedding), not per token. */
  pooled: boolean;
}

/** Which inputs to feed and which output to read, from the graph's own declarations. */
function planSession(session: ort.InferenceSession, onnxPath: string): SessionPlan {
  const inputs: SessionPlan['inputs'] = [];
  for (const meta of session.inputMetadata) {
    const name = FEEDABLE.find((f) => f === meta.name);
    const type = meta.isTensor && (meta.type === 'int64' || meta.type === 'int32') ? meta.type : undefined;
    if (!name || !type) {
      throw new HubError(
        'memory.embedder_missing',
        `${onnxPath} declares input "${meta.name}"${meta.isTensor ? ` (${meta.type})` : ''}, which palace cannot feed; ` +
          `it feeds int64/int32 ${FEEDABLE.join(', ')}`,
      );
    }
    inputs.push({ name, type });
  }
  if (!inputs.some((i) => i.name === 'input_ids')) {
    throw new HubError(
      'memory.embedder_missing',
      `${onnxPath} has no input_ids input; it is not a text encoder export`,
    );
  }
  const names = session.outputNames;
  if (names.includes('sentence_embedding')) return { inputs, output: 'sentence_embedding', pooled: true };
  const output = ['last_hidden_state', 'token_embeddings'].find((n) => names.includes(n)) ?? names[0];
  if (output === undefined) throw new HubError('memory.embedder_missing', `${onnxPath} has no outputs`);
  return { inputs, output, pooled: false };
}

function padIdOf(tokenizer: Tokenizer, folder: OnnxModelFolder): number {
  const padding = folder.tokenizerJson.padding as { pad_id?: unknown } | null | undefined;
  if (typeof padding?.pad_id === 'number') return padding.pad_id;
  const configured =
    typeof folder.tokenizerConfig.pad_token === 'string' ? folder.tokenizerConfig.pad_token : undefined;
  for (const token of [configured, '[PAD]', '<pad>']) {
    const id = token === undefined ? undefined : tokenizer.token_to_id(token);
    if (id !== undefined) return id;
  }
  return 0;
}

function intTensor(type: IntType, values: ArrayLike<number>, dims: number[]): ort.Tensor {
  if (type === 'int32') return new ort.Tensor('int32', Int32Array.from(values), dims);
  const data = new BigInt64Array(values.length);
  for (let i = 0; i < values.length; i++) data[i] = BigInt(values[i] ?? 0);
  return new ort.Tensor('int64', data, dims);
}

/** Builds the onnx Embedder; fails with memory.embedder_missing naming the files when the folder is incomplete. */
export async function createOnnxEmbedder(
  spec: Extract<EmbedderSpec, { provider: 'onnx' }>,
  options: OnnxEmbedderOptions = {},
): Promise<Embedder> {
  const logger = options.logger ?? makeLogger('palace:embed');
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? 32));
  const folder = readOnnxModelFolder(spec.model, spec.modelDir);
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(folder.tokenizerJson, folder.tokenizerConfig);
  } catch (err) {
    throw new HubError(
      'memory.embedder_missing',
      `tokenizer.json in ${spec.modelDir} cannot be used: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  const padId = padIdOf(tokenizer, folder);
  const { maxLength } = folder;
  // A token covers at least one character, so characters far past maxLength can never survive truncation.
  const maxChars = maxLength * 64;
  const { session, device } = await createDeviceSession(
    folder.onnxPath,
    spec.device,
    logger,
    options.platform,
    spec.intraOpThreads,
  );

  const encode = (text: string): Encoded => {
    const capped = text.length > maxChars ? text.slice(0, maxChars) : text;
    const full = tokenizer.encode(capped, { return_token_type_ids: true });
    const types = full.token_type_ids ?? new Array<number>(full.ids.length).fill(0);
    if (full.ids.length <= maxLength) return { ids: full.ids, types };
    // Truncate the text's own tokens and keep the template's special tokens ([CLS] ... [SEP]).
    const bare: number[] = tokenizer.encode(capped, { add_special_tokens: false }).ids;
    const extra = full.ids.length - bare.length;
    let start = 0;
    for (let p = 0; p <= extra; p++) {
      if (bare.every((id, i) => full.ids[p + i] === id)) {
        start = p;
        break;
      }
    }
    const keep = Math.max(0, maxLength - extra);
    const pick = (xs: number[]) =>
      [...xs.slice(0, start + keep), ...xs.slice(start + bare.length)].slice(0, maxLength);
    return { ids: pick(full.ids), types: pick(types) };
  };

  const runBatch = async (batch: Encoded[], plan: SessionPlan): Promise<Float32Array[]> => {
    const seq = Math.max(1, ...batch.map((e) => e.ids.length));
    const size = batch.length * seq;
    const columns: Record<Feedable, number[]> = {
      input_ids: new Array<number>(size).fill(padId),
      attention_mask: new Array<number>(size).fill(0),
      token_type_ids: new Array<number>(size).fill(0),
      position_ids: new Array<number>(size).fill(0),
    };
    batch.forEach((e, b) => {
      for (let t = 0; t < e.ids.length; t++) {
        columns.input_ids[b * seq + t] = e.ids[t] ?? padId;
        columns.attention_mask[b * seq + t] = 1;
        columns.token_type_ids[b * seq + t] = e.types[t] ?? 0;
      }
      for (let t = 0; t < seq; t++) columns.position_ids[b * seq + t] = t;
    });
    const feeds: Record<string, ort.Tensor> = {};
    for (const input of plan.inputs)
      feeds[input.name] = intTensor(input.type, columns[input.name], [batch.length, seq]);
    let output: ort.Tensor | undefined;
    try {
      output = (await session.run(feeds, [plan.output]))[plan.output];
    } catch (err) {
      throw new HubError(
        'memory.embed_failed',
        `onnxruntime failed embedding with ${spec.model}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    if (!output || output.type !== 'float32') {
      throw new HubError(
        'memory.embed_failed',
        `${spec.model} output ${plan.output} is ${output?.type ?? 'missing'}, not float32`,
      );
    }
    const data = output.data as Float32Array;
    const dims = output.dims;
    if (plan.pooled) {
      const dim = dims[1] ?? 0;
      return batch.map((_, b) => normalize(data.slice(b * dim, (b + 1) * dim)));
    }
    if (dims.length !== 3) {
      throw new HubError(
        'memory.embed_failed',
        `${spec.model} output ${plan.output} has shape [${dims.join(', ')}], expected [batch, seq, hidden]`,
      );
    }
    const shape = { batch: batch.length, seq: dims[1] ?? seq, dim: dims[2] ?? 0 };
    return poolTokens(data, columns.attention_mask, shape, folder.pooling).map(normalize);
  };

  let plan: SessionPlan;
  let dimensions: number;
  try {
    plan = planSession(session, folder.onnxPath);
    const [probe] = await runBatch([encode('palace')], plan);
    dimensions = probe?.length ?? 0;
    if (dimensions === 0)
      throw new HubError('memory.embedder_missing', `${folder.onnxPath} produced empty vectors`);
  } catch (err) {
    await session.release();
    throw err;
  }
  const info: EmbedderInfo = { provider: 'onnx', model: spec.model, dimensions, device };
  let closed = false;

  return {
    info: () => ({ ...info }),
    async embed(texts: readonly string[], kind: EmbedKind): Promise<Float32Array[]> {
      if (closed) throw new HubError('memory.embed_failed', `the ${spec.model} embedder is closed`);
      if (texts.length === 0) return [];
      const prefix = kind === 'query' ? folder.queryPrefix : folder.documentPrefix;
      const encoded = texts.map((text) => encode(prefix + text));
      // Longest first, so each batch pads to similar lengths; results go back to input order.
      const order = encoded
        .map((_, i) => i)
        .sort((a, b) => (encoded[b]?.ids.length ?? 0) - (encoded[a]?.ids.length ?? 0));
      const out = new Array<Float32Array>(texts.length);
      for (let start = 0; start < order.length; start += batchSize) {
        const indices = order.slice(start, start + batchSize);
        const vectors = await runBatch(
          indices.map((i) => encoded[i] as Encoded),
          plan,
        );
        indices.forEach((i, k) => {
          const v = vectors[k];
          if (v === undefined || v.length !== dimensions) {
            throw new HubError(
              'memory.embed_failed',
              `${spec.model} returned a ${v?.length ?? 0}-d vector, expected ${dimensions}`,
            );
          }
          out[i] = v;
        });
      }
      return out;
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await session.release();
    },
  };
}
