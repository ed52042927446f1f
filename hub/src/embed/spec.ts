// What embedder to build, as plain data (it crosses into the embedding worker thread).

export type EmbedderSpec =
  | { provider: 'bundled' }
  | {
      provider: 'onnx';
      /** Model name, e.g. all-MiniLM-L6-v2 (the folder name under ~/.palace/models/). */
      model: string;
      /** Folder holding model.onnx (or onnx/model.onnx), tokenizer.json and config.json. */
      modelDir: string;
      /** cpu | cuda | dml | coreml | auto; falls back to CPU (logged once) when unavailable. */
      device: string;
      /**
       * onnxruntime intra-op threads per session; the pool sets cores / workers so its sessions and
       * their threads never oversubscribe the machine (undefined = onnxruntime's default, all cores).
       */
      intraOpThreads?: number | undefined;
    }
  | {
      provider: 'openai-compat';
      /** Base URL of an OpenAI-compatible API, e.g. http://gpu-box:8000/v1 */
      url: string;
      model: string;
      /** Sent as a bearer token; never logged. */
      apiKey?: string | undefined;
      timeoutMs?: number | undefined;
    };
