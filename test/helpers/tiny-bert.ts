// Generates, at test time, a small BERT-shaped sentence-transformers export (ONNX via onnx-proto, a
// WordPiece tokenizer.json, config.json) so the ONNX embedder is tested against a real onnxruntime session.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

/** Real words (each one vocab token), so tests can write readable sentences. */
const WORDS = `the a an and or of to in on at for with from by is are was be it this that these those
memory palace drawer room wing search vector model token agent hub log event task note idea plan code test
quick brown fox jumps over lazy dog cat bird fish tree river mountain city road house garden window door
red green blue yellow black white small large long short fast slow old new good bad happy sad
one two three four five six seven eight nine ten first last next other same different
run walk read write open close find keep make take give send build check store load
water fire earth air light dark night day morning evening summer winter spring autumn
apple bread cheese coffee tea milk sugar salt pepper rice soup`
  .split(/\s+/)
  .filter((w) => w.length > 0);

/** Special tokens first (ids 0-3), then the words, then pseudo-words and a few continuation pieces. */
export const TINY_VOCAB: readonly string[] = [
  '[PAD]',
  '[UNK]',
  '[CLS]',
  '[SEP]',
  ...WORDS,
  ...Array.from({ length: 60 }, (_, i) => `w${i}`),
  '##s',
  '##ing',
  '##ed',
];

export interface TinyBertOptions {
  /** Folder to write the export into. */
  dir: string;
  /** Pooling recorded in 1_Pooling/config.json; omitted when undefined (the loader then defaults). */
  pooling?: 'mean' | 'cls' | undefined;
  /** Whether the graph declares a token_type_ids input (default true). */
  tokenTypeIds?: boolean;
  /** Hidden size (default 32). */
  hidden?: number;
  /** Position-embedding rows, i.e. the model's max length (default 64). */
  maxPositions?: number;
  /** Where the ONNX file goes (default onnx/model.onnx). */
  modelPath?: 'onnx/model.onnx' | 'model.onnx';
  /** Seed for the random-but-reproducible weights (default 7). */
  seed?: number;
  /** Integer type of the graph inputs (default int64; some exports use int32). */
  inputType?: 'int64' | 'int32';
  /** An extra declared (unused) graph input, e.g. to test a model palace cannot feed. */
  extraInput?: string;
  /**
   * Residual feed-forward blocks (hidden -> 4*hidden -> hidden, Tanh) after the dense layer (default 0).
   * Six blocks at hidden 384 cost about what all-MiniLM-L6-v2's feed-forward layers do per token, which
   * the benchmark uses as a realistic session.run load without downloading a model.
   */
  feedForwardBlocks?: number;
}

export interface TinyBert {
  dir: string;
  hidden: number;
  maxPositions: number;
  vocab: readonly string[];
  /** Relative paths written, e.g. onnx/model.onnx, tokenizer.json. */
  files: string[];
}

/** mulberry32: a tiny seeded PRNG, uniform in [0, 1). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function floatTensor(name: string, dims: number[], values: Float32Array): onnxProto.onnx.ITensorProto {
  return {
    name,
    dims,
    dataType: onnx.TensorProto.DataType.FLOAT,
    rawData: new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
  };
}

function int64Tensor(name: string, dims: number[], values: number[]): onnxProto.onnx.ITensorProto {
  const data = BigInt64Array.from(values.map((v) => BigInt(v)));
  return { name, dims, dataType: onnx.TensorProto.DataType.INT64, rawData: new Uint8Array(data.buffer) };
}

function randomMatrix(rand: () => number, rows: number, cols: number, scale: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < out.length; i++) out[i] = (rand() * 2 - 1) * scale;
  return out;
}

function valueInfo(
  name: string,
  elemType: number,
  dims: (string | number)[],
): onnxProto.onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

function node(
  opType: string,
  input: string[],
  output: string[],
  attribute: onnxProto.onnx.IAttributeProto[] = [],
): onnxProto.onnx.INodeProto {
  return { opType, input, output, name: `${opType}_${output[0] ?? ''}`, attribute };
}

/**
 * The graph: word + position (+ token-type) embeddings, plus a masked mean "context" vector added to
 * every token (so real tokens depend on each other but never on padding, as with attention), then
 * Dense + Tanh → last_hidden_state [batch, seq, hidden].
 */
export function tinyBertModelBytes(options: Omit<TinyBertOptions, 'dir'> = {}): Uint8Array {
  const hidden = options.hidden ?? 32;
  const maxPositions = options.maxPositions ?? 64;
  const withTypes = options.tokenTypeIds ?? true;
  const rand = seeded(options.seed ?? 7);
  const FLOAT = onnx.TensorProto.DataType.FLOAT;
  const INT64 = onnx.TensorProto.DataType.INT64;
  const INPUT = options.inputType === 'int32' ? onnx.TensorProto.DataType.INT32 : INT64;

  const initializer = [
    floatTensor('word_emb', [TINY_VOCAB.length, hidden], randomMatrix(rand, TINY_VOCAB.length, hidden, 1)),
    floatTensor('pos_emb', [maxPositions, hidden], randomMatrix(rand, maxPositions, hidden, 0.3)),
    floatTensor('dense_w', [hidden, hidden], randomMatrix(rand, hidden, hidden, 0.5)),
    floatTensor('dense_b', [hidden], randomMatrix(rand, 1, hidden, 0.1)),
    floatTensor('eps', [], Float32Array.of(1e-9)),
    int64Tensor('zero', [], [0]),
    int64Tensor('one', [], [1]),
    int64Tensor('axes_last', [1], [-1]),
    int64Tensor('axes_seq', [1], [1]),
  ];
  const nodes = [
    node('Gather', ['word_emb', 'input_ids'], ['we']),
    node('Shape', ['input_ids'], ['shape']),
    node('Gather', ['shape', 'one'], ['seq_len'], [{ name: 'axis', type: 2, i: 0 }]),
    node('Range', ['zero', 'seq_len', 'one'], ['positions']),
    node('Gather', ['pos_emb', 'positions'], ['pe']),
    node('Add', ['we', 'pe'], [withTypes ? 'e0' : 'e']),
  ];
  if (withTypes) {
    initializer.push(floatTensor('type_emb', [2, hidden], randomMatrix(rand, 2, hidden, 0.5)));
    nodes.push(node('Gather', ['type_emb', 'token_type_ids'], ['te']), node('Add', ['e0', 'te'], ['e']));
  }
  nodes.push(
    node('Cast', ['attention_mask'], ['mask_f'], [{ name: 'to', type: 2, i: FLOAT }]),
    node('Unsqueeze', ['mask_f', 'axes_last'], ['mask3']),
    node('Mul', ['e', 'mask3'], ['e_masked']),
    node('ReduceSum', ['e_masked', 'axes_seq'], ['sum'], [{ name: 'keepdims', type: 2, i: 1 }]),
    node('ReduceSum', ['mask3', 'axes_seq'], ['count'], [{ name: 'keepdims', type: 2, i: 1 }]),
    node('Add', ['count', 'eps'], ['count_eps']),
    node('Div', ['sum', 'count_eps'], ['context']),
    node('Add', ['e', 'context'], ['h0']),
    node('MatMul', ['h0', 'dense_w'], ['h1']),
    node('Add', ['h1', 'dense_b'], ['h2']),
  );
  const blocks = options.feedForwardBlocks ?? 0;
  let current = 'h2';
  for (let b = 0; b < blocks; b++) {
    const wide = hidden * 4;
    initializer.push(
      floatTensor(`ff${b}_w1`, [hidden, wide], randomMatrix(rand, hidden, wide, 1 / Math.sqrt(hidden))),
      floatTensor(`ff${b}_w2`, [wide, hidden], randomMatrix(rand, wide, hidden, 1 / Math.sqrt(wide))),
    );
    nodes.push(
      node('Tanh', [current], [`ff${b}_in`]),
      node('MatMul', [`ff${b}_in`, `ff${b}_w1`], [`ff${b}_up`]),
      node('Tanh', [`ff${b}_up`], [`ff${b}_act`]),
      node('MatMul', [`ff${b}_act`, `ff${b}_w2`], [`ff${b}_down`]),
      node('Add', [current, `ff${b}_down`], [`ff${b}_out`]),
    );
    current = `ff${b}_out`;
  }
  nodes.push(node('Tanh', [current], ['last_hidden_state']));
  const inputs = [
    valueInfo('input_ids', INPUT, ['batch', 'sequence']),
    valueInfo('attention_mask', INPUT, ['batch', 'sequence']),
  ];
  if (withTypes) inputs.push(valueInfo('token_type_ids', INPUT, ['batch', 'sequence']));
  if (options.extraInput) inputs.push(valueInfo(options.extraInput, FLOAT, ['batch', 'sequence']));

  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'palace-tests',
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'tiny_bert',
      node: nodes,
      initializer,
      input: inputs,
      output: [valueInfo('last_hidden_state', FLOAT, ['batch', 'sequence', hidden])],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

/** A WordPiece tokenizer.json in the shape Hugging Face exports for BERT models. */
export function tinyTokenizerJson(): Record<string, unknown> {
  const special = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  const specialRef = (token: string, typeId = 0) => ({ SpecialToken: { id: token, type_id: typeId } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]'].map((t, i) => special(i, t)),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [specialRef('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, specialRef('[SEP]')],
      pair: [
        specialRef('[CLS]'),
        { Sequence: { id: 'A', type_id: 0 } },
        specialRef('[SEP]'),
        { Sequence: { id: 'B', type_id: 1 } },
        specialRef('[SEP]', 1),
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(TINY_VOCAB.map((t, i) => [t, i])),
    },
  };
}

function writeFile(dir: string, relative: string, content: string | Uint8Array): void {
  const path = join(dir, relative);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** Writes a complete tiny export into `options.dir` and describes it. */
export function writeTinyBert(options: TinyBertOptions): TinyBert {
  const hidden = options.hidden ?? 32;
  const maxPositions = options.maxPositions ?? 64;
  const modelPath = options.modelPath ?? 'onnx/model.onnx';
  const files: string[] = [];
  const put = (relative: string, content: string | Uint8Array) => {
    writeFile(options.dir, relative, content);
    files.push(relative);
  };
  put(modelPath, tinyBertModelBytes(options));
  put('tokenizer.json', JSON.stringify(tinyTokenizerJson()));
  put(
    'config.json',
    JSON.stringify({
      architectures: ['BertModel'],
      model_type: 'bert',
      hidden_size: hidden,
      max_position_embeddings: maxPositions,
      vocab_size: TINY_VOCAB.length,
      type_vocab_size: options.tokenTypeIds === false ? 0 : 2,
    }),
  );
  put(
    'tokenizer_config.json',
    JSON.stringify({ do_lower_case: true, model_max_length: maxPositions, pad_token: '[PAD]' }),
  );
  put(
    'special_tokens_map.json',
    JSON.stringify({ cls_token: '[CLS]', sep_token: '[SEP]', pad_token: '[PAD]', unk_token: '[UNK]' }),
  );
  if (options.pooling !== undefined) {
    put(
      '1_Pooling/config.json',
      JSON.stringify({
        word_embedding_dimension: hidden,
        pooling_mode_cls_token: options.pooling === 'cls',
        pooling_mode_mean_tokens: options.pooling === 'mean',
        pooling_mode_max_tokens: false,
        pooling_mode_mean_sqrt_len_tokens: false,
      }),
    );
  }
  return { dir: options.dir, hidden, maxPositions, vocab: TINY_VOCAB, files };
}
