// React access to the dashboard store: the store itself and its current snapshot.

import { createContext, useContext, useSyncExternalStore } from 'react';

import type { DashboardSnapshot, DashboardStore } from '../state/dashboard-store.js';

export const StoreContext = createContext<DashboardStore | null>(null);

export function useStore(): DashboardStore {
  const store = useContext(StoreContext);
  if (!store) throw new Error('useStore outside <StoreContext.Provider>');
  return store;
}

export function useDashboard(): DashboardSnapshot {
  const store = useStore();
  return useSyncExternalStore(store.subscribe, store.getSnapshot);
}
