// A tool provider extension the test writes itself (no build step): "Word Tools", whose one
// tool, `lookup`, says it only reads and stays closed (so it runs without asking), answers
// every call at once and counts the calls in its worker's `self.calls`.
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TANDEM_ID } from './browser.mjs';

/**
 * Writes Word Tools into a fresh temporary directory (for launchExtension's `others`; the
 * caller removes it), its `lookup` declared with `description` and `parameters`. Resolves
 * to the directory.
 */
export async function writeWordTools({ description, parameters }) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tandem-words-'));
  await writeFile(path.join(dir, 'manifest.json'), JSON.stringify({
    manifest_version: 3, name: 'Word Tools', version: '1.0', background: { service_worker: 'words.js' },
  }));
  await writeFile(path.join(dir, 'words.js'), `
const TANDEM = ${JSON.stringify(TANDEM_ID)};
self.calls = 0;
const tools = [{
  name: 'lookup', label: 'Look up', description: ${JSON.stringify(description)},
  parameters: ${JSON.stringify(parameters)},
  annotations: { readOnlyHint: true, openWorldHint: false },
}];
const register = () => chrome.runtime.sendMessage(TANDEM, { type: 'REGISTER_TOOLS', name: 'Word Tools', tools }).catch(() => {});
chrome.runtime.onMessageExternal.addListener((msg, sender, sendResponse) => {
  if (sender.id !== TANDEM) return false;
  if (msg.type === 'ORCHESTRATOR_READY') { register(); return false; }
  if (msg.type === 'TOOL_EXECUTE') {
    self.calls += 1;
    sendResponse({ content: [{ type: 'text', text: 'A word, call ' + self.calls + '.' }] });
  }
  return false;
});
register();
`);
  return dir;
}

/** Word Tools' worker in the browser `context`, once it runs. */
export async function wordToolsWorker(context) {
  const isWords = (w) => w.url().endsWith('/words.js');
  return context.serviceWorkers().find(isWords) ?? await context.waitForEvent('serviceworker', { predicate: isWords });
}
