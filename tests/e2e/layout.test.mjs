// The panel's layout (issue #13): Settings as a view of its own that Save closes with a
// "Saved" toast, Chat and Task as two modes of one composer, the conversation taking the
// height, "Save conversation" downloading Markdown, and screenshots at 360 px in light and
// dark with a Markdown answer (saved under test-output/, looked at by a person).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { closeSettings, openChatMode, openSettings, openTaskMode, saveSettings, settingsView } from './lib/panel.mjs';
import { panelSuite } from './lib/suites.mjs';

const KEY = 'sk-test-layout-12345678';
let browser, mock, panel;

panelSuite({ mock: { delayMs: 0 }, ready: (env) => ({ browser, mock, panel } = env) });

const message = () => panel.getByRole('textbox', { name: 'Message' });
const lastAnswer = () => panel.getByRole('article', { name: 'Tandem' }).last();
const idle = () => panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));

async function ask(text) {
  await openChatMode(panel);
  await message().fill(text);
  await message().press('Enter');
  await idle();
}

test('Settings is its own view: the first run opens it, Save closes it and "Saved" stays as a toast', async () => {
  // First run: nothing can be sent before a provider is set, so Settings is shown, instead
  // of the conversation and its composer.
  await settingsView(panel).waitFor();
  assert.equal(await message().isVisible(), false, 'the composer is not shown beside Settings');
  assert.equal(await panel.getByRole('button', { name: 'Save conversation' }).isVisible(), false);
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label: 'OpenAI-compatible' });
  await panel.getByLabel('Base URL').fill(`${mock.url}/v1`);
  await panel.getByLabel('Model', { exact: true }).fill('gpt-layout');
  await panel.getByLabel('API key').fill(KEY);
  await panel.getByRole('button', { name: 'Save', exact: true }).click();
  const toast = panel.getByRole('status', { name: 'Settings status' });
  await toast.filter({ hasText: 'Saved.' }).waitFor();
  await settingsView(panel).waitFor({ state: 'hidden' });
  assert.equal(await toast.isVisible(), true, 'the toast stays after Settings closed');
  assert.equal(await message().isVisible(), true, 'the conversation is back');
  assert.equal(await panel.getByRole('button', { name: 'Settings', exact: true }).getAttribute('aria-expanded'), 'false');

  // "Back to conversation" and Esc leave Settings without saving; focus returns to the button.
  await panel.getByRole('button', { name: 'Settings', exact: true }).click();
  await settingsView(panel).waitFor();
  await panel.getByRole('button', { name: 'Back to conversation' }).click();
  await settingsView(panel).waitFor({ state: 'hidden' });
  await openSettings(panel);
  await panel.getByLabel('Model', { exact: true }).fill('not-saved');
  await panel.getByLabel('Model', { exact: true }).press('Escape');
  await settingsView(panel).waitFor({ state: 'hidden' });
  assert.equal(await panel.evaluate(() => document.activeElement?.textContent), 'Settings');
  const stored = await panel.evaluate(() => chrome.storage.local.get('settings'));
  assert.equal(stored.settings.providers['openai-compatible'].model, 'gpt-layout', 'Esc does not save');
});

test('settings that are not usable yet keep the view open on what to fix', async () => {
  await openSettings(panel);
  await panel.getByLabel('Model', { exact: true }).fill('');
  await panel.getByRole('button', { name: 'Save', exact: true }).click();
  await panel.getByRole('status', { name: 'Settings status' }).filter({ hasText: 'Saved, but not usable yet' }).waitFor();
  assert.equal(await settingsView(panel).isVisible(), true);
  await panel.getByLabel('Model', { exact: true }).fill('gpt-layout');
  await saveSettings(panel);
  assert.equal(await message().isVisible(), true);
});

test('Chat and Task are two modes of one composer, as tabs; the keyboard switches them', async () => {
  await closeSettings(panel);
  const chatTab = panel.getByRole('tab', { name: 'Chat', exact: true });
  const taskTab = panel.getByRole('tab', { name: 'Task', exact: true });
  assert.equal(await chatTab.getAttribute('aria-selected'), 'true');
  assert.equal(await message().isVisible(), true);
  assert.equal(await panel.getByRole('textbox', { name: 'Task' }).isVisible(), false, 'one box at a time');
  await taskTab.click();
  assert.equal(await taskTab.getAttribute('aria-selected'), 'true');
  assert.equal(await panel.getByRole('textbox', { name: 'Task' }).isVisible(), true);
  assert.equal(await panel.getByRole('button', { name: 'Start task' }).isVisible(), true);
  assert.equal(await message().isVisible(), false);
  // Arrow keys move between the tabs (ARIA tabs pattern) and take the focus along.
  await taskTab.focus();
  await panel.keyboard.press('ArrowLeft');
  assert.equal(await chatTab.getAttribute('aria-selected'), 'true');
  assert.equal(await message().isVisible(), true);
  assert.equal(await panel.evaluate(() => document.activeElement?.textContent), 'Chat');
  await panel.keyboard.press('ArrowRight');
  assert.equal(await taskTab.getAttribute('aria-selected'), 'true');
  // An empty task is refused with a notice the user can see from the Task mode.
  await panel.getByRole('button', { name: 'Start task' }).click();
  await panel.getByRole('status', { name: 'Task notice' }).filter({ hasText: 'Type a task first.' }).waitFor();
  await openChatMode(panel);
  assert.equal(await message().isVisible(), true);
});

test('the conversation gets the height: the composer is at the bottom and the log fills the rest', async () => {
  await openChatMode(panel);
  await panel.getByRole('region', { name: 'Current task' }).waitFor({ state: 'hidden' });
  const box = await panel.evaluate(() => {
    const h = (sel) => document.querySelector(sel).getBoundingClientRect().height;
    return {
      main: h('main'), composer: h('.composer'), header: h('.bar'), toolbar: h('#conversation-actions'),
      toast: h('#settings-status'), composerBottom: document.querySelector('.composer').getBoundingClientRect().bottom,
      height: innerHeight,
    };
  });
  assert.ok(Math.abs(box.composerBottom - box.height) <= 1, `composer at the bottom: ${JSON.stringify(box)}`);
  assert.ok(box.main >= box.height - box.header - box.toolbar - box.toast - box.composer - 8,
    `the conversation takes what the header, toolbar and composer leave: ${JSON.stringify(box)}`);
  assert.ok(box.main > box.height / 2, `the conversation has most of the panel: ${JSON.stringify(box)}`);
});

test('"Save conversation" downloads the conversation as Markdown', async () => {
  mock.script({ reply: 'Paris is the **capital**.\n\n- one\n- two\n' });
  await ask('What is the capital of France?');
  const [download] = await Promise.all([
    panel.waitForEvent('download'),
    panel.getByRole('button', { name: 'Save conversation' }).click(),
  ]);
  assert.match(download.suggestedFilename(), /^tandem-.*\d{4}-\d{2}-\d{2}\.md$/);
  const text = await readFile(await download.path(), 'utf8');
  assert.match(text, /^# Conversation with Tandem\n/);
  assert.match(text, /- Saved: \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
  assert.match(text, /## You\n\nWhat is the capital of France\?\n/);
  assert.match(text, /## Tandem\n\nParis is the \*\*capital\*\*\.\n\n- one\n- two\n/, 'the answer\'s Markdown source');
  assert.match(text, /_via OpenAI-compatible_/);
  assert.ok(text.indexOf('## You') < text.indexOf('## Tandem'));
  assert.ok(!text.includes(KEY));
});

test('"Save conversation" with nothing to save says so and downloads nothing', async () => {
  await panel.getByRole('button', { name: 'Clear conversation' }).click();
  await panel.getByRole('article').first().waitFor({ state: 'detached' });
  let downloaded = false;
  const onDownload = () => { downloaded = true; };
  panel.on('download', onDownload);
  await panel.getByRole('button', { name: 'Save conversation' }).click();
  await panel.getByRole('alert').filter({ hasText: 'nothing to save yet' }).waitFor();
  panel.off('download', onDownload);
  assert.equal(downloaded, false);
});

const MARKDOWN = [
  '## Packing list',
  '',
  'Here is what to take, with **one** warning and `inline code`:',
  '',
  '- a blue backpack',
  '- a water bottle that keeps drinks cold for a whole day of walking in the sun',
  '',
  '| Item | Weight | Where to buy it in the city centre |',
  '| --- | ---: | --- |',
  '| Backpack | 1.2 kg | The outdoor shop on the main square, next to the station |',
  '| Bottle | 0.3 kg | Anywhere |',
  '',
  '```js',
  'const packingList = items.filter((item) => item.weightKg < 2 && item.isNeededForTheTrip).map((item) => item.name);',
  '```',
  '',
  'Have a good trip.',
].join('\n');

for (const scheme of ['light', 'dark']) {
  test(`screenshot at 360 px, ${scheme}: a Markdown answer fits the panel's width`, async () => {
    await panel.setViewportSize({ width: 360, height: 720 });
    await panel.emulateMedia({ colorScheme: scheme });
    await panel.getByRole('button', { name: 'Clear conversation' }).click();
    mock.script({ reply: MARKDOWN });
    await ask('What should I pack?');
    const answer = lastAnswer();
    await answer.getByRole('table').waitFor();
    await answer.locator('pre').waitFor();
    const file = await browser.screenshot(panel, `layout-360-${scheme}`);
    const seen = await panel.evaluate(() => {
      const right = (sel) => document.querySelector(sel).getBoundingClientRect().right;
      const bubble = [...document.querySelectorAll('article')].at(-1);
      return {
        width: innerWidth,
        scrollWidth: document.documentElement.scrollWidth,
        bodyScroll: document.body.scrollWidth,
        mainScroll: document.querySelector('main').scrollWidth,
        mainWidth: document.querySelector('main').clientWidth,
        bubble: bubble.getBoundingClientRect().right,
        pre: right('article:last-of-type pre'),
        table: right('article:last-of-type .table-wrap'),
        bg: getComputedStyle(document.body).backgroundColor,
      };
    });
    assert.ok(seen.scrollWidth <= seen.width && seen.bodyScroll <= seen.width, `no horizontal scroll of the panel: ${JSON.stringify(seen)}`);
    assert.ok(seen.mainScroll <= seen.mainWidth, `the conversation does not overflow sideways: ${JSON.stringify(seen)}`);
    for (const what of ['bubble', 'pre', 'table']) {
      assert.ok(seen[what] <= seen.width, `the ${what} is within the panel's width (${file}): ${JSON.stringify(seen)}`);
    }
    // The page follows the colour scheme: dark background in dark, light in light.
    const [r, g, b] = seen.bg.match(/\d+/g).map(Number);
    const light = (r + g + b) / 3 > 128;
    assert.equal(light, scheme === 'light', `background ${seen.bg} in ${scheme}`);
    // The conversation's actions sit on one line above it at this width.
    const tops = await panel.getByRole('toolbar', { name: 'Conversation actions' }).getByRole('button')
      .evaluateAll((bs) => bs.map((b) => Math.round(b.getBoundingClientRect().top)));
    assert.equal(new Set(tops).size, 1, `one row of conversation actions: ${tops}`);
    // The long code line scrolls inside its block rather than widening the panel.
    assert.ok(await answer.locator('pre').evaluate((pre) => pre.scrollWidth > pre.clientWidth), 'the code block scrolls sideways');
  });
}

test('screenshot at 320 px with Settings open, and Task mode at 480 px', async () => {
  await panel.emulateMedia({ colorScheme: 'light' });
  await panel.setViewportSize({ width: 320, height: 720 });
  await openSettings(panel);
  await browser.screenshot(panel, 'layout-320-settings');
  const over = await panel.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  assert.ok(over <= 0, `Settings fits 320 px (${over} px too wide)`);
  await closeSettings(panel);
  await panel.setViewportSize({ width: 480, height: 720 });
  await panel.emulateMedia({ colorScheme: 'dark' });
  await openTaskMode(panel);
  await browser.screenshot(panel, 'layout-480-task-dark');
  assert.ok(await panel.evaluate(() => document.documentElement.scrollWidth <= innerWidth));
});
