// The floor the load benches compare Tandem with: the smallest extension that does what Tandem's
// figures time, loaded the same way (tests/e2e/lib/browser.mjs launchExtension). Its side panel
// page is one status line and one classic script that fills it; its service worker is a module
// that answers every message on a Port at once. What Chrome itself spends starting an extension
// page or waking a worker on this machine is in its figures; Tandem's overhead is what is above.
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { launchExtension, repoRoot } from '../../tests/e2e/lib/browser.mjs';

const MANIFEST = {
  manifest_version: 3,
  name: 'Load floor',
  version: '1.0',
  background: { service_worker: 'background.js', type: 'module' },
  side_panel: { default_path: 'sidepanel.html' },
  permissions: ['sidePanel'],
};

// The same marks as Tandem's background.js, so scripts/bench-load.mjs reads both alike.
const WORKER = `performance.mark('tandem-script');
chrome.runtime.onConnect.addListener((port) => {
  port.onMessage.addListener((message) => port.postMessage(message));
});
`;

// The line scripts/lib/panel-ready.mjs watches (#nano-status, "checking" until filled).
const PANEL = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Floor</title></head>
<body><p id="nano-status" role="status">checking…</p><script src="panel.js"></script></body>
</html>
`;
const PANEL_SCRIPT = `document.getElementById('nano-status').textContent = 'ready';
`;

// The floor's worker with a module's bytes to pay for: it compiles `module.wasm` and answers once
// that is done (compiled, not instantiated: nothing of it runs). It reads the bytes as Tandem's
// background.js does, from its own CacheStorage copy after the first start (a cached Response
// reaches the compiler 6–7 ms sooner than the file: docs/load-and-size.md), and compiles them
// streaming, as init() does. Against the floor it prices the bytes alone; against Tandem, what
// runs after them.
const WORKER_COMPILING = `performance.mark('tandem-script');
const compiled = caches.open('floor-modules').then(async (cache) => {
  const key = 'https://floor-module.invalid/module.wasm';
  let response = await cache.match(key);
  if (!response) {
    response = await fetch('module.wasm');
    await cache.put(key, response.clone());
  }
  return WebAssembly.compileStreaming(response);
});
chrome.runtime.onConnect.addListener((port) => {
  port.onMessage.addListener((message) => compiled.then(() => port.postMessage(message)));
});
`;

// Its panel's script with a module to pay for: it compiles `panel.wasm` before it fills the
// line, then holds the worker's module compiled as Tandem's panel does (extension/sidepanel.js:
// V8 shares compiled code between the extension's contexts, so a waking worker finds it).
const PANEL_SCRIPT_COMPILING = `WebAssembly.compileStreaming(fetch('panel.wasm'))
  .then(() => { document.getElementById('nano-status').textContent = 'ready'; })
  .then(() => WebAssembly.compileStreaming(fetch('module.wasm')))
  .then((module) => { globalThis.heldWorkerModule = module; });
`;

/**
 * Writes the floor extension into a fresh temporary directory: `{ dist, remove() }`. With
 * `wasm` (a path), its worker compiles that module before it answers; with `panelWasm`, its
 * panel compiles that one before it fills its line.
 */
export async function makeFloorExtension({ wasm, panelWasm } = {}) {
  const dist = await mkdtemp(path.join(os.tmpdir(), 'tandem-floor-'));
  const manifest = wasm || panelWasm
    ? { ...MANIFEST, content_security_policy: { extension_pages: "script-src 'self' 'wasm-unsafe-eval'; object-src 'self'" } }
    : MANIFEST;
  await writeFile(path.join(dist, 'manifest.json'), JSON.stringify(manifest, null, 2));
  await writeFile(path.join(dist, 'background.js'), wasm ? WORKER_COMPILING : WORKER);
  if (wasm) await copyFile(wasm, path.join(dist, 'module.wasm'));
  if (panelWasm) await copyFile(panelWasm, path.join(dist, 'panel.wasm'));
  await writeFile(path.join(dist, 'sidepanel.html'), PANEL);
  await writeFile(path.join(dist, 'panel.js'), panelWasm ? PANEL_SCRIPT_COMPILING : PANEL_SCRIPT);
  return { dist, remove: () => rm(dist, { recursive: true, force: true }) };
}

/** Tandem's dist/ for the benches: TANDEM_DIST, or the repository's. */
export const tandemDist = () => process.env.TANDEM_DIST ?? path.join(repoRoot, 'dist');

/**
 * Launches Tandem's dist/ (see tandemDist) and the floor, each in a browser of its own, the
 * same way, and runs `measure({ tandem, floor, floorWithModule })`; then closes the browsers
 * and removes the floors, whatever happened. With `floorModules` ({ worker, panel }: wasm
 * paths), a third browser runs the floor whose worker and panel compile those modules first
 * (`floorWithModule`).
 */
export async function withTandemAndFloor(measure, { floorModules } = {}) {
  const floorDirs = [await makeFloorExtension()];
  if (floorModules) floorDirs.push(await makeFloorExtension({ wasm: floorModules.worker, panelWasm: floorModules.panel }));
  const browsers = [];
  try {
    const tandem = await launchExtension({ dist: tandemDist() });
    browsers.push(tandem);
    for (const dir of floorDirs) browsers.push(await launchExtension({ dist: dir.dist }));
    const [, floor, floorWithModule] = browsers;
    return await measure({ tandem, floor, floorWithModule });
  } finally {
    for (const browser of browsers) await browser.close();
    for (const dir of floorDirs) await dir.remove();
  }
}
