// English left behind in a translated panel, found by a check rather than by eye: every view
// of the panel is opened (the first run's Settings, the conversation, Task, Workflows, Debug)
// in English and in each of the five other languages, and every piece of text a person reads
// or hears there (text on screen, accessible names, placeholders, titles) is compared. A piece
// the English panel shows in the same view and the translated one shows too is a leftover
// (static HTML never bound to the catalog, a sentence built in English), unless every catalog
// spells it alike (names of products and providers).
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

/** Every view of the panel opened in turn, in Chrome's language `lang`: view → what it shows. */
async function viewsIn(lang, m) {
  const browser = await launchExtension({ lang: lang.replace('_', '-') });
  const views = {};
  try {
    const panel = await browser.openPanel();
    const look = async (view) => { views[view] = await shownWords(panel); };
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
  return views;
}

const english = await viewsIn('en', en);

for (const lang of ['de', 'es', 'fr', 'ja', 'zh_CN']) {
  test(`--lang=${lang}: no view of the panel shows English words the ${lang} panel should translate`, async () => {
    const m = await catalog(lang);
    // Words every catalog spells alike (Tandem, Gemini Nano, OpenAI-compatible, a URL) are no
    // leftover; neither is anything without letters.
    const same = new Set(Object.keys(en).filter((k) => m[k] === en[k]).map((k) => en[k]));
    const views = await viewsIn(lang, m);
    const found = [];
    for (const [view, words] of Object.entries(views)) {
      const shownInEnglish = new Set(english[view]);
      for (const w of words) {
        if (!shownInEnglish.has(w) || same.has(w) || !/\p{L}{2,}/u.test(w) || /^https?:\/\/\S+$/.test(w)) continue;
        found.push(`${view}: "${w}"`);
      }
    }
    assert.deepEqual(found, [], `English left in ${lang}`);
  });
}
