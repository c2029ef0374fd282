// Launches the real Chromium with the unpacked extension loaded, and gives tests
// the handful of handles they need: the extension id, its service worker, the side
// panel (opened as a tab: sidePanel.open() wants a user gesture), a way to stop the
// worker to test wake-up and resume, and screenshots.
//
// Facts this relies on (measured, see shared/TOOLCHAIN.md): Playwright passes
// --disable-extensions unless --disable-extensions-except is given; the worker is
// stopped with CDP ServiceWorker.stopAllWorkers from a page session; a mock server on
// 127.0.0.1 is reachable from the worker.

import { chromium } from 'playwright-core';
import { mkdtemp, mkdir, rm, readFile, writeFile, access, cp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of the repository root (three levels above this file). */
export const repoRoot = path.resolve(fileURLToPath(new URL('../../../', import.meta.url)));
/** Tandem's extension id: the manifest's `key` pins it, so every install has it. */
export const TANDEM_ID = 'bkkhgefimkkanagkjaoehnjcmpolnojf';
/** The example tool provider built from the SDK (`crates/tool-provider/examples/tabs`) by scripts/build. */
export const TABS_PROVIDER_DIR = path.join(repoRoot, 'dist-tools', 'tabs');
/** Where screenshots go; git-ignored. */
export const outputDir = path.join(repoRoot, 'test-output');

const FAKE_LM_SOURCE = readFile(new URL('./fake-language-model.js', import.meta.url), 'utf8');

/**
 * Starts Chromium with the extension in `dist` (default: <repo>/dist) in a fresh
 * profile that close() deletes. `fakeLanguageModel`: true or a config object for
 * fake-language-model.js (availability, reply, delayMs, contextWindow, ...). The
 * fake goes into every page by an init script, and into the service worker by
 * loading a temporary copy of `dist` whose background script imports the fake
 * first: evaluating it into a running worker would lose it on every restart, and
 * the event that wakes a stopped worker would reach the real API before the fake.
 *
 * `dist` need not be Tandem: a test of another extension passes its own directory (the
 * tool-provider test loads a fake orchestrator there). `extensionId`: the id `dist` will
 * have (fixed by its manifest's `key`); give it when an extension in `others` also has a
 * background.js, so the handles below are `dist`'s and not the first worker to start.
 * `lang`: the UI language Chrome runs in (`de`, `ja`, `ar`…), what chrome.i18n reports.
 * `granted`: optional permissions the person has already allowed (`['notifications']`).
 * Chrome asks for one that has a warning in a dialog of its own, which headless Chromium
 * shows to nobody: such a test loads a copy of `dist` that lists them as install-time
 * permissions, so the panel's request is answered at once, as after the person's Allow.
 */
export async function launchExtension({ dist = path.join(repoRoot, 'dist'), headless = true, fakeLanguageModel, args = [], timeout = 10_000, others = [], extensionId: expectedId, lang, granted = [] } = {}) {
  dist = path.resolve(dist);
  await access(path.join(dist, 'manifest.json')).catch(() => {
    throw new Error(`launchExtension: no manifest.json in ${dist}; build the extension first`);
  });
  const temps = [];
  const fakeSource = fakeLanguageModel
    ? `globalThis.__fakeLanguageModel = ${JSON.stringify(fakeLanguageModel === true ? {} : fakeLanguageModel)};\n${await FAKE_LM_SOURCE}`
    : null;
  if (fakeSource) {
    dist = await copyWithFake(dist, fakeSource);
    temps.push(dist);
  }
  if (granted.length) {
    const copy = await mkdtemp(path.join(os.tmpdir(), 'tandem-dist-'));
    await cp(dist, copy, { recursive: true });
    if (fakeSource) await rm(dist, { recursive: true, force: true });
    dist = copy;
    temps.push(dist);
    const file = path.join(dist, 'manifest.json');
    const manifest = JSON.parse(await readFile(file, 'utf8'));
    manifest.optional_permissions = (manifest.optional_permissions ?? []).filter((p) => !granted.includes(p));
    manifest.permissions = [...(manifest.permissions ?? []), ...granted];
    await writeFile(file, JSON.stringify(manifest));
  }
  const profile = await mkdtemp(path.join(os.tmpdir(), 'tandem-profile-'));
  temps.push(profile);
  const cleanup = () => Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      headless,
      timeout,
      // `lang`: Chrome's UI language. On Linux Chrome takes it from the environment
      // (LANGUAGE), not from --lang alone (measured on Chromium 156), so both are set.
      ...(lang ? { env: { ...process.env, LANGUAGE: lang, LC_ALL: '', LANG: '' } } : {}),
      args: [
        ...(lang ? [`--lang=${lang}`] : []),
        ...(headless ? ['--headless=new'] : []),
        '--no-sandbox', '--disable-gpu', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
        // `others`: more unpacked extensions loaded beside Tandem (a hostile neighbour, say).
        `--disable-extensions-except=${[dist, ...others].join(',')}`, `--load-extension=${[dist, ...others].join(',')}`,
        ...args,
      ],
    });
  } catch (err) {
    await cleanup();
    throw err;
  }
  if (fakeSource) await context.addInitScript({ content: fakeSource });

  // Chromium may start the worker before Playwright listens, so look first, then wait.
  const isExtensionWorker = (w) => w.url().startsWith(expectedId ? `chrome-extension://${expectedId}/` : 'chrome-extension://') && /\/background\.js$/.test(new URL(w.url()).pathname);
  let worker = context.serviceWorkers().find(isExtensionWorker)
    ?? await context.waitForEvent('serviceworker', { predicate: isExtensionWorker, timeout });
  const extensionId = new URL(worker.url()).host;
  const origin = `chrome-extension://${extensionId}`;
  const ours = (w) => w.url().startsWith(`${origin}/`);

  // Measured on Chromium 156 + Playwright 1.65: a stopped extension worker keeps its
  // target id, so Playwright reuses the same Worker object after the restart and
  // emits neither 'close' nor a new 'serviceworker' event. The CDP ServiceWorker
  // domain is the reliable witness of stop and start; the event below is only for
  // builds where that changes.
  context.on('serviceworker', (w) => {
    if (!ours(w) || w === worker) return;
    worker = w;
  });

  // The watcher is a CDP session with the ServiceWorker domain on, held by a tab
  // showing the extension's manifest.json: the domain wants a page of the extension's
  // origin, and that page runs none of its code. It is made on first need, so until
  // the first stopServiceWorker() context.pages() holds only the tests' own tabs.
  let watch = null;
  function watcher() {
    watch ??= (async () => {
      const page = await context.newPage();
      await page.goto(`${origin}/manifest.json`);
      const cdp = await context.newCDPSession(page);
      const w = { page, cdp, status: 'unknown', listeners: new Set() };
      cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
        const v = versions.find((x) => x.scriptURL.startsWith(`${origin}/`));
        if (!v || v.runningStatus === w.status) return;
        w.status = v.runningStatus;
        for (const l of w.listeners) l(w.status);
      });
      await cdp.send('ServiceWorker.enable');
      return w;
    })();
    return watch;
  }
  async function untilStatus(status, t, what) {
    const w = await watcher();
    if (w.status === status) return;
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => { w.listeners.delete(l); reject(new Error(`${what}: service worker still ${w.status} after ${t} ms`)); }, t);
      const l = (s) => { if (s === status) { clearTimeout(timer); w.listeners.delete(l); resolve(); } };
      w.listeners.add(l);
    });
  }

  return {
    context,
    extensionId,
    /** URL of a file of the extension: ext.url('sidepanel.html'). */
    url: (file) => `${origin}/${file.replace(/^\//, '')}`,
    /** The extension's service worker (the same handle keeps working across restarts). */
    get serviceWorker() { return worker; },

    /**
     * Resolves with the worker once it runs. After stopServiceWorker() it waits for
     * the next start, which some extension event must cause (a panel message, say).
     */
    async waitForServiceWorker({ timeout: t = timeout } = {}) {
      if (watch) await untilStatus('running', t, 'waitForServiceWorker');
      return worker;
    },

    /** Opens sidepanel.html in a new tab sized like a side panel (400×800 by default). */
    async openPanel({ width = 400, height = 800, query = '' } = {}) {
      const page = await context.newPage();
      await page.setViewportSize({ width, height });
      await page.goto(`${origin}/sidepanel.html${query}`);
      // Ready when the panel has read its settings (and opened Settings on a first run): the
      // on-device status line is filled only after that. Tests that look at Settings before
      // would race the panel's own first-run opening.
      await page.waitForFunction(() => {
        const line = document.getElementById('nano-status');
        return !line || !line.textContent.includes('checking');
      });
      return page;
    },

    /** Stops the extension's service worker and resolves once Chromium reports it stopped. */
    async stopServiceWorker({ timeout: t = timeout } = {}) {
      const w = await watcher();
      await w.cdp.send('ServiceWorker.stopAllWorkers');
      // A stop asked while the worker is still starting (a panel's poll woke it a moment
      // before) can be dropped by Chrome; seen once in a full run on two busy cores. Asked
      // again once, halfway through the wait.
      try {
        await untilStatus('stopped', t / 2, 'stopServiceWorker');
      } catch {
        await w.cdp.send('ServiceWorker.stopAllWorkers');
        await untilStatus('stopped', t / 2, 'stopServiceWorker');
      }
    },

    /** Saves a full-page PNG to test-output/<name>.png and returns its path. */
    async screenshot(page, name) {
      await mkdir(outputDir, { recursive: true });
      const file = path.join(outputDir, `${name.replace(/[^\w.-]+/g, '_')}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },

    /** Closes the browser and deletes the temporary profile (and dist copy). */
    async close() {
      try { await context.close(); } finally { await cleanup(); }
    },
  };
}

// Copies dist and makes its background script load the fake before anything else.
// A module import is evaluated before the importing module's other imports and body.
async function copyWithFake(dist, fakeSource) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tandem-dist-'));
  await cp(dist, dir, { recursive: true });
  const manifest = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8'));
  await writeFile(path.join(dir, '__fake-language-model.js'), fakeSource);
  const bg = manifest.background?.service_worker;
  if (bg) {
    const file = path.join(dir, bg);
    const prelude = manifest.background.type === 'module'
      ? "import '/__fake-language-model.js';\n"
      : "importScripts('/__fake-language-model.js');\n";
    await writeFile(file, prelude + await readFile(file, 'utf8'));
  }
  return dir;
}

/**
 * Records console output of a Page or Worker: `errors` gets the text of each
 * console.error and each uncaught page exception, `messages` gets everything.
 * `ignore` lists patterns of expected errors (a deliberate 401 logs one, say).
 * Call stop() to detach.
 */
export function collectConsole(target, { ignore = [] } = {}) {
  const errors = [];
  const messages = [];
  const expected = (text) => ignore.some((p) => (typeof p === 'string' ? text.includes(p) : p.test(text)));
  const onConsole = (m) => {
    const entry = { type: m.type(), text: m.text(), url: m.location()?.url };
    messages.push(entry);
    if (entry.type === 'error' && !expected(entry.text)) errors.push(entry.text);
  };
  const onPageError = (err) => {
    const text = `Uncaught ${err.name ?? 'Error'}: ${err.message}`;
    messages.push({ type: 'pageerror', text });
    if (!expected(text)) errors.push(text);
  };
  target.on('console', onConsole);
  target.on('pageerror', onPageError);
  return {
    errors,
    messages,
    stop() { target.off('console', onConsole); target.off('pageerror', onPageError); },
  };
}
