// A tool provider in the language Chrome speaks: Chromium launched with --lang=de and
// --lang=ja beside the example provider (Tandem Tabs). Its approval question, the Tools rows
// that follow Allow, and a tool call in chat (the question before it runs, its card and the
// result line) are the catalog's sentences in that language; the provider's own words (its
// name, its tools' names and labels) stay as it gave them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension, TABS_PROVIDER_DIR, TANDEM_ID } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { routeSite } from './lib/fixtures.mjs';
import { assertNoEnglish, catalog, fill, pattern, useMock } from './lib/languages.mjs';

const ORIGIN = 'https://werkzeug.tandem.test';

for (const lang of ['de', 'ja']) {
  test(`--lang=${lang}: a provider's approval question, its Tools rows and a tool call's question and card are in ${lang}`, async () => {
    const [m, en] = [await catalog(lang), await catalog('en')];
    const mock = await startMockProvider({ delayMs: 0 });
    const browser = await launchExtension({ lang, extensionId: TANDEM_ID, others: [TABS_PROVIDER_DIR] });
    try {
      await routeSite(browser.context, { origin: ORIGIN, routes: { '/': '<!doctype html><title>Seite</title><p>Hallo</p>' } });
      const panel = await browser.openPanel({ width: 320 });

      // The provider asks first: the question names it and its tools in the person's words.
      const approval = panel.getByRole('group', { name: m.toolProvider, exact: true });
      await approval.waitFor();
      const asked = (await panel.locator('#tool-approval-text').innerText()).trim();
      assert.match(asked, pattern(m.provAsks), asked);
      assert.ok(asked.includes(fill(m.provNTools, '4')), asked);
      assert.ok(asked.includes('tab.open'), asked);
      assertNoEnglish(en, m, ['provAsks', 'provNTools'], asked, lang);
      await approval.getByRole('button', { name: m.allow, exact: true }).click();
      await approval.waitFor({ state: 'hidden' });

      // Settings (open at the first run): the provider's rows name each tool's policy control
      // in that language (the provider's name followed by the start of its id).
      const policy = new RegExp(`^${m.toolsPolicyOf.replace('$1', 'tab\\.open').replace('$2', 'Tandem Tabs \\(.+\\)')}$`);
      await panel.getByRole('combobox', { name: policy }).waitFor();
      await useMock(panel, m, mock, { noTools: false });

      // Tool calls in chat: tab.list runs at once (it only reads), its card and result line;
      // then tab.open asks first, in the answer, and runs on Approve.
      mock.setDefault({ reply: 'ok', delayMs: 0 });
      const probe = mock.waitForRequest((r) => (r.tools ?? []).length > 0);
      await panel.getByRole('tab', { name: m.chat, exact: true }).click();
      const box = panel.getByRole('textbox', { name: m.message, exact: true });
      await box.fill('Hallo?');
      await box.press('Enter');
      const names = (await probe).tools;
      const [listName, openName] = ['tab_list', 'tab_open'].map((n) => names.find((t) => t.endsWith(n)));
      assert.ok(listName && openName, names.join(', '));
      const idle = () => panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
      await idle();

      mock.reset();
      mock.script({ toolCall: { name: listName, arguments: {} } });
      mock.setDefault({ reply: 'Eine Seite.', delayMs: 0 });
      await box.fill('Welche Tabs?');
      await box.press('Enter');
      const listed = panel.getByRole('article', { name: 'Tandem' }).last();
      await listed.getByText('Eine Seite.').waitFor({ timeout: 15_000 });
      await idle();
      const card = listed.getByRole('group', { name: fill(m.cardToolCall, 'List tabs'), exact: true });
      const line = (await card.getByLabel(m.cardResult, { exact: true }).innerText()).trim();
      assert.match(line, pattern(m.cardDone), line);
      const shown = `${asked}\n${await card.innerText()}`;
      assertNoEnglish(en, m, ['cardDone', 'cardResult', 'toolCardFrom', 'provAsks', 'provNoArguments'], shown, lang);

      mock.reset();
      mock.script({ toolCall: { name: openName, arguments: { url: `${ORIGIN}/` } } });
      mock.setDefault({ reply: 'Offen.', delayMs: 0 });
      const back = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 20_000);
      await box.fill('Öffne die Seite.');
      await box.press('Enter');
      const question = panel.getByRole('article', { name: 'Tandem' }).last()
        .getByRole('group', { name: fill(m.cardRunAsk, 'Open a tab'), exact: true });
      await question.waitFor({ timeout: 15_000 });
      const buttons = await question.getByRole('button').allInnerTexts();
      assert.deepEqual(buttons.map((b) => b.trim()), [m.approve, m.deny]);
      await question.getByRole('button', { name: m.approve, exact: true }).click();
      assert.equal((await back).toolResults[0].isError, false);
    } finally {
      await browser.close();
      await mock.close();
    }
  });
}
