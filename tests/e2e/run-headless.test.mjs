// `scripts/run --headless`, the README's first command on a machine without a display: it
// loads dist/ as an extension, opens the side panel and saves what a user sees. On a fresh
// profile that is Settings, which a first run opens by itself (the script once waited for the
// conversation's Send button, hidden behind Settings, and timed out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from './lib/browser.mjs';

test('scripts/run --headless: the panel opens on Settings on a first run and its screenshot is saved', async () => {
  const started = Date.now();
  const { stdout } = await new Promise((resolve, reject) => {
    execFile('node', [path.join(repoRoot, 'scripts', 'headless.mjs')], { timeout: 90_000 }, (error, out, err) =>
      (error ? reject(new Error(`${error.message}\n${out}\n${err}`)) : resolve({ stdout: out })));
  });
  assert.match(stdout, /Tandem loaded: extension id [a-p]{32}/);
  assert.match(stdout, /side panel shows Settings/);
  const file = path.join(repoRoot, 'dist-screenshot.png');
  assert.ok((await stat(file)).mtimeMs >= started - 1000, 'the screenshot is this run\'s');
  const png = await readFile(file);
  assert.deepEqual([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join(''), 'PNG');
});
