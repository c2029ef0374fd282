// The floor the load benches compare Tandem with: the smallest extension that does what Tandem's
// figures time, loaded the same way (tests/e2e/lib/browser.mjs launchExtension). Its side panel
// page is one status line and one classic script that fills it; its service worker is a module
// that answers every message on a Port at once. What Chrome itself spends starting an extension
// page or waking a worker on this machine is in its figures; Tandem's overhead is what is above.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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

/** Writes the floor extension into a fresh temporary directory: `{ dist, remove() }`. */
export async function makeFloorExtension() {
  const dist = await mkdtemp(path.join(os.tmpdir(), 'tandem-floor-'));
  await writeFile(path.join(dist, 'manifest.json'), JSON.stringify(MANIFEST, null, 2));
  await writeFile(path.join(dist, 'background.js'), WORKER);
  await writeFile(path.join(dist, 'sidepanel.html'), PANEL);
  await writeFile(path.join(dist, 'panel.js'), PANEL_SCRIPT);
  return { dist, remove: () => rm(dist, { recursive: true, force: true }) };
}

/**
 * Launches Tandem's dist/ (TANDEM_DIST, or the repository's) and the floor, each in a browser
 * of its own, the same way, and runs `measure({ tandem, floor })`; then closes both browsers
 * and removes the floor, whatever happened.
 */
export async function withTandemAndFloor(measure) {
  const floorDir = await makeFloorExtension();
  const browsers = [];
  try {
    const tandem = await launchExtension({ dist: process.env.TANDEM_DIST ?? path.join(repoRoot, 'dist') });
    browsers.push(tandem);
    const floor = await launchExtension({ dist: floorDir.dist });
    browsers.push(floor);
    return await measure({ tandem, floor });
  } finally {
    for (const browser of browsers) await browser.close();
    await floorDir.remove();
  }
}
