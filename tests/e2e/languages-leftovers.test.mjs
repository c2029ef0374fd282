// English left behind in a translated panel, found by a check rather than by eye: in each of
// the five other languages, every view of the panel is opened (the first run's Settings, the
// conversation, Task, Workflows, Debug) and every piece of text a person reads or hears (text on
// screen, accessible names, placeholders, titles) is compared with the English catalog. A piece
// equal to an English sentence whose translation in that language differs is a leftover: the
// panel shows English where the catalog has the person's words. Names of products and
// providers are the same in every catalog, so they never count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { catalog } from './lib/languages.mjs';

const en = await catalog('en');

/** What the open views of `panel` show or say: visible text pieces and the names of controls. */
const shownWords = (panel) => panel.evaluate(() => {
  const out = new Set();
  const visible = (el) => el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const t = n.textContent.trim();
    if (t && visible(n.parentElement)) out.add(t);
  }
  for (const el of document.querySelectorAll('[aria-label], [placeholder], [title]')) {
    if (el.closest('[hidden]')) continue;
    for (const attr of ['aria-label', 'placeholder', 'title']) {
      const t = el.getAttribute(attr)?.trim();
      if (t) out.add(t);
    }
  }
  return [...out];
});

for (const lang of ['de', 'es', 'fr', 'ja', 'zh_CN']) {
  test(`--lang=${lang}: no view of the panel shows an English sentence the ${lang} catalog translates`, async () => {
    const m = await catalog(lang);
    // English sentence → the keys that carry it, where this language says something else.
    const translated = new Map();
    for (const [key, english] of Object.entries(en)) {
      if (/\$\d/.test(english) || !m[key] || m[key] === english) continue;
      translated.set(english, [...(translated.get(english) ?? []), key]);
    }
    const browser = await launchExtension({ lang: lang.replace('_', '-') });
    const found = new Map();
    const look = async (view) => {
      for (const words of await shownWords(panel)) {
        if (translated.has(words)) found.set(words, `${view} (${translated.get(words).join(', ')})`);
      }
    };
    let panel;
    try {
      panel = await browser.openPanel();
      const settings = panel.getByRole('region', { name: m.settings });
      await settings.waitFor();
      await look('Settings');
      await settings.getByRole('button', { name: m.backToConversation }).click();
      await look('the conversation');
      await panel.getByRole('tab', { name: m.task, exact: true }).click();
      await look('Task');
      await panel.locator('#workflows-toggle').click();
      await panel.locator('#workflows').waitFor();
      await look('Workflows');
      await panel.locator('#workflows-close').click();
      await panel.locator('#debug-toggle').click();
      await look('Debug');
    } finally {
      await browser.close();
    }
    assert.deepEqual([...found].map(([words, where]) => `"${words}" in ${where}`), [], `English left in ${lang}`);
  });
}
