// scripts/icons: assets/tandem.svg → extension/icons/tandem-<size>.png, drawn by Chromium at
// one device pixel per CSS pixel on a transparent page. The 128 px icon is the store's: its
// mark is 96 px with 16 px of clear space around it, as the Chrome Web Store asks; the
// toolbar sizes use their whole square, since every pixel counts at 16 px.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { repoRoot } from '../tests/e2e/lib/browser.mjs';

// playwright-core is the e2e suite's package (scripts/icons installs it there).
const { chromium } = createRequire(path.join(repoRoot, 'tests', 'e2e', 'package.json'))('playwright-core');

const svg = await readFile(path.join(repoRoot, 'assets', 'tandem.svg'));
const src = `data:image/svg+xml;base64,${svg.toString('base64')}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu'],
});
try {
  const page = await browser.newPage({ deviceScaleFactor: 1 });
  for (const [size, mark] of [[16, 16], [32, 32], [48, 48], [128, 96]]) {
    const pad = (size - mark) / 2;
    await page.setViewportSize({ width: size, height: size });
    await page.setContent(`<body style="margin:0;background:transparent"><img src="${src}" width="${mark}" height="${mark}" style="display:block;margin:${pad}px"></body>`);
    await page.locator('img').evaluate((img) => img.decode());
    const file = path.join(repoRoot, 'extension', 'icons', `tandem-${size}.png`);
    await page.screenshot({ path: file, omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } });
    console.log(`${path.relative(repoRoot, file)} (${size}×${size})`);
  }
} finally {
  await browser.close();
}
