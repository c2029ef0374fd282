// Site access: Tandem asks in the panel before its first action on a site in a task ("Let
// Tandem act on shop.tandem.test?" — Allow once / Always allow on this site / Deny), remembers
// "Always" in Settings with Remove, asks again for a second site, reads pages without asking,
// and names the pages no extension may act on. The sites are https origins the manifest does
// not list, served through the browser's routing, and start untrusted (`trust: false`), as a
// new user's would. Assertions are on what the sites received and what the panel shows.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { closeSettings, openSettings, scriptedModel, startAgentEnv } from './lib/agent-harness.mjs';
import { page } from './lib/shop-site.mjs';
import { elements, urlOf } from './lib/scripted-shopper.mjs';

const A = 'https://shop.tandem.test';
const B = 'https://pay.tandem.test';
const hellos = [];

/** A page whose button tells the site it was pressed; `next` links to another page. */
const greeter = (site) => ({
  '/': page(`Hello ${site}`, `<h1>${site}</h1>
    <button type="button" onclick="fetch('/hello').then(() => { document.querySelector('h1').textContent = 'Said hello' })">Say hello</button>
    <p>Opening hours: 9 to 17.</p>`),
  '/hello': () => { hellos.push(site); return { type: 'text/plain', body: 'ok' }; },
});

const turns = [];
/** Says hello on every site the task names, in order, then is done. */
let navigator = (turn) => {
  const hello = elements(turn).find((e) => e.name === 'Say hello');
  if (/Said hello/.test(turn) || /done: clicked/.test(turn)) {
    if (/then on pay\.tandem\.test/.test(turn) && !urlOf(turn).startsWith(B)) return { action: 'navigate', url: `${B}/` };
    return { action: 'done', success: true, answer: 'Said hello.' };
  }
  return hello ? { action: 'click', element: hello.id } : { action: 'done', success: false, answer: 'no button' };
};
const planner = (turn) => ({ plan: '1. say hello', complete: /navigator says the task is done/.test(turn) });

let env, panel, tab, ui, mock;
before(async () => {
  env = await startAgentEnv({ routes: greeter('shop'), more: { [B]: greeter('pay') }, key: 'sk-test-sites-12345678', trust: false });
  ({ panel, tab, ui, mock } = env);
});
after(async () => {
  await env?.close();
});
beforeEach(() => {
  mock.reset();
  mock.setDefault(scriptedModel({ planner, navigator: (turn) => navigator(turn), turns }));
  turns.length = 0;
  hellos.length = 0;
});

// The panel is a background tab while the site is in front: dispatch clicks there.
const press = (name) => ui.button(name).dispatchEvent('click');
const question = () => ui.siteAccess().filter({ hasText: 'Let Tandem act on shop.tandem.test?' });
const grantsList = () => panel.getByRole('list', { name: 'Sites Tandem may act on' });

test('the first action on a site asks; Deny stops the task, Cancelled, and the site sees nothing', async () => {
  await ui.startTask(tab, 'Say hello', `${A}/`);
  await question().waitFor({ timeout: 20_000 });
  assert.deepEqual(hellos, [], 'nothing happened before the user answered');
  // Planning read the page without any grant.
  assert.ok(turns.some((t) => t.startsWith('ROLE: NAVIGATOR') && /Say hello/.test(t)));
  await press('Deny');
  await ui.waitStatus(/^Cancelled: You did not let Tandem act on shop\.tandem\.test, so the task stopped there/);
  assert.deepEqual(hellos, []);
  assert.equal(await ui.siteAccess().isVisible(), false);
});

test('Allow once acts for this task only: the next task asks again', async () => {
  await ui.startTask(tab, 'Say hello', `${A}/`);
  await question().waitFor({ timeout: 20_000 });
  await press('Allow once');
  await ui.waitStatus(/^Done/);
  assert.deepEqual(hellos, ['shop']);
  const stored = await panel.evaluate(() => chrome.storage.local.get('siteGrants').then((x) => x.siteGrants ?? null));
  assert.ok(!stored?.always?.includes('shop.tandem.test'), 'once is not remembered');

  await ui.startTask(tab, 'Say hello', `${A}/`);
  await question().waitFor({ timeout: 20_000 });
  await press('Deny');
  await ui.waitStatus(/^Cancelled/);
  assert.deepEqual(hellos, ['shop'], 'the second task did nothing once denied');
});

test('Always allow is remembered and listed in Settings; Remove makes Tandem ask again', async () => {
  await ui.startTask(tab, 'Say hello', `${A}/`);
  await question().waitFor({ timeout: 20_000 });
  await press('Always allow on this site');
  await ui.waitStatus(/^Done/);
  assert.deepEqual(hellos, ['shop']);

  // A remembered site is not asked again.
  await ui.startTask(tab, 'Say hello', `${A}/`);
  await ui.waitStatus(/^Done/);
  assert.deepEqual(hellos, ['shop', 'shop']);
  assert.ok(!(await ui.steps()).some((s) => /did not let/.test(s)));

  await panel.bringToFront();
  await openSettings(panel);
  await grantsList().getByRole('listitem').filter({ hasText: 'shop.tandem.test' }).waitFor();
  await panel.getByRole('button', { name: 'Remove shop.tandem.test' }).click();
  await grantsList().getByRole('listitem').filter({ hasText: 'shop.tandem.test' }).waitFor({ state: 'detached' });
  await closeSettings(panel);

  await ui.startTask(tab, 'Say hello', `${A}/`);
  await question().waitFor({ timeout: 20_000 });
  await press('Deny');
  await ui.waitStatus(/^Cancelled/);
  assert.deepEqual(hellos, ['shop', 'shop'], 'after Remove the site is asked again, and Deny holds');
});

test('a task that goes from site A to site B asks again before acting on B', async () => {
  await ui.startTask(tab, 'Say hello here, then on pay.tandem.test', `${A}/`);
  await question().waitFor({ timeout: 20_000 });
  await press('Allow once');
  const onB = ui.siteAccess().filter({ hasText: 'Let Tandem act on pay.tandem.test?' });
  await onB.waitFor({ timeout: 20_000 });
  assert.deepEqual(hellos, ['shop'], 'B was not touched before its own answer');
  assert.ok(tab.url().startsWith(B), 'the agent went to B, which needs no grant to read');
  await press('Allow once');
  await ui.waitStatus(/^Done/);
  assert.deepEqual(hellos, ['shop', 'pay']);
});

test('reading a page needs no grant: a task that only reads is never asked', async () => {
  navigator = (turn) => (/Opening hours: 9 to 17/.test(turn) && /page text/.test(turn)
    ? { action: 'done', success: true, answer: 'Open 9 to 17.' }
    : { action: 'extract_text' });
  try {
    await ui.startTask(tab, 'When is the shop open?', `${A}/`);
    await ui.waitStatus(/^Done/);
    assert.match(await panel.getByLabel('Final answer').textContent(), /Open 9 to 17/);
    assert.equal(await ui.siteAccess().isVisible(), false);
  } finally {
    navigator = (turn) => {
      const hello = elements(turn).find((e) => e.name === 'Say hello');
      if (/Said hello/.test(turn) || /done: clicked/.test(turn)) return { action: 'done', success: true, answer: 'Said hello.' };
      return hello ? { action: 'click', element: hello.id } : { action: 'done', success: false, answer: 'no button' };
    };
  }
});

test('a page no extension may act on ends the task with a sentence naming the page, not Chrome\'s error', async () => {
  // chrome:// here; the Web Store's sentence is covered natively (sites.rs): loading the
  // Web Store in headless Chromium under the test's routing ends the test's browser context.
  await ui.startTask(tab, 'Change a setting', 'chrome://version/');
  await ui.waitStatus(/^Failed: Tandem cannot act on chrome:\/\/version\/: Chrome does not let extensions read or change its own pages\.$/);
  const status = await ui.status().textContent();
  assert.doesNotMatch(status, /Cannot access|manifest|permission/i, 'none of Chrome\'s raw words');
  assert.equal(mock.requests.length, 0, 'no model was asked about a page Tandem cannot act on');
});
