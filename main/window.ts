// The dashboard window and the rules every web contents of the app lives by: isolated, sandboxed,
// no Node, no new windows, no navigation away from the hub (or the bundled fallback page).

import { BrowserWindow, type Session, type WebContents } from 'electron';

import { isAllowedUrl } from './navigation.js';

/** Denies window.open, navigation and redirects to other origins, and <webview>. */
export function hardenContents(
  contents: WebContents,
  allowedOrigins: () => readonly (string | null | undefined)[],
): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.on('will-navigate', (event) => {
    if (!isAllowedUrl(event.url, allowedOrigins())) event.preventDefault();
  });
  contents.on('will-redirect', (event) => {
    if (!isAllowedUrl(event.url, allowedOrigins())) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

/** Only clipboard writes (the copy buttons) are granted; every other permission is refused. */
export function restrictPermissions(session: Session): void {
  session.setPermissionRequestHandler((_contents, permission, callback) =>
    callback(permission === 'clipboard-sanitized-write'),
  );
  session.setPermissionCheckHandler((_contents, permission) => permission === 'clipboard-sanitized-write');
}

export function createDashboardWindow(options: { preloadPath: string; iconPath?: string }): BrowserWindow {
  const win = new BrowserWindow({
    width: 1320,
    height: 840,
    minWidth: 760,
    minHeight: 480,
    show: false,
    title: 'palace',
    autoHideMenuBar: true,
    ...(options.iconPath ? { icon: options.iconPath } : {}),
    webPreferences: {
      preload: options.preloadPath,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      sandbox: true,
      webSecurity: true,
      allowRunningInsecureContent: false,
      navigateOnDragDrop: false,
      spellcheck: false,
    },
  });
  win.once('ready-to-show', () => win.show());
  return win;
}
