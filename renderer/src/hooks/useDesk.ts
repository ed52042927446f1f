// React access to the desk settings (the agent name the human writes under, the notification
// opt-in), shared by every component and kept in localStorage (renderer/src/lib/desk.ts).

import { useSyncExternalStore } from 'react';

import { readDeskAgent, readNotifyOptIn, writeDeskAgent, writeNotifyOptIn } from '../lib/desk.js';

interface DeskSettings {
  agent: string;
  notify: boolean;
}

let settings: DeskSettings = { agent: readDeskAgent(), notify: readNotifyOptIn() };
const listeners = new Set<() => void>();

function set(patch: Partial<DeskSettings>): void {
  settings = { ...settings, ...patch };
  for (const l of listeners) l();
}

export const desk = {
  setAgent(name: string): void {
    set({ agent: writeDeskAgent(name) });
  },
  setNotify(on: boolean): void {
    writeNotifyOptIn(on);
    set({ notify: on });
  },
};

export function useDesk(): DeskSettings {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => settings,
  );
}
