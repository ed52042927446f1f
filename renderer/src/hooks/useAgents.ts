// The palace's registered agents and identity mode (palace_agents), read once per page and again
// every 30 s; null until read (or on a hub without the tool).

import { useEffect, useState } from 'react';

import type { AgentsInfo } from '../lib/identity.js';
import { useDashboard, useStore } from './useDashboard.js';

export function useAgents(): AgentsInfo | null {
  const store = useStore();
  const { tools } = useDashboard();
  const [info, setInfo] = useState<AgentsInfo | null>(null);
  useEffect(() => {
    if (!tools?.includes('palace_agents')) return;
    let live = true;
    const read = (): void =>
      void store.client.call('palace_agents', {}).then(
        (r) => live && setInfo({ mode: r.mode, agents: r.agents }),
        () => undefined,
      );
    read();
    const timer = setInterval(read, 30_000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [store, tools]);
  return info;
}
