// The zip scripts/package makes is one the Chrome Web Store takes and Chrome installs: the
// development `key` is out (the store refuses an upload carrying one), the icons the
// manifest names are in at their sizes, every language's description fits the store's 132
// characters, nothing a user does not need is packed — and the unpacked zip, loaded as an
// extension, starts its service worker and opens its side panel. It packages a copy of the
// dist/ scripts/test built, with test litter added, so the suite neither rebuilds nor writes
// into the repository.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cp, mkdtemp, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { launchExtension, repoRoot, TANDEM_ID } from './lib/browser.mjs';

const run = promisify(execFile);
let work, unpacked, printed;

/** Every file under `dir`, as paths relative to it. */
async function files(dir) {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}

/** A PNG's width and height, from its IHDR header. */
const pngSize = (bytes) => [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];

before(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'tandem-package-'));
  const from = path.join(work, 'dist');
  await cp(path.join(repoRoot, 'dist'), from, { recursive: true });
  // What a developer's or a test's dist/ may hold, and a user never needs.
  await writeFile(path.join(from, 'wasm', 'tandem.js.map'), '{}');
  await writeFile(path.join(from, '.DS_Store'), '');
  await writeFile(path.join(from, '__fake-language-model.js'), '// test only');
  const out = await run(path.join(repoRoot, 'scripts', 'package'), ['--no-build', '--from', from, '--to', path.join(work, 'out')]);
  printed = out.stdout.trim();
  unpacked = path.join(work, 'unpacked');
  await mkdir(unpacked);
  const manifest = JSON.parse(await readFile(path.join(from, 'manifest.json'), 'utf8'));
  await run('python3', ['-m', 'zipfile', '-e', path.join(work, 'out', `tandem-${manifest.version}.zip`), unpacked]);
});

after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

test('scripts/package prints the versioned zip\'s path and size', async () => {
  const manifest = JSON.parse(await readFile(path.join(repoRoot, 'manifest.json'), 'utf8'));
  const zip = path.join(work, 'out', `tandem-${manifest.version}.zip`);
  assert.match(printed, new RegExp(`^${zip.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ bytes, \\d+ KB, \\d+ files\\)$`));
});

test('the zip has no development key, its icons at their sizes, short descriptions, and nothing a user does not need', async () => {
  const manifest = JSON.parse(await readFile(path.join(unpacked, 'manifest.json'), 'utf8'));
  assert.equal(manifest.key, undefined, 'the store refuses a manifest with a key');
  for (const set of [manifest.icons, manifest.action?.default_icon]) {
    for (const size of [16, 32, 48, 128]) {
      assert.ok(set?.[size], `an icon of ${size} px`);
      assert.deepEqual(pngSize(await readFile(path.join(unpacked, set[size]))), [size, size], set[size]);
    }
  }
  const packed = await files(unpacked);
  for (const locale of await readdir(path.join(unpacked, '_locales'))) {
    const messages = JSON.parse(await readFile(path.join(unpacked, '_locales', locale, 'messages.json'), 'utf8'));
    const chars = [...messages.extDescription.message].length;
    assert.ok(chars <= 132, `${locale}'s description has ${chars} characters`);
  }
  assert.deepEqual(packed.filter((f) => /\.map$|\.DS_Store$|(^|\/)__/.test(f)), [], 'no source maps, litter or test-only files');
  // Everything else dist/ holds is shipped: the panel, the worker, the content scripts, the wasm.
  const built = (await files(path.join(repoRoot, 'dist'))).sort();
  assert.deepEqual(packed.sort(), built);
});

test('the unpacked zip installs: Chrome starts its service worker and its side panel opens', async () => {
  const browser = await launchExtension({ dist: unpacked });
  try {
    assert.notEqual(browser.extensionId, TANDEM_ID, 'without the key Chrome gives the extension an id of its own, as the store will');
    const panel = await browser.openPanel();
    // A first run opens Settings to choose a provider.
    await panel.getByRole('region', { name: 'Settings' }).waitFor({ timeout: 15_000 });
    // The worker's script ran to its end: its last listeners are there, although the optional
    // permissions (notifications, identity) are not granted yet, so their APIs are absent.
    const worker = await browser.serviceWorker.evaluate(() => ({
      menus: chrome.contextMenus.onClicked.hasListeners(),
      commands: chrome.commands.onCommand.hasListeners(),
      notifications: typeof chrome.notifications,
    }));
    assert.deepEqual(worker, { menus: true, commands: true, notifications: 'undefined' });
  } finally {
    await browser.close();
  }
});
