// The current view from the location hash (#/tasks); never anything secret in it.

import { useCallback, useEffect, useState } from 'react';

import { VIEW_IDS, type ViewId } from '../../../main/ipc-contract.js';

function viewFromHash(): ViewId {
  const name = window.location.hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  return (VIEW_IDS as readonly string[]).includes(name) ? (name as ViewId) : 'events';
}

export function useRoute(): [ViewId, (view: ViewId) => void] {
  const [view, setView] = useState<ViewId>(viewFromHash);
  useEffect(() => {
    const onHash = (): void => setView(viewFromHash());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  const go = useCallback((next: ViewId) => {
    if (viewFromHash() !== next) window.location.hash = `#/${next}`;
    setView(next);
  }, []);
  return [view, go];
}
