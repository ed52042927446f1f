// A text input with a search icon, for the query boxes of the Memory view.

import type { ReactElement } from 'react';

import { IconSearch } from './icons.js';

interface Props {
  value: string;
  placeholder: string;
  testId: string;
  onChange(value: string): void;
}

export function SearchField({ value, placeholder, testId, onChange }: Props): ReactElement {
  return (
    <div className="input-icon">
      <IconSearch size={15} />
      <input
        className="input"
        placeholder={placeholder}
        aria-label={placeholder}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        data-testid={testId}
      />
    </div>
  );
}
