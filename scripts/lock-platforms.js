#!/usr/bin/env node
// Records the other platforms' optional native packages in package-lock.json.
//
// Why: the registry this project is built against serves only the Linux builds of packages such
// as @swc/core, rolldown and unrs-resolver, so `npm install` drops the darwin/win32/… variants
// from the lock, and `npm ci` then refuses the lock ("Missing: @swc/core-darwin-arm64 from lock
// file", npm/cli#4828, #8320). An entry that names the package's os/cpu is enough for `npm ci`:
// it skips packages for other platforms without fetching them. Run after changing dependencies:
// `node scripts/lock-platforms.js` (idempotent; `--check` exits 1 when entries are missing).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const OS = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openbsd', 'netbsd', 'sunos', 'aix', 'openharmony'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 'riscv64', 's390x', 'loong64', 'mips64el', 'wasm32'];
const ALIASES = {
  win: 'win32',
  windows: 'win32',
  mac: 'darwin',
  macos: 'darwin',
  x86_64: 'x64',
  amd64: 'x64',
  aarch64: 'arm64',
  armv7: 'arm',
  x86: 'ia32',
  ppc64le: 'ppc64',
  wasm: 'wasm32',
};

/** os/cpu/libc of a platform package, read from its name (`@swc/core-linux-x64-musl`). */
function platformOf(name) {
  const parts = name
    .split('/')
    .pop()
    .split('-')
    .map((p) => ALIASES[p] ?? p);
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  if (!os && cpu !== 'wasm32') return null;
  const entry = { optional: true };
  if (os) entry.os = [os];
  if (cpu) entry.cpu = [cpu];
  if (parts.includes('musl')) entry.libc = ['musl'];
  else if (parts.includes('gnu') && os === 'linux') entry.libc = ['glibc'];
  return entry;
}

const lockFile = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8'));
const added = [];
for (const [location, pkg] of Object.entries(lock.packages)) {
  for (const [dep, spec] of Object.entries(pkg.optionalDependencies ?? {})) {
    // Resolution as node does it: nested first, then each ancestor node_modules up to the root.
    const prefix = location ? `${location}/` : '';
    const candidates = [];
    let dir = location;
    for (;;) {
      candidates.push(`${dir ? `${dir}/` : ''}node_modules/${dep}`);
      if (!dir) break;
      const cut = dir.lastIndexOf('/node_modules/');
      dir = cut === -1 ? '' : dir.slice(0, cut);
    }
    if (candidates.some((c) => lock.packages[c])) continue;
    const platform = platformOf(dep);
    if (!platform) continue;
    const version = /^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec) ? spec : spec.replace(/^[\^~=]/, '');
    const at = lock.packages[`node_modules/${dep}`] ? `${prefix}node_modules/${dep}` : `node_modules/${dep}`;
    lock.packages[at] = { version, ...platform, ...(pkg.dev ? { dev: true } : {}) };
    added.push(at);
  }
}
if (process.argv.includes('--check')) {
  if (added.length) {
    console.error(`package-lock.json misses ${added.length} platform entries; run node scripts/lock-platforms.js`);
    process.exit(1);
  }
  process.exit(0);
}
const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
fs.writeFileSync(lockFile, JSON.stringify(lock, null, 2) + '\n');
console.log(`package-lock.json: ${added.length} platform entries added`);
