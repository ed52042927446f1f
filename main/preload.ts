// The preload bridge: exposes exactly the channels of the IPC contract on window.palace, in an
// isolated, sandboxed renderer. Bundled to dist/main/preload.cjs (sandboxed preloads are CommonJS).

import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';

import {
  BRIDGE_KEY,
  isEventChannel,
  isInvokeChannel,
  type EventChannel,
  type InvokeChannel,
  type PalaceBridge,
  type PalaceEvents,
  type PalaceIpc,
} from './ipc-contract.js';

const bridge = {
  invoke<K extends InvokeChannel>(
    channel: K,
    ...args: Parameters<PalaceIpc[K]>
  ): Promise<Awaited<ReturnType<PalaceIpc[K]>>> {
    if (!isInvokeChannel(channel)) return Promise.reject(new Error(`unknown channel ${String(channel)}`));
    return ipcRenderer.invoke(channel, ...args) as Promise<Awaited<ReturnType<PalaceIpc[K]>>>;
  },
  on<K extends EventChannel>(channel: K, listener: (payload: PalaceEvents[K]) => void): () => void {
    if (!isEventChannel(channel)) throw new Error(`unknown channel ${String(channel)}`);
    const handler = (_event: IpcRendererEvent, payload: PalaceEvents[K]): void => listener(payload);
    ipcRenderer.on(channel, handler);
    return () => void ipcRenderer.removeListener(channel, handler);
  },
} satisfies PalaceBridge;

contextBridge.exposeInMainWorld(BRIDGE_KEY, bridge);
