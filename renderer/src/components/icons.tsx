// Line icons (24px grid, 1.6 stroke), drawn inline so the bundle needs no icon font or requests.

import type { ReactElement, SVGProps } from 'react';

type IconProps = SVGProps<SVGSVGElement> & { size?: number };

function icon(paths: ReactElement): (props: IconProps) => ReactElement {
  return function Icon({ size = 16, ...rest }: IconProps): ReactElement {
    return (
      <svg
        width={size}
        height={size}
        viewBox="0 0 24 24"
        fill="none"
        stroke="currentColor"
        strokeWidth={1.6}
        strokeLinecap="round"
        strokeLinejoin="round"
        aria-hidden="true"
        {...rest}
      >
        {paths}
      </svg>
    );
  };
}

export const IconEvents = icon(<path d="M3 12h4l3 -8l4 16l3 -8h4" />);
export const IconTasks = icon(
  <>
    <path d="M9 6h11M9 12h11M9 18h11" />
    <path d="M4 6l1 1l2 -2M4 12l1 1l2 -2M4 18l1 1l2 -2" />
  </>,
);
export const IconPeers = icon(
  <>
    <circle cx="6" cy="6" r="2.5" />
    <circle cx="18" cy="6" r="2.5" />
    <circle cx="12" cy="18" r="2.5" />
    <path d="M8.5 6h7M7.3 8.2l3.5 7.6M16.7 8.2l-3.5 7.6" />
  </>,
);
export const IconMemory = icon(
  <>
    <path d="M4 5.5A1.5 1.5 0 0 1 5.5 4H11v16H5.5A1.5 1.5 0 0 1 4 18.5z" />
    <path d="M20 5.5A1.5 1.5 0 0 0 18.5 4H13v16h5.5a1.5 1.5 0 0 0 1.5 -1.5z" />
  </>,
);
export const IconKey = icon(
  <>
    <circle cx="8" cy="15" r="4" />
    <path d="M10.8 12.2L19 4M16 7l2.5 2.5M14 9l2 2" />
  </>,
);
export const IconGauge = icon(
  <>
    <path d="M4.5 17a9 9 0 1 1 15 0" />
    <path d="M12 13l4 -4" />
    <circle cx="12" cy="13" r="1.2" />
  </>,
);
export const IconSearch = icon(
  <>
    <circle cx="11" cy="11" r="6.5" />
    <path d="M20 20l-4.2 -4.2" />
  </>,
);
export const IconCopy = icon(
  <>
    <rect x="8.5" y="8.5" width="11" height="11" rx="2" />
    <path d="M15.5 8.5V6a1.5 1.5 0 0 0 -1.5 -1.5H6A1.5 1.5 0 0 0 4.5 6v8A1.5 1.5 0 0 0 6 15.5h2.5" />
  </>,
);
export const IconCheck = icon(<path d="M5 12.5l4.5 4.5L19 7.5" />);
export const IconEye = icon(
  <>
    <path d="M2.5 12s3.5 -6.5 9.5 -6.5S21.5 12 21.5 12s-3.5 6.5 -9.5 6.5S2.5 12 2.5 12z" />
    <circle cx="12" cy="12" r="2.8" />
  </>,
);
export const IconEyeOff = icon(
  <>
    <path d="M10.6 5.6A9.6 9.6 0 0 1 12 5.5c6 0 9.5 6.5 9.5 6.5a16 16 0 0 1 -2.4 3.2M6.3 6.9C3.9 8.6 2.5 12 2.5 12s3.5 6.5 9.5 6.5a9.4 9.4 0 0 0 4.4 -1.1" />
    <path d="M4 4l16 16M9.9 9.9a2.8 2.8 0 0 0 4.2 4.2" />
  </>,
);
export const IconFilter = icon(<path d="M4 5.5h16l-6.2 7.4v5.6l-3.6 1.5v-7.1z" />);
export const IconClose = icon(<path d="M6 6l12 12M18 6L6 18" />);
export const IconArrowRight = icon(<path d="M5 12h14M13 6l6 6l-6 6" />);
export const IconAlert = icon(
  <>
    <path d="M12 3.5l9.5 16.5H2.5z" />
    <path d="M12 10v4.5M12 17.3v.2" />
  </>,
);
export const IconRefresh = icon(
  <>
    <path d="M20 11a8 8 0 0 0 -14.5 -4.5L4 8" />
    <path d="M4 4v4h4M4 13a8 8 0 0 0 14.5 4.5L20 16" />
    <path d="M20 20v-4h-4" />
  </>,
);
export const IconCommand = icon(
  <path d="M9 6a3 3 0 1 0 -3 3h12a3 3 0 1 0 -3 -3v12a3 3 0 1 0 3 -3H6a3 3 0 1 0 3 3z" />,
);
export const IconFile = icon(
  <>
    <path d="M14 3.5H7A1.5 1.5 0 0 0 5.5 5v14A1.5 1.5 0 0 0 7 20.5h10a1.5 1.5 0 0 0 1.5 -1.5V8z" />
    <path d="M14 3.5V8h4.5" />
  </>,
);
export const IconClock = icon(
  <>
    <circle cx="12" cy="12" r="8.5" />
    <path d="M12 7.5V12l3 2" />
  </>,
);
export const IconLogo = ({ size = 22 }: { size?: number }): ReactElement => (
  <svg width={size} height={size} viewBox="0 0 32 32" aria-hidden="true">
    <rect x="3" y="3" width="26" height="26" rx="7" fill="var(--accent)" />
    <path
      d="M11 22V10h6.5a4 4 0 0 1 0 8H11"
      fill="none"
      stroke="#fff"
      strokeWidth="2.6"
      strokeLinecap="round"
      strokeLinejoin="round"
    />
  </svg>
);
