// Keeps one view's failure (an unexpected payload from a newer or older hub) inside that view: the
// rest of the dashboard, and its data, stay usable.

import { Component, type ErrorInfo, type ReactNode } from 'react';

import { EmptyState } from './empty-state.js';
import { IconAlert } from './icons.js';

interface Props {
  name: string;
  children: ReactNode;
}

export class ViewBoundary extends Component<Props, { error: Error | null }> {
  override state: { error: Error | null } = { error: null };

  static getDerivedStateFromError(error: Error): { error: Error } {
    return { error };
  }

  override componentDidCatch(_error: Error, _info: ErrorInfo): void {
    // Shown in the view itself; nothing to report elsewhere.
  }

  override render(): ReactNode {
    if (!this.state.error) return this.props.children;
    return (
      <div className="view view-pad">
        <EmptyState
          icon={<IconAlert size={28} />}
          title={`The ${this.props.name} view could not show this hub's data`}
          testId="view-error"
        >
          <p className="mono small">{this.state.error.message}</p>
          <button
            type="button"
            className="btn btn-secondary btn-sm"
            onClick={() => this.setState({ error: null })}
          >
            Try again
          </button>
        </EmptyState>
      </div>
    );
  }
}
