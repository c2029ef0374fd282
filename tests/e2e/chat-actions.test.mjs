// Per-answer actions, in the real browser: Regenerate the last answer, Edit & resend the last
// question (the Edit button or ↑ in the empty Message box), who answered with the tokens used,
// and the stall limit set in Settings giving the question back. The panel follows a web page,
// so the worker answers from the tab's session memory: what the provider receives next shows
// whether the old pair left the worker's memory too, not only the screen. The page is served on
// an https origin the manifest does not list (routeSite), as any site a person visits.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { routeSite } from './lib/fixtures.mjs';

const KEY = 'sk-actions-test-5678';
const SITE = 'https://cats.tandem.test';
let browser, mock, site, panel, tab;

before(async () => {
  mock = await startMockProvider({ delayMs: 5 });
  browser = await launchExtension();
  site = await routeSite(browser.context, { origin: SITE, routes: { '/a': '<!doctype html><title>Cats</title><body><p>Cats are small carnivores.</p></body>' } });
  panel = await browser.openPanel();
  await configure();
  await memoryLine().filter({ hasText: 'Not remembered' }).waitFor();
  tab = await browser.context.newPage();
  await tab.goto(`${SITE}/a`);
  await showTab();
});
after(async () => {
  await browser?.close();
  await mock?.close();
  await site?.close();
});
beforeEach(async () => {
  mock.reset();
  await panel.getByRole('button', { name: 'Clear conversation' }).click();
  await panel.waitForFunction(() => document.querySelectorAll('#messages article').length === 0);
});

const message = () => panel.getByRole('textbox', { name: 'Message' });
const memoryLine = () => panel.getByRole('status', { name: 'Memory' });
const conversation = () => panel.getByRole('log', { name: 'Conversation' });
const bubbles = (name) => conversation().getByRole('article', { name });
const texts = (name) => bubbles(name).locator('.text').allTextContents();
const idle = () => panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));

async function openSettings() {
  const settings = panel.getByRole('region', { name: 'Settings' });
  if (!(await settings.isVisible())) await panel.getByRole('button', { name: 'Settings' }).click();
}

async function saveSettings() {
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByRole('status', { name: 'Settings status' }).filter({ hasText: 'Saved' }).waitFor();
  if (await panel.getByRole('region', { name: 'Settings' }).isVisible()) {
    await panel.getByRole('button', { name: 'Settings' }).click();
  }
}

async function configure() {
  // The first run opens Settings by itself.
  await panel.waitForTimeout(200);
  await openSettings();
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label: 'OpenAI-compatible' });
  await panel.getByLabel('Base URL').fill(`${mock.url}/v1`);
  await panel.getByLabel('Model', { exact: true }).fill('gpt-actions');
  await panel.getByLabel('API key').fill(KEY);
  await saveSettings();
}

/** Brings the site's tab to the front and waits until the panel shows its conversation. */
async function showTab() {
  await tab.bringToFront();
  await memoryLine().filter({ hasText: 'Remembered for cats.tandem.test in this tab' }).waitFor();
}

const isChat = (r) => r.path === '/v1/chat/completions';
const contents = (request) => request.body.messages.map((m) => m.content);

/** Sends `text` from the panel; resolves with the request the provider received. */
async function chat(text) {
  const sent = mock.waitForRequest((r) => isChat(r) && r.body?.messages?.at(-1)?.content === text);
  await message().fill(text);
  await message().press('Enter');
  const request = await sent;
  await idle();
  return request;
}

/** Does `act` and resolves with the chat request it made, once its answer ended. */
async function nextRequestAfter(act) {
  const before = mock.requests.filter(isChat).length;
  const sent = mock.waitForRequest((r) => isChat(r) && mock.requests.filter(isChat).indexOf(r) >= before);
  await act();
  await sent;
  await idle();
  const chats = mock.requests.filter(isChat);
  assert.equal(chats.length, before + 1, 'exactly one request was sent');
  return chats.at(-1);
}

test('Regenerate asks the same question again and the fresh answer replaces the old one, on screen and in the tab\'s memory', async () => {
  await chat('Are cats small?');
  mock.script({ reply: 'first' });
  await chat('What do cats eat?');
  assert.deepEqual(await texts('Tandem'), ['You said: Are cats small?', 'first']);
  // Only the newest answer offers it.
  assert.equal(await conversation().getByRole('button', { name: 'Regenerate' }).count(), 1);
  assert.equal(await bubbles('Tandem').last().getByRole('button', { name: 'Regenerate' }).count(), 1);

  mock.script({ reply: 'second' });
  const again = await nextRequestAfter(() => bubbles('Tandem').last().getByRole('button', { name: 'Regenerate' }).click());
  assert.deepEqual(await texts('Tandem'), ['You said: Are cats small?', 'second'], 'the old answer is replaced');
  assert.deepEqual(await texts('You'), ['Are cats small?', 'What do cats eat?'], 'the question is shown once');
  const sent = contents(again);
  assert.equal(sent.filter((c) => c === 'What do cats eat?').length, 1, `the question once: ${JSON.stringify(sent)}`);
  assert.equal(sent.at(-1), 'What do cats eat?');
  assert.ok(!sent.some((c) => c.includes('first')), `the old answer is not sent: ${JSON.stringify(sent)}`);
  assert.equal(await conversation().getByRole('button', { name: 'Regenerate' }).count(), 1, 'still one, on the new answer');
  await browser.screenshot(panel, 'chat-actions-regenerated');

  const followUp = contents(await chat('And dogs?'));
  assert.ok(followUp.some((c) => c.includes('second')), `the new answer is context: ${JSON.stringify(followUp)}`);
  assert.ok(!followUp.some((c) => c.includes('first')), `the old one is not: ${JSON.stringify(followUp)}`);
  assert.equal(followUp.filter((c) => c === 'What do cats eat?').length, 1);

  // The worker's copy of the conversation says the same when the panel opens again.
  await panel.reload();
  await showTab();
  await bubbles('Tandem').nth(2).waitFor();
  assert.deepEqual(await texts('Tandem'), ['You said: Are cats small?', 'second', 'You said: And dogs?']);
});

test('Edit & resend puts the last question in the Message box; sending replaces it and its answer', async () => {
  await chat('Are cats small?');
  mock.script({ reply: 'first' });
  await chat('How big are cats?');
  assert.equal(await conversation().getByRole('button', { name: 'Edit' }).count(), 1, 'only on the newest question');
  await bubbles('You').last().getByRole('button', { name: 'Edit' }).click();
  assert.equal(await message().inputValue(), 'How big are cats?');

  await message().fill('How heavy are cats?');
  mock.script({ reply: 'second' });
  const resent = await nextRequestAfter(() => message().press('Enter'));
  const sent = contents(resent);
  assert.equal(sent.at(-1), 'How heavy are cats?');
  assert.ok(!sent.some((c) => c.includes('How big are cats?') || c.includes('first')), `the old pair is not sent: ${JSON.stringify(sent)}`);
  assert.deepEqual(await texts('You'), ['Are cats small?', 'How heavy are cats?']);
  assert.deepEqual(await texts('Tandem'), ['You said: Are cats small?', 'second']);
  assert.equal(await message().inputValue(), '');

  const followUp = contents(await chat('And dogs?'));
  assert.ok(followUp.includes('How heavy are cats?') && followUp.some((c) => c.includes('second')), JSON.stringify(followUp));
  assert.ok(!followUp.some((c) => c.includes('How big are cats?') || c.includes('first')), `the worker forgot the old pair: ${JSON.stringify(followUp)}`);
});

test('↑ in the empty Message box edits the last message; Esc gives the edit up', async () => {
  await chat('Are cats small?');
  await chat('Do cats purr?');
  await message().focus();
  await message().press('ArrowUp');
  assert.equal(await message().inputValue(), 'Do cats purr?');
  await message().press('Escape');
  assert.equal(await message().inputValue(), '', 'Esc empties the box');
  assert.deepEqual(await texts('You'), ['Are cats small?', 'Do cats purr?'], 'the conversation is as it was');

  // Typed text is not replaced by ↑.
  await message().fill('something else');
  await message().press('ArrowUp');
  assert.equal(await message().inputValue(), 'something else');
  await message().fill('');

  await message().press('ArrowUp');
  await message().fill('Do cats sleep a lot?');
  const resent = await nextRequestAfter(() => message().press('Enter'));
  assert.ok(!contents(resent).includes('Do cats purr?'), JSON.stringify(contents(resent)));
  assert.deepEqual(await texts('You'), ['Are cats small?', 'Do cats sleep a lot?']);
  assert.deepEqual(await texts('Tandem'), ['You said: Are cats small?', 'You said: Do cats sleep a lot?']);
});

test('an answer says who answered and the tokens its provider reported, also when the panel opens again', async () => {
  mock.script({ reply: 'Counted.', usage: { input: 1000, output: 234 } });
  await chat('How many tokens?');
  const note = bubbles('Tandem').last().locator('.note.provider');
  assert.equal(await note.textContent(), 'via OpenAI-compatible · 1,234 tokens');
  await panel.reload();
  await showTab();
  await bubbles('Tandem').first().waitFor();
  assert.equal(await bubbles('Tandem').last().locator('.note.provider').textContent(), 'via OpenAI-compatible · 1,234 tokens');
});

test('the stall limit is set in Settings; a stalled answer keeps what arrived and gives the question back', async () => {
  await openSettings();
  const field = panel.getByLabel('Stall limit (seconds)');
  assert.equal(await field.inputValue(), '', 'the default (60) is not written in');
  await field.fill('6');
  await saveSettings();
  const stored = () => panel.evaluate(() => chrome.storage.local.get('settings').then((s) => s.settings.budget?.stallSeconds));
  assert.equal(await stored(), 6);

  mock.script({ reply: 'one two three four five six', stall: true, stallAfter: 2 });
  await message().fill('are you there?');
  await message().press('Enter');
  await panel.getByRole('status', { name: 'Progress' }).filter({ hasText: 'Still waiting for OpenAI-compatible' }).waitFor({ timeout: 10000 });
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'), null, { timeout: 15000 });
  await panel.getByRole('alert').filter({ hasText: 'sent nothing for 6 s' }).waitFor();
  assert.equal(await bubbles('Tandem').last().locator('.text').textContent(), 'one two', 'what arrived is kept');
  assert.ok((await bubbles('Tandem').last().locator('.badge').textContent()).length > 0, 'and marked');
  assert.equal(await message().inputValue(), 'are you there?', 'the question is given back');
  assert.ok(mock.requests.filter(isChat).at(-1).aborted, 'the request was aborted');

  // Back to the default: the field emptied, 60 stored.
  await openSettings();
  assert.equal(await field.inputValue(), '6', 'the saved limit is shown');
  await field.fill('');
  await saveSettings();
  assert.equal(await stored(), 60);
  await message().fill('');
});
