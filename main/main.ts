// Electron entry: one instance, then the tray app. Wiring only.

import { app } from 'electron';

import { loadTrayConfig } from './config.js';
import { createTrayApp, type TrayApp } from './tray-app.js';

let tray: TrayApp | undefined;

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => tray?.openDashboard());
  void app.whenReady().then(async () => {
    app.setAppUserModelId('dev.palace.app');
    if (process.platform === 'darwin') app.dock?.hide();
    tray = await createTrayApp({
      config: loadTrayConfig(),
      appPath: app.getAppPath(),
      packaged: app.isPackaged,
      execPath: process.execPath,
    });
  });
}
