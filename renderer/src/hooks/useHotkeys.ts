// Global keyboard shortcuts: single keys and two-key sequences ("g e"), ignored while typing in a
// field (except the ones marked `global`, like Ctrl/Cmd+K).

import { useEffect, useRef } from 'react';

export interface Hotkey {
  /** "mod+k", "?", "/", "j", or a sequence "g e". */
  keys: string;
  run: (event: KeyboardEvent) => void;
  /** Also fires while focus is in an input. */
  global?: boolean;
}

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el) return false;
  return el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName);
}

function keyName(event: KeyboardEvent): string {
  const mod = event.ctrlKey || event.metaKey ? 'mod+' : '';
  const alt = event.altKey ? 'alt+' : '';
  return `${mod}${alt}${event.key.length === 1 ? event.key.toLowerCase() : event.key}`;
}

export function useHotkeys(hotkeys: readonly Hotkey[], enabled = true): void {
  const latest = useRef(hotkeys);
  useEffect(() => {
    latest.current = hotkeys;
  });
  useEffect(() => {
    if (!enabled) return undefined;
    let prefix: string | null = null;
    let prefixTimer: ReturnType<typeof setTimeout> | undefined;
    const onKey = (event: KeyboardEvent): void => {
      if (event.defaultPrevented) return;
      const name = event.key === '?' ? '?' : keyName(event);
      const typing = isTyping(event.target);
      const sequence = prefix ? `${prefix} ${name}` : null;
      for (const hk of latest.current) {
        if (typing && !hk.global) continue;
        if (hk.keys === sequence || (hk.keys === name && !prefix)) {
          event.preventDefault();
          prefix = null;
          hk.run(event);
          return;
        }
      }
      if (!typing && latest.current.some((hk) => hk.keys.startsWith(`${name} `))) {
        prefix = name;
        clearTimeout(prefixTimer);
        prefixTimer = setTimeout(() => (prefix = null), 1_200);
        return;
      }
      prefix = null;
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
      clearTimeout(prefixTimer);
    };
  }, [enabled]);
}
