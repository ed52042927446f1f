#!/usr/bin/env node
// Records every optional platform package (e.g. @rollup/rollup-darwin-arm64) in package-lock.json.
// The npm registry mirror these machines reach lacks many of them, so `npm install` leaves them out
// of the lock and `npm ci` then refuses the lock as out of sync. The entries carry os/cpu/libc, so
// npm ci skips them on other platforms (and tolerates a missing optional one). Run after `npm install`.
/* global URL, process */
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
const OS = ['darwin', 'linux', 'win32', 'freebsd', 'openbsd', 'android', 'openharmony', 'sunos', 'aix', 'netbsd'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'loong64', 'ppc64', 'riscv64', 's390x', 'mips64el', 'wasm32'];
let added = 0;
for (const [where, entry] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = where === '' ? 'node_modules' : `${where}/node_modules`;
    if (packages[`${base}/${name}`] || packages[`node_modules/${name}`]) continue;
    const parts = name.split('/').pop().split('-');
    const os = parts.find((p) => OS.includes(p));
    const cpu = parts.find((p) => CPU.includes(p)) ?? (parts.includes('eabihf') || parts.includes('gnueabihf') ? 'arm' : undefined);
    if (!os || !cpu) continue; // not a platform binary package: leave it to npm
    const libc = parts.includes('musl') || parts.includes('musleabihf') ? 'musl' : os === 'linux' ? 'glibc' : undefined;
    packages[`node_modules/${name}`] = {
      version: String(range).replace(/^[~^]/, ''),
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc] } : {}),
      optional: true,
      os: [os],
    };
    added++;
  }
}
const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
lock.packages = sorted;
writeFileSync(path, JSON.stringify(lock, null, 2) + '\n');
process.stdout.write(`lock-optional-platforms: recorded ${added} optional platform package(s)\n`);
