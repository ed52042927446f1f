// The tray app's preload bridge, when the dashboard runs inside it; undefined in a plain browser.

import { BRIDGE_KEY, type PalaceBridge } from '../../../main/ipc-contract.js';

export function getBridge(): PalaceBridge | undefined {
  return (window as unknown as Record<string, PalaceBridge | undefined>)[BRIDGE_KEY];
}
