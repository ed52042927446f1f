// A calm placeholder for "nothing here (yet)", with what to do about it.

import type { ReactElement, ReactNode } from 'react';

export function EmptyState({
  icon,
  title,
  children,
  testId,
}: {
  icon?: ReactNode;
  title: string;
  children?: ReactNode;
  testId?: string;
}): ReactElement {
  return (
    <div className="empty" data-testid={testId}>
      {icon ? <div className="empty-icon">{icon}</div> : null}
      <div className="empty-title">{title}</div>
      {children ? <div className="empty-body">{children}</div> : null}
    </div>
  );
}
