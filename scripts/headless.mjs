// `scripts/run --headless`: proves dist/ loads as an extension, then shows what a user sees.
import path from 'node:path';
import { launchExtension, repoRoot } from '../tests/e2e/lib/browser.mjs';

const dist = path.join(repoRoot, 'dist');
const browser = await launchExtension({ dist, headless: true });
try {
  console.log(`Tandem loaded: extension id ${browser.extensionId}`);
  const panel = await browser.openPanel();
  await panel.getByRole('button', { name: 'Send' }).waitFor();
  const file = path.join(repoRoot, 'dist-screenshot.png');
  await panel.screenshot({ path: file });
  console.log(`side panel screenshot: ${file}`);
} finally {
  await browser.close();
}
