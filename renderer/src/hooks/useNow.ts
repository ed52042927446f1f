// The current time, re-read every `everyMs`, so ages and "time since" labels stay true.

import { useEffect, useState } from 'react';

export function useNow(everyMs = 1_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}
