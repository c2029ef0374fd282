// The panel in the language Chrome speaks: Chromium launched with --lang=de, --lang=ja and
// --lang=ar. German and Japanese get their catalogs (extension/_locales) for the panel's static
// labels, found by their translated accessible names; Arabic has no catalog yet, so its labels
// stay English, but the page is laid out right to left (`dir` follows the UI language).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { launchExtension, repoRoot } from './lib/browser.mjs';

const catalog = async (lang) => JSON.parse(await readFile(path.join(repoRoot, 'extension', '_locales', lang, 'messages.json'), 'utf8'));

async function withPanel(lang, check) {
  const browser = await launchExtension({ lang });
  try {
    const panel = await browser.openPanel({ width: 320 });
    await check(panel, browser);
  } finally {
    await browser.close();
  }
}

for (const lang of ['de', 'ja']) {
  test(`--lang=${lang}: the panel's labels, the extension's description and its toolbar title come from the ${lang} catalog`, async () => {
    const m = await catalog(lang);
    const en = await catalog('en');
    await withPanel(lang, async (panel, browser) => {
      assert.equal(await panel.evaluate(() => chrome.i18n.getUILanguage()), lang);
      assert.equal(await panel.getAttribute('html', 'lang'), lang);
      assert.equal(await panel.getAttribute('html', 'dir'), 'ltr');
      // The first run opens Settings: its labels are the catalog's.
      const settings = panel.getByRole('region', { name: m.settings.message });
      await settings.waitFor();
      await settings.getByRole('button', { name: m.backToConversation.message }).waitFor();
      for (const key of ['provider', 'baseUrl', 'apiKey', 'contextWindowTokens']) {
        await panel.getByLabel(m[key].message, { exact: true }).waitFor();
      }
      await settings.getByRole('button', { name: m.save.message, exact: true }).waitFor();
      await panel.getByRole('button', { name: m.backToConversation.message }).click();
      // The conversation view and the composer.
      for (const key of ['saveConversation', 'clearConversation', 'forgetEverything', 'send', 'askAboutThisPage', 'summarizeThisPage']) {
        await panel.getByRole('button', { name: m[key].message, exact: true }).waitFor();
      }
      await panel.getByRole('textbox', { name: m.message.message, exact: true }).waitFor();
      assert.equal(await panel.getByRole('textbox', { name: m.message.message, exact: true }).getAttribute('placeholder'),
        m.askAnythingEnterSendsShiftEnter.message);
      await panel.getByRole('tab', { name: m.task.message, exact: true }).click();
      await panel.getByRole('button', { name: m.startTask.message, exact: true }).waitFor();
      // None of those English labels is left on screen.
      const shown = await panel.locator('body').innerText();
      for (const key of ['saveConversation', 'clearConversation', 'send', 'startTask', 'debug']) {
        assert.ok(!shown.includes(en[key].message) || m[key].message === en[key].message, `"${en[key].message}" is still shown in ${lang}`);
      }
      // Nothing cut off at 320 px: no button wider than its box.
      const cut = await panel.evaluate(() => [...document.querySelectorAll('button, label, [role="tab"]')]
        .filter((el) => el.offsetParent && el.scrollWidth > el.clientWidth + 1)
        .map((el) => el.textContent.trim()));
      assert.deepEqual(cut, [], `cut off at 320 px in ${lang}`);
      // The extension's name and toolbar title as Chrome shows them.
      const worker = browser.serviceWorker;
      assert.equal(await worker.evaluate(() => chrome.runtime.getManifest().description), m.extDescription.message);
      assert.equal(await panel.evaluate(() => chrome.action.getTitle({})), m.actionTitle.message);
    });
  });
}

test('--lang=ar (no catalog yet): the panel is laid out right to left', async () => {
  await withPanel('ar', async (panel) => {
    assert.equal(await panel.getAttribute('html', 'dir'), 'rtl');
    await panel.getByRole('button', { name: 'Back to conversation' }).click();
    const message = panel.getByRole('textbox', { name: 'Message' });
    assert.equal(await message.evaluate((el) => getComputedStyle(el).direction), 'rtl');
    // Right to left: "Save conversation" (first in the toolbar) sits right of "Clear conversation".
    const first = await panel.getByRole('button', { name: 'Save conversation' }).boundingBox();
    const second = await panel.getByRole('button', { name: 'Clear conversation' }).boundingBox();
    assert.ok(first.x > second.x, `right to left: ${JSON.stringify({ first, second })}`);
  });
});
