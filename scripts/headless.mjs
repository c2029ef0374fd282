// `scripts/run --headless`: proves dist/ loads as an extension, then shows what a user sees.
// On a first run that is Settings (no provider chosen yet), afterwards the conversation.
import path from 'node:path';
import { launchExtension, repoRoot } from '../tests/e2e/lib/browser.mjs';

const dist = path.join(repoRoot, 'dist');
const browser = await launchExtension({ dist, headless: true });
try {
  console.log(`Tandem loaded: extension id ${browser.extensionId}`);
  const panel = await browser.openPanel();
  const settings = panel.getByRole('region', { name: 'Settings' });
  await settings.or(panel.getByRole('button', { name: 'Send' })).first().waitFor();
  const view = (await settings.isVisible()) ? 'Settings (first run: choose a provider)' : 'the conversation';
  const file = path.join(repoRoot, 'dist-screenshot.png');
  await panel.screenshot({ path: file });
  console.log(`side panel shows ${view}; screenshot: ${file}`);
} finally {
  await browser.close();
}
