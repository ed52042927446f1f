// Registers main's IPC handlers from the one channel map, refusing callers that are not the
// dashboard, and sends typed events to the renderer.

import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';

import {
  INVOKE_CHANNELS,
  type EventChannel,
  type InvokeChannel,
  type PalaceEvents,
  type PalaceIpc,
} from './ipc-contract.js';

export type IpcHandlers = {
  [K in InvokeChannel]: (
    ...args: Parameters<PalaceIpc[K]>
  ) => ReturnType<PalaceIpc[K]> | Promise<ReturnType<PalaceIpc[K]>>;
};

/** Registers one handler per request channel; returns a function that removes them all. */
export function registerIpc(
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>,
  handlers: IpcHandlers,
  isTrustedSender: (url: string) => boolean,
): () => void {
  const channels = Object.keys(INVOKE_CHANNELS) as InvokeChannel[];
  for (const channel of channels) {
    const handler = handlers[channel] as (...args: unknown[]) => unknown;
    ipcMain.handle(channel, (event: IpcMainInvokeEvent, ...args: unknown[]) => {
      const url = event.senderFrame?.url ?? '';
      if (!isTrustedSender(url))
        throw new Error(`IPC ${channel} refused: ${url || 'unknown sender'} is not the dashboard`);
      return handler(...args);
    });
  }
  return () => {
    for (const channel of channels) ipcMain.removeHandler(channel);
  };
}

export function sendToRenderer<K extends EventChannel>(
  contents: Pick<WebContents, 'send' | 'isDestroyed'> | undefined,
  channel: K,
  payload: PalaceEvents[K],
): void {
  if (contents && !contents.isDestroyed()) contents.send(channel, payload);
}
