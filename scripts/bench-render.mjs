// Measures how long the side panel takes to show the end of a long Markdown answer after
// the provider sent its last byte, for 50 KB and 500 KB answers streamed as fast as the mock
// can write (word-sized tokens, as real providers send them). Also prints the longest gap
// between two animation frames while the answer streamed: how long the panel was unable to
// react to typing, and how long a key typed into the Message box during the flood takes to
// appear in the box (the keypress sent → the box's input event). Prints figures; asserts
// nothing.
import path from 'node:path';
import { launchExtension, repoRoot } from '../tests/e2e/lib/browser.mjs';
import { startMockProvider, tokenize } from '../tests/e2e/lib/mock-provider.mjs';
import { longMarkdown, onePara } from '../tests/e2e/lib/model-text.mjs';
import { openChatMode, openSettings, saveSettings } from '../tests/e2e/lib/panel.mjs';

const SIZES = [50_000, 500_000];
const mock = await startMockProvider({ delayMs: 0 });
const browser = await launchExtension({ dist: path.join(repoRoot, 'dist') });
try {
  const panel = await browser.openPanel();
  await openSettings(panel);
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label: 'OpenAI-compatible' });
  await panel.getByLabel('Base URL').fill(`${mock.url}/v1`);
  await panel.getByLabel('Model', { exact: true }).fill('gpt-bench');
  await panel.getByLabel('API key').fill('sk-bench-12345678');
  await saveSettings(panel);
  await openChatMode(panel);

  // Word-sized deltas as providers send them, then the same answers in 2,000-byte pieces:
  // the difference is what each Port message costs, apart from the rendering.
  // Last, the worst shape for incremental rendering: one block that never finishes (lines
  // joined by single newlines make one paragraph), so every render parses all of it.
  const runs = [
    ...SIZES.map((size) => ({ size, piece: 0 })),
    ...SIZES.map((size) => ({ size, piece: 2000 })),
    { size: 500_000, piece: 0, oneBlock: true },
  ];
  for (const { size, piece, oneBlock } of runs) {
    const marker = `end-of-answer-${size}`;
    const reply = oneBlock ? onePara(size, marker) : longMarkdown(size, marker);
    const tokens = piece ? reply.match(new RegExp(`[^]{1,${piece}}`, 'g')) : tokenize(reply);
    mock.reset();
    mock.script({ tokens, delayMs: 0, batch: 400 });
    // The longest gap between two frames while the answer streams.
    await panel.evaluate(() => {
      const w = window;
      w.__benchGap = 0;
      w.__benchRun = true;
      let last = performance.now();
      const tick = (t) => {
        w.__benchGap = Math.max(w.__benchGap, t - last);
        last = t;
        if (w.__benchRun) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
      // When each typed key reached the Message box (ms since the epoch, as the bench's clock).
      w.__benchKeys = [];
      const box = document.querySelector('textarea#message');
      if (!w.__benchListening) {
        w.__benchListening = true;
        box.addEventListener('input', () => w.__benchKeys?.push(Date.now()));
      }
    });
    await panel.getByRole('textbox', { name: 'Message' }).fill(`answer of ${size} bytes please`);
    const sentAt = Date.now();
    await panel.getByRole('textbox', { name: 'Message' }).press('Enter');
    // A key typed into the Message box every 100 ms while the answer streams: how long each
    // takes to appear in the box is how the panel feels to someone typing the next question.
    let typing = true;
    const typedAt = [];
    const typist = (async () => {
      await panel.waitForFunction(() => [...document.querySelectorAll('article[aria-label="Tandem"]')].at(-1)?.getAttribute('aria-busy') === 'true');
      await panel.evaluate(() => { window.__benchKeys = []; });
      while (typing) {
        typedAt.push(Date.now());
        await panel.keyboard.type('x');
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // Polled every frame; looks only at the answer's last block, so watching costs nothing.
    const shownAt = await (await panel.waitForFunction((m) => {
      const text = [...document.querySelectorAll('article[aria-label="Tandem"] .text')].at(-1);
      return text?.lastElementChild?.textContent.includes(m) ? Date.now() : false;
    }, marker, { polling: 'raf', timeout: 600_000 })).jsonValue();
    typing = false;
    await typist;
    const gap = await panel.evaluate(() => { window.__benchRun = false; return window.__benchGap; });
    const keysAt = await panel.evaluate(() => window.__benchKeys);
    const lags = typedAt.map((t, i) => (keysAt[i] ?? NaN) - t).filter((d) => !Number.isNaN(d)).sort((a, b) => a - b);
    const keys = lags.length
      ? `; ${lags.length} keys typed during the stream reached the Message box in ${lags[Math.floor(lags.length / 2)]} ms median, ${lags.at(-1)} ms at worst`
      : '; no key typed while it streamed';
    await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'), null, { timeout: 600_000 });
    const req = mock.requests.find((r) => r.path === '/v1/chat/completions');
    const lastByte = req?.finishedAt ?? NaN;
    console.log(
      `${String(size / 1000).padStart(4)} KB ${oneBlock ? 'one-paragraph answer' : 'answer'} in ${String(tokens.length).padStart(5)} ${piece ? `${piece}-byte pieces` : 'word-sized deltas'}: end shown ${shownAt - lastByte} ms after the last byte ` +
      `(provider streamed for ${lastByte - req.at} ms; ${shownAt - sentAt} ms from Send); longest frame gap ${gap.toFixed(0)} ms${keys}`,
    );
    await panel.getByRole('button', { name: 'Clear conversation' }).click().catch(() => {});
    await panel.getByRole('textbox', { name: 'Message' }).fill('');
  }
} finally {
  await browser.close();
  await mock.close();
}
