// Why a step failed, in the language Chrome speaks: Chromium launched with --lang=de and
// --lang=ja runs a task whose clicks the page refuses (a disabled button, a read-only field),
// and a saved workflow whose button the page no longer has. The failed steps' lines, the
// replay's divergence line and the workflow's last run in the Workflows view are the
// catalog's sentences in that language, with the page's words filled in, and no English word
// of those sentences is left. The model still reads the English results.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { assertNoEnglish, catalog, fill, startTask, useMock } from './lib/languages.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { routeSite } from './lib/fixtures.mjs';
import { elements, find } from './lib/scripted-shopper.mjs';
import { scriptedModel } from './lib/agent-harness.mjs';

const ORIGIN = 'https://kasse.tandem.test';
const HOST = new URL(ORIGIN).host;

const WORLD = {
  de: { pay: 'Prüfen', name: 'Name', buy: 'Kaufen', next: 'Weiter', task: 'Prüfe die Bestellung.', flow: 'Hut kaufen' },
  ja: { pay: '詳細を見る', name: '名前', buy: '購入', next: '次へ', task: '注文の詳細を見て。', flow: '帽子を買う' },
};

const page = (w, lang) => `<!doctype html><html lang="${lang}"><title>${w.pay}</title><h1>${w.pay}</h1>
<button type="button" disabled>${w.pay}</button>
<label>${w.name} <input type="text" readonly value="Ada"></label>
<button type="button">${w.next}</button></html>`;

/**
 * Chromium speaking `lang` with Tandem, the page at ORIGIN, a mock provider, and the panel at
 * 320 px with Settings filled in that language; then `body({ browser, panel, mock, m, en, w })`,
 * and everything closed.
 */
async function inLanguage(lang, body) {
  const [m, en] = [await catalog(lang), await catalog('en')];
  const w = WORLD[lang];
  const mock = await startMockProvider({ delayMs: 0 });
  const browser = await launchExtension({ lang });
  try {
    await routeSite(browser.context, { origin: ORIGIN, routes: { '/': page(w, lang) } });
    const panel = await browser.openPanel({ width: 320 });
    await useMock(panel, m, mock);
    await body({ browser, panel, mock, m, en, w });
  } finally {
    await browser.close();
    await mock.close();
  }
}

/** The lines of the Steps list, each a step's sentence (its details closed). */
async function stepLines(panel, m) {
  const list = panel.getByRole('list', { name: m.steps, exact: true });
  return (await list.innerText()).split('\n').map((l) => l.trim()).filter(Boolean);
}

for (const lang of ['de', 'ja']) {
  test(`--lang=${lang}: a click on a disabled button and typing into a read-only field say why in ${lang}; the model reads the English`, () => inLanguage(lang, async ({ browser, panel, mock, m, en, w }) => {
    const turns = [];
    let n = 0;
    const script = [
      (els) => ({ action: 'click', element: find(els, (e) => e.role === 'button' && e.name === w.pay).id }),
      (els, turn) => ({ action: 'type', element: Number(turn.match(/^\[(\d+)\]\*? textbox\b/m)?.[1]), text: 'Sergio' }),
    ];
    mock.setDefault(scriptedModel({
      turns,
      planner: (turn) => ({ plan: '1. 2.', complete: /navigator says the task is done/.test(turn) }),
      navigator: (turn) => {
        const next = script[n];
        if (!next) return { action: 'done', success: true, answer: 'OK' };
        n += 1;
        return next(elements(turn), turn);
      },
    }));

    const tab = await startTask(browser, panel, m, `${ORIGIN}/`, w.task);
    const site = panel.getByRole('group', { name: m.siteAccess, exact: true });
    await site.waitFor({ timeout: 20_000 });
    assert.equal((await site.innerText()).split('\n')[0].trim(), fill(m.askSite, HOST));
    await site.getByRole('button', { name: m.allowOnce, exact: true }).click();

    const status = panel.getByRole('status', { name: m.taskStatus, exact: true });
    await status.filter({ hasText: new RegExp(`^(${m.taskDone}|${m.taskFailed})`) }).waitFor({ timeout: 30_000 });
    const lines = await stepLines(panel, m);
    assert.equal((await status.innerText()).trim(), fill(m.taskStatusReason, m.taskDone, m.taskComplete),
      `${lines.join('\n')}\n${turns.at(-1)}`);
    const click = fill(m.stepNotClick, w.pay, m.whyDisabled);
    const type = fill(m.stepNotType, 'Sergio', w.name, m.whyReadOnly);
    assert.ok(lines.includes(click), `${click}\nnot in\n${lines.join('\n')}`);
    assert.ok(lines.includes(type), `${type}\nnot in\n${lines.join('\n')}`);
    assertNoEnglish(en, m, ['stepNotClick', 'whyDisabled', 'stepNotType', 'whyReadOnly'], `${click}\n${type}`, lang);
    // Nothing of the driver's own words is left in those lines either.
    for (const line of [click, type]) assert.doesNotMatch(line, /disabled|read-only|element|field/, line);

    // A step's details say what it cost in the person's words (the tokens).
    const failed = panel.getByRole('list', { name: m.steps, exact: true }).getByRole('listitem').filter({ hasText: click });
    await failed.locator('summary').click();
    const details = await failed.locator('details').innerText();
    assert.match(details, new RegExp(fill(m.nTokens, '\\d[\\d,.]*')), details);
    if (lang === 'ja') assert.doesNotMatch(details, /\d tokens/, details);

    // The page was not changed, and the model read why in English.
    assert.equal(await tab.locator('input').inputValue(), 'Ada');
    assert.ok(turns.some((t) => /disabled: the element is disabled/.test(t)), 'the model heard the driver\'s English');
    assert.ok(turns.some((t) => /read-only/.test(t)), 'the model heard the driver\'s English');
  }));
}

for (const lang of ['de', 'ja']) {
  test(`--lang=${lang}: a workflow whose button is gone says where its replay diverged in ${lang}, on the timeline and as its last run`, () => inLanguage(lang, async ({ browser, panel, mock, m, en, w }) => {
    const turns = [];
    mock.setDefault(scriptedModel({
      turns,
      planner: (turn) => ({ plan: '1.', complete: /navigator says the task is done/.test(turn) }),
      navigator: () => ({ action: 'done', success: true, answer: 'OK' }),
    }));

    // A workflow saved when the page had a "Kaufen" button, which it has no longer.
    const flow = { id: 'wf-gone', name: w.flow, goal: w.flow, startUrl: `${ORIGIN}/`,
      steps: [{ action: 'click', page: `${HOST}/`, target: { role: 'button', tag: 'button', name: w.buy, attrs: [] } }] };
    await panel.locator('#workflows-toggle').click();
    await panel.locator('#workflows').waitFor();
    await panel.locator('#workflows-import').setInputFiles({ name: 'flow.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify([flow])) });
    await panel.locator('#workflows-status').filter({ hasText: m.workflowImportedOne }).waitFor({ timeout: 10_000 });
    await panel.locator('#workflows-toggle').click();

    const tab = await browser.context.newPage();
    await tab.goto(`${ORIGIN}/`);
    await tab.bringToFront();
    await panel.getByRole('tab', { name: m.task, exact: true }).click();
    await panel.getByRole('textbox', { name: m.task, exact: true }).fill(`/run ${w.flow}`);
    await panel.getByRole('button', { name: m.startTask, exact: true }).click();
    const status = panel.getByRole('status', { name: m.taskStatus, exact: true });
    await status.filter({ hasText: fill(m.taskStatusReason, m.taskDone, m.taskComplete) }).waitFor({ timeout: 30_000 });

    const why = fill(m.divergeNotFound, m.theButton, w.buy);
    const line = fill(m.replayTookOver, '1', why);
    const lines = await stepLines(panel, m);
    assert.ok(lines.includes(line), `${line}\nnot in\n${lines.join('\n')}`);
    assertNoEnglish(en, m, ['replayTookOver', 'divergeNotFound', 'theButton'], line, lang);
    // The model heard the replay's English.
    assert.ok(turns.some((t) => /stopped at step 1: the button “[^”]+” was not found/.test(t)), turns.join('\n---\n').slice(0, 2000));

    // The Workflows view says how the run ended, in the same words.
    await panel.locator('#workflows-toggle').click();
    const entry = panel.locator('#workflows').getByRole('listitem').filter({ hasText: w.flow });
    const outcome = `${m.taskDone}; ${fill(m.divergedTookOver, '1', why)}`;
    await entry.filter({ hasText: outcome }).waitFor({ timeout: 10_000 });
    const said = await entry.innerText();
    assert.ok(said.includes(fill(m.workflowStartsOn, HOST)), said);
    // Its controls are named in that language too, each with the workflow's name.
    for (const [word, name] of [['wfRun', 'wfRunNamed'], ['wfExport', 'wfExportNamed'], ['wfDelete', 'wfDeleteNamed'], ['wfSaveSchedule', 'wfSaveScheduleOf']]) {
      const control = entry.getByRole('button', { name: fill(m[name], w.flow), exact: true });
      assert.equal((await control.innerText()).trim(), m[word]);
    }
    assert.equal(await entry.getByRole('combobox', { name: fill(m.wfHowOften, w.flow), exact: true }).count(), 1);
    assertNoEnglish(en, m, ['divergedTookOver', 'divergeNotFound', 'theButton', 'taskDone'], said.split('\n').find((l) => l.includes(outcome)), lang);
    const stored = await panel.evaluate(() => chrome.storage.local.get('workflows').then((x) => x.workflows));
    assert.match(stored[0].lastRun.outcome, /^Done; step 1: the button “.+” was not found; the model took over from there$/, 'the English is stored beside it');
  }));
}
