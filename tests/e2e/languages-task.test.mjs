// A task in the language Chrome speaks: Chromium launched with --lang=de and --lang=ja runs a
// short task with the mock model on a page in that language. The step lines, Tandem's question
// before its first action on the site, the toolbar's title while it waits, and the task's
// Done line are the catalog's sentences in that language (found by their translated text,
// with the page's and the model's words filled in), no English word of those sentences is
// left, and nothing is cut off in a 320 px panel. The model is asked to write in the
// language of the task; Tandem's prompts stay English.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { catalog, englishWords, fill, startTask, useMock } from './lib/languages.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { routeSite } from './lib/fixtures.mjs';
import { elements, find } from './lib/scripted-shopper.mjs';
import { scriptedModel } from './lib/agent-harness.mjs';

const ORIGIN = 'https://laden.tandem.test';
const HOST = new URL(ORIGIN).host;

const WORLD = {
  de: {
    page: `<!doctype html><html lang="de"><title>Laden</title><h1>Laden</h1>
<button type="button" onclick="document.getElementById('aus').textContent = 'Weiter gedrückt'">Weiter</button>
<p id="aus"></p><input type="text"><div style="height: 2000px"></div><p>Ende.</p></html>`,
    task: 'Gib im Laden den Namen Sergio ein.',
    button: 'Weiter',
    plan: '1. Weiter drücken 2. Namen eingeben',
    answer: 'Der Name Sergio steht im Feld.',
  },
  ja: {
    page: `<!doctype html><html lang="ja"><title>お店</title><h1>お店</h1>
<button type="button" onclick="document.getElementById('out').textContent = '押されました'">次へ</button>
<p id="out"></p><input type="text"><div style="height: 2000px"></div><p>終わり。</p></html>`,
    task: 'お店の入力欄に Sergio と入力して。',
    button: '次へ',
    plan: '1. 次へを押す 2. 名前を入力する',
    answer: '入力欄に Sergio と入力しました。',
  },
};

for (const lang of ['de', 'ja']) {
  test(`--lang=${lang}: a task's steps, its site question, the toolbar's title and its Done line come from the ${lang} catalog`, async () => {
    const [m, en] = [await catalog(lang), await catalog('en')];
    const world = WORLD[lang];
    const mock = await startMockProvider({ delayMs: 0 });
    const browser = await launchExtension({ lang });
    try {
      await routeSite(browser.context, { origin: ORIGIN, routes: { '/': world.page } });
      const panel = await browser.openPanel({ width: 320 });
      // Settings as a person in that language sees them (the first run opens them).
      await useMock(panel, m, mock);

      const turns = [];
      const script = [
        (els) => ({ action: 'click', element: find(els, (e) => e.name === world.button).id }),
        (els, turn) => ({ action: 'type', element: Number(turn.match(/^\[(\d+)\]\*? textbox\b/m)?.[1]), text: 'Sergio' }),
        () => ({ action: 'scroll', direction: 'down' }),
      ];
      let n = 0;
      mock.setDefault(scriptedModel({
        turns,
        planner: (turn) => ({ plan: world.plan, complete: /navigator says the task is done/.test(turn) }),
        navigator: (turn) => {
          const next = script[n];
          if (!next) return { action: 'done', success: true, answer: world.answer };
          n += 1;
          return next(elements(turn), turn);
        },
      }));

      const tab = await startTask(browser, panel, m, `${ORIGIN}/`, world.task);

      // Tandem's own question before its first click on the site, in the person's language;
      // the toolbar says what waits, in that language too (the worker's catalog).
      const site = panel.getByRole('group', { name: m.siteAccess, exact: true });
      await site.waitFor({ timeout: 20_000 });
      const question = fill(m.askSite, HOST);
      assert.equal((await site.innerText()).split('\n')[0].trim(), question);
      const title = await panel.evaluate(() => chrome.action.getTitle({}));
      assert.equal(title, fill(m.badgeWaiting, fill(m.waitSite, HOST)));
      for (const word of englishWords(en, m, ['askSite', 'badgeWaiting', 'waitSite'])) {
        assert.ok(!new RegExp(`\\b${word}\\b`).test(`${question} ${title}`), `"${word}" left in ${question} / ${title}`);
      }
      await cutOff(panel, lang);
      await site.getByRole('button', { name: m.allowOnce, exact: true }).click();

      // Done, in the catalog's words.
      const status = panel.getByRole('status', { name: m.taskStatus, exact: true });
      const done = fill(m.taskStatusReason, m.taskDone, m.taskComplete);
      await status.filter({ hasText: done }).waitFor({ timeout: 30_000 });
      assert.equal((await status.innerText()).trim(), done);

      const list = panel.getByRole('list', { name: m.steps, exact: true });
      const shown = (await list.innerText()).split('\n').map((l) => l.trim()).filter(Boolean);
      // The planner plans, looks again after three actions, and checks the navigator's done.
      assert.deepEqual(shown, [
        fill(m.stepPlan, world.plan),
        fill(m.stepClicked, world.button),
        fill(m.stepTyped, 'Sergio', m.theTextField),
        m.stepScrolledDown,
        fill(m.stepPlan, world.plan),
        fill(m.stepFinishedWith, world.answer),
        m.stepCheckedComplete,
      ], shown.join('\n'));
      const keys = ['stepPlan', 'stepClicked', 'stepTyped', 'theTextField', 'stepScrolledDown', 'stepFinishedWith', 'stepCheckedComplete', 'taskStatusReason', 'taskDone', 'taskComplete'];
      const text = `${shown.join('\n')}\n${await status.innerText()}`;
      for (const word of englishWords(en, m, keys)) {
        assert.ok(!new RegExp(`\\b${word}\\b`).test(text), `"${word}" is still shown in ${lang}:\n${text}`);
      }
      // The control is emphasised in its own words, what was typed too.
      const clicked = list.getByRole('listitem').filter({ hasText: fill(m.stepClicked, world.button) });
      assert.equal(await clicked.locator('strong').innerText(), world.button);
      const typed = list.getByRole('listitem').filter({ hasText: 'Sergio' });
      assert.equal(await typed.locator('em').innerText(), 'Sergio');
      assert.equal(await typed.locator('strong').innerText(), m.theTextField);
      await cutOff(panel, lang);

      // The page saw the click and the typing; the prompts stayed English and asked the model
      // to write in the language of the task.
      assert.equal(await tab.locator('input').inputValue(), 'Sergio');
      const system = JSON.stringify(mock.requests.at(-1)?.body?.messages?.[0] ?? '');
      assert.match(system, /in the language of the user's task/, system.slice(0, 400));
      assert.ok(turns.every((t) => /^ROLE: (PLANNER|NAVIGATOR)/.test(t)), 'the turns are Tandem\'s English prompts');
    } finally {
      await browser.close();
      await mock.close();
    }
  });
}

// A page's form that posts to a site the task did not name: the firewall's question is the
// German catalog's sentence, with the host, the method and the field's value as the page
// gives them (never translated); Deny keeps the collector empty.
test('--lang=de: the question before a form posts to another site is German, with the host as given; so are the Workflows view\'s status lines', async () => {
  const [m, en] = [await catalog('de'), await catalog('en')];
  const COLLECT = 'https://sammeln.fremd.test';
  const OTHER = new URL(COLLECT).host;
  const EMAIL = 'ada@example.com';
  const mock = await startMockProvider({ delayMs: 0 });
  const browser = await launchExtension({ lang: 'de' });
  try {
    await routeSite(browser.context, { origin: ORIGIN, routes: { '/': `<!doctype html><html lang="de"><title>Newsletter</title>
<h1>Newsletter</h1><form action="${COLLECT}/anmelden" method="post">
<label>E-Mail <input name="email" type="email" value="${EMAIL}"></label><button>Anmelden</button></form></html>` } });
    const collector = await routeSite(browser.context, { origin: COLLECT, routes: { '/anmelden': '<p>ok</p>' } });
    const panel = await browser.openPanel({ width: 320 });
    await useMock(panel, m, mock);

    mock.setDefault(scriptedModel({
      planner: (turn) => ({ plan: '1. Anmelden drücken', complete: /navigator says the task is done/.test(turn) }),
      navigator: (turn) => (/you denied|refused/.test(turn)
        ? { action: 'done', success: false, answer: 'Nicht angemeldet.' }
        : { action: 'click', element: find(elements(turn), (e) => e.name === 'Anmelden').id }),
    }));

    const tab = await browser.context.newPage();
    await tab.goto(`${ORIGIN}/`);
    await tab.bringToFront();
    await panel.getByRole('tab', { name: m.task, exact: true }).click();
    await panel.getByRole('textbox', { name: m.task, exact: true }).fill('Melde mich beim Newsletter an.');
    await panel.getByRole('button', { name: m.startTask, exact: true }).click();
    const site = panel.getByRole('group', { name: m.siteAccess, exact: true });
    await site.waitFor({ timeout: 20_000 });
    await site.getByRole('button', { name: m.allowOnce, exact: true }).click();

    const approval = panel.getByRole('group', { name: m.approvalNeeded, exact: true });
    await approval.waitFor({ timeout: 20_000 });
    const shown = (await approval.locator('#task-confirm-text').innerText()).trim();
    const expected = fill(m.effectSubmitQuestion, OTHER, fill(m.effectClickSubmits, fill(m.seenButton, 'Anmelden')),
      OTHER, 'POST', `email = “${EMAIL}”`);
    assert.equal(shown, expected);
    assert.ok(shown.startsWith(`Dieses Formular an ${OTHER} senden?`), shown);
    for (const word of englishWords(en, m, ['effectSubmitQuestion', 'effectClickSubmits', 'seenButton'])) {
      assert.ok(!new RegExp(`\\b${word}\\b`).test(shown), `"${word}" left in ${shown}`);
    }
    await cutOff(panel, 'de');
    assert.deepEqual(collector.requests, [], 'nothing reached the other site before the answer');
    await approval.getByRole('button', { name: m.deny, exact: true }).click();
    const status = panel.getByRole('status', { name: m.taskStatus, exact: true });
    await status.filter({ hasText: new RegExp(`^(${m.taskDone}|${m.taskFailed})`) }).waitFor({ timeout: 30_000 });
    assert.deepEqual(collector.requests, [], 'the other site received nothing');
    assert.equal(new URL(tab.url()).host, HOST);

    // A step's details say how the model was asked, in German too, under a German summary.
    const steps = panel.getByRole('list', { name: m.steps, exact: true });
    const details = steps.locator('details').first();
    await details.locator('summary').click();
    const modes = (await details.locator('.step-detail').allInnerTexts()).filter((t) => t.startsWith(m.outputMode.split('$1')[0]));
    assert.equal(modes.length, 1, (await details.innerText()));
    assert.ok(!/Output mode|the provider/.test(modes[0]), modes[0]);

    // The Workflows view's status lines: a file imported, the entry's last run and schedule,
    // then Delete, each the catalog's German sentence with the workflow's own name.
    const flow = { id: 'wf-de', name: 'Hut finden', goal: 'Finde einen Hut', startUrl: `${ORIGIN}/`,
      steps: [{ action: { navigate: { url: `${ORIGIN}/` } }, page: '' }] };
    await panel.locator('#workflows-toggle').click();
    const view = panel.locator('#workflows');
    await view.waitFor();
    const line = panel.locator('#workflows-status');
    // Files refused, each with the reason in German: not text, then a workflow whose start
    // address is not a web address (the check names the workflow and what is wrong).
    const refused = async (name, buffer, sentence) => {
      await panel.locator('#workflows-import').setInputFiles({ name, mimeType: 'application/json', buffer });
      await line.filter({ hasText: sentence }).waitFor({ timeout: 10_000 });
      assert.equal((await line.innerText()).trim(), sentence);
    };
    await refused('kaputt.json', Buffer.from([0xff, 0xfe, 0x00]), fill(m.wfImportRefused, m.wfImportNotText));
    await refused('js.json', Buffer.from(JSON.stringify([{ ...flow, startUrl: 'javascript:alert(1)' }])),
      fill(m.wfImportRefusedCheck, fill(m.wfCheckNamed, flow.name, fill(m.wfCheckStartUrl, m.wfNotWebUrl))));
    await panel.locator('#workflows-import').setInputFiles({ name: 'hut.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify([flow])) });
    await line.filter({ hasText: m.workflowImportedOne }).waitFor({ timeout: 10_000 });
    assert.equal((await line.innerText()).trim(), m.workflowImportedOne);
    const entry = view.getByRole('listitem').filter({ hasText: flow.name });
    const said = await entry.innerText();
    assert.ok(said.includes(m.workflowNotRun), said);
    assert.ok(said.includes(m.workflowRunsByHand), said);
    assert.ok(!said.includes('Not run yet') && !said.includes('Runs only when'), said);
    await entry.getByRole('button', { name: fill(m.wfDeleteNamed, flow.name), exact: true }).click();
    await line.filter({ hasText: fill(m.workflowDeleted, flow.name) }).waitFor({ timeout: 10_000 });
  } finally {
    await browser.close();
    await mock.close();
  }
});

/** Nothing in the task card is cut off: no element's text wider than its box at 320 px. */
async function cutOff(panel, lang) {
  const cut = await panel.evaluate(() => [...document.querySelectorAll('#task-mode *')]
    .filter((el) => el.offsetParent && el.children.length === 0 && el.scrollWidth > el.clientWidth + 1
      && getComputedStyle(el).overflowX !== 'auto' && getComputedStyle(el).overflowX !== 'scroll')
    .map((el) => `${el.tagName} ${el.textContent.trim()}`));
  assert.deepEqual(cut, [], `cut off at 320 px in ${lang}`);
}
