// Short confirmations ("Copied token") at the bottom of the window, announced to screen readers.

import {
  createContext,
  useCallback,
  useContext,
  useMemo,
  useRef,
  useState,
  type ReactElement,
  type ReactNode,
} from 'react';

import { copyText } from '../lib/clipboard.js';
import { IconAlert, IconCheck } from './icons.js';

interface Toast {
  id: number;
  text: string;
  tone: 'ok' | 'error';
}

interface ToastApi {
  show(text: string, tone?: Toast['tone']): void;
  /** Copies text and confirms with `label` ("Copied <label>"). */
  copy(text: string, label: string): Promise<boolean>;
}

const ToastContext = createContext<ToastApi | null>(null);

export function useToast(): ToastApi {
  const api = useContext(ToastContext);
  if (!api) throw new Error('useToast outside <ToastProvider>');
  return api;
}

export function ToastProvider({ children }: { children: ReactNode }): ReactElement {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const next = useRef(1);
  const show = useCallback((text: string, tone: Toast['tone'] = 'ok') => {
    const id = next.current++;
    setToasts((list) => [...list.slice(-2), { id, text, tone }]);
    setTimeout(() => setToasts((list) => list.filter((t) => t.id !== id)), 2_400);
  }, []);
  const copy = useCallback(
    async (text: string, label: string) => {
      const ok = await copyText(text);
      show(
        ok ? `Copied ${label}` : `Could not copy ${label}; select it and copy by hand`,
        ok ? 'ok' : 'error',
      );
      return ok;
    },
    [show],
  );
  const api = useMemo(() => ({ show, copy }), [show, copy]);
  return (
    <ToastContext.Provider value={api}>
      {children}
      <div className="toasts" role="status" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} className={`toast toast-${t.tone}`}>
            {t.tone === 'ok' ? <IconCheck size={14} /> : <IconAlert size={14} />}
            {t.text}
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}
