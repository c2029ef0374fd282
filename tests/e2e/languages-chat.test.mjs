// The chat's own words in the language Chrome speaks: Chromium launched with --lang=de and
// --lang=ja, a person sends a message and gets an answer, then stops a second one halfway.
// What they read and what a screen reader names (their bubble, the answer's Copy and "Hide
// from context" controls, Edit and Regenerate, the line saying which provider answered with
// how many tokens, the Stopped badge, the tab memory line) are the catalog's words in that
// language, with no English word of those sentences left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { assertNoEnglish, catalog, fill, pattern, useMock } from './lib/languages.mjs';

const REPLY = { de: 'Hallo, wie kann ich helfen?', ja: 'こんにちは、何をお手伝いしましょうか？' };
const QUESTION = { de: 'Bist du da?', ja: 'いますか？' };

// The chat's sentences and names checked for English left over.
const KEYS = ['chatYou', 'chatCopy', 'chatCopyAnswer', 'chatHide', 'chatEdit', 'chatRegenerate',
  'chatAnsweredViaTokens', 'nTokens', 'badgeStopped', 'chatNotRemembered', 'chatRemembered', 'meterTokens'];

for (const lang of ['de', 'ja']) {
  test(`--lang=${lang}: the chat's buttons, names, answer note, badge and memory line are in ${lang}`, async () => {
    const [m, en] = [await catalog(lang), await catalog('en')];
    const mock = await startMockProvider({ delayMs: 0 });
    const browser = await launchExtension({ lang });
    try {
      const panel = await browser.openPanel({ width: 320 });
      await useMock(panel, m, mock);
      await panel.getByRole('tab', { name: m.chat, exact: true }).click();
      const box = panel.getByRole('textbox', { name: m.message, exact: true });

      mock.setDefault({ reply: REPLY[lang], delayMs: 0, usage: { input: 1200, output: 34 } });
      await box.fill(QUESTION[lang]);
      await box.press('Enter');
      const answer = panel.getByRole('article', { name: 'Tandem' }).last();
      await answer.filter({ hasText: REPLY[lang] }).waitFor();
      await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));

      // The person's own bubble is named as them, in their language.
      await panel.getByRole('article', { name: m.chatYou, exact: true }).filter({ hasText: QUESTION[lang] }).waitFor();
      // The answer's controls, by the names a screen reader reads.
      const copy = answer.getByRole('button', { name: m.chatCopyAnswer, exact: true });
      assert.equal((await copy.innerText()).trim(), m.chatCopy);
      await answer.getByRole('button', { name: m.chatHide, exact: true }).waitFor();
      assert.equal((await answer.getByRole('button', { name: m.chatRegenerate, exact: true }).innerText()).trim(), m.chatRegenerate);
      await panel.getByRole('button', { name: m.chatEdit, exact: true }).waitFor();
      // Which provider answered, with the tokens in the person's words and digits grouped.
      const note = (await answer.locator('.provider').innerText()).trim();
      assert.equal(note, fill(m.chatAnsweredViaTokens, 'OpenAI-compatible', fill(m.nTokens, '1,234')));

      // The token meter under the chat says how full the context is, in that language.
      const meter = (await panel.locator('#token-meter').innerText()).trim();
      assert.ok(pattern(m.meterTokens).test(meter) || pattern(m.meterTokensEstimated).test(meter), meter);

      // A second answer stopped halfway carries the Stopped badge in that language.
      mock.setDefault({ reply: `${REPLY[lang]} `.repeat(40), delayMs: 40 });
      await box.fill(QUESTION[lang]);
      await box.press('Enter');
      const second = panel.getByRole('article', { name: 'Tandem' }).nth(1);
      await second.locator('.text').filter({ hasText: /\S/ }).waitFor();
      await panel.getByRole('button', { name: m.stop, exact: true }).click();
      await second.locator('.badge').filter({ hasText: m.badgeStopped }).waitFor();

      // The tab memory line (this panel's tab is the extension's own page: not a website).
      const memory = (await panel.locator('#memory-status').innerText()).trim();
      assert.ok([m.chatNotRemembered].includes(memory) || memory.startsWith(fill(m.chatRemembered, '').slice(0, 4)), memory);

      const conversation = await panel.locator('#messages').innerText();
      const shown = [conversation, memory, note, meter].join('\n');
      assertNoEnglish(en, m, KEYS, shown, lang);
      const names = await panel.evaluate(() => [...document.querySelectorAll('#messages [aria-label], #messages [title]')]
        .map((e) => `${e.getAttribute('aria-label') ?? ''} ${e.getAttribute('title') ?? ''}`).join('\n'));
      assertNoEnglish(en, m, ['chatCopyAnswer', 'chatHide', 'chatHideTitle', 'chatEditTitle', 'chatRegenerateTitle', 'chatYou'], names, lang);
    } finally {
      await browser.close();
      await mock.close();
    }
  });
}
