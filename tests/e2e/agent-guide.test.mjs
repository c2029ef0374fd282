// The user guides a task while it runs or is paused, through the coordinator's messages
// UPDATE_TASK_CONTEXT ("Send note"), RECORD_ACTION ("I did this myself") and
// TASK_ADD_RELEVANT_TAB ("Add this tab to the task"), and answers a question the agent asked
// before its worker was restarted. Real Chromium, the real dist/, the shop fixture, and a
// scripted mock LLM that picks elements BY VISIBLE TEXT and reacts only to what its prompt says.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { shopRoutes } from './lib/shop-site.mjs';
import { elements, find, planner, shopper, urlOf } from './lib/scripted-shopper.mjs';
import { scriptedModel, startAgentEnv } from './lib/agent-harness.mjs';

let browser, mock, site, panel, tab, ui;
const cart = [];
const turns = [];
let navigator = shopper;
/** The navigator request being held, with its release. */
let held = null;

const NAV = 'ROLE: NAVIGATOR';
/** The same shop on a second site, for a tab on another host. */
const OUTLET = 'https://outlet.tandem.test';
const FENCE = '⟦untrusted data';
/** The scripted model, with whatever `navigator` the test set. */
const model = scriptedModel({ planner, navigator: (turn) => navigator(turn), turns });

/** Holds the `n`-th navigator answer until the test calls `held.release()`. */
function holdNavigator(n = 1) {
  let seen = 0;
  let arrived;
  const arrival = new Promise((r) => { arrived = r; });
  mock.setDefault(scriptedModel({
    planner,
    turns,
    navigator: async (turn) => {
      const answer = navigator(turn);
      if (++seen === n) {
        const gate = new Promise((r) => { held = { release: r }; });
        arrived();
        await gate;
      }
      return answer;
    },
  }));
  return arrival;
}

let env;
before(async () => {
  env = await startAgentEnv({ routes: shopRoutes({ cart }), key: 'sk-test-guide-12345678', more: { [OUTLET]: shopRoutes({ cart }) } });
  ({ browser, mock, site, panel, tab, ui } = env);
});
after(async () => {
  held?.release();
  await env?.close();
});
beforeEach(() => {
  mock.reset();
  turns.length = 0;
  cart.length = 0;
  navigator = shopper;
  held = null;
});

// The panel is a background tab while the site is in front; Playwright's click would wait
// for its throttled animation frames, so the tests dispatch clicks there.
const press = (name) => ui.button(name).dispatchEvent('click');
const note = () => panel.getByRole('textbox', { name: 'Note for the agent' });

test('UPDATE_TASK_CONTEXT: a note sent while the task runs steers its next steps, outside the page fence', async () => {
  // "A blue bag" matches two products; the shopper takes the sling only if told so.
  navigator = (turn) => {
    const els = elements(turn);
    if (urlOf(turn).endsWith('/cart') && cart.length) return { action: 'done', success: true, answer: `Added ${cart.join(', ')}.` };
    const wantsSling = /Notes from the user[^⟦]*sling/.test(turn);
    const add = find(els, (e) => e.name === 'Add to cart');
    if (add) return { action: 'click', element: add.id };
    const product = find(els, (e) => e.role === 'link' && (wantsSling ? /^Blue sling/ : /^Blue backpack/).test(e.name));
    if (product) return { action: 'click', element: product.id };
    const search = find(els, (e) => e.name === 'Search' && e.role !== 'button');
    if (search) return { action: 'type', element: search.id, text: 'blue bag', submit: true };
    return { action: 'done', success: false, answer: 'lost' };
  };
  const waiting = holdNavigator(1);
  await ui.startTask(tab, 'Add a blue bag to the cart', site.url + '/');
  await waiting;
  assert.equal(await ui.button('Send note').isVisible(), true, 'the task can be guided while it runs');
  await note().fill('I prefer the sling bag');
  await press('Send note');
  await ui.notice().filter({ hasText: /Noted/ }).waitFor();
  assert.equal(await note().inputValue(), '', 'the box is emptied once the note is sent');
  held.release();

  await ui.waitStatus(/^Done/);
  assert.deepEqual(cart, ['blue-sling'], 'the note changed what the agent picked');
  const later = turns.filter((t) => t.includes('I prefer the sling bag'));
  assert.ok(later.length >= 2, 'every later turn carries the note');
  for (const t of later) assert.ok(t.indexOf('I prefer the sling bag') < t.indexOf(FENCE), 'the note is the user\'s, not page data');
  assert.ok(!turns[0].includes('sling bag'), 'the turn before the note did not have it');
  const steps = await ui.steps();
  assert.ok(steps.includes('Your note: I prefer the sling bag'), steps.join('\n'));
  assert.deepEqual((await ui.stored()).notes, ['I prefer the sling bag']);
});

test('RECORD_ACTION: a step the user did while the task was paused is recorded, and the planner looks again', async () => {
  const waiting = holdNavigator(1);
  await ui.startTask(tab, 'Add the blue backpack to the cart', site.url + '/');
  await waiting;
  await press('Pause');
  held.release();
  await ui.waitStatus(/^Paused/);
  const typedBefore = (await ui.steps()).filter((s) => s.includes('"type"')).length;

  // The user searches themselves, then tells the agent.
  await tab.goto(site.url + '/search?q=blue+backpack');
  await tab.bringToFront();
  await note().fill('I searched for the blue backpack');
  await press('I did this myself');
  await ui.list().getByText('You did: I searched for the blue backpack').waitFor();
  turns.length = 0;
  mock.setDefault(model);
  await press('Resume');
  await ui.waitStatus(/^Done/);

  assert.deepEqual(cart, ['blue-backpack']);
  assert.match(turns[0], /^ROLE: PLANNER/, 'the planner runs first after the user changed the page');
  assert.match(turns[0], /- I did this myself: I searched for the blue backpack/);
  const nav = turns.find((t) => t.startsWith(NAV));
  assert.match(nav, /Result of the previous step: the user did this on the page themselves: I searched for the blue backpack/);
  const steps = await ui.steps();
  assert.equal(steps.filter((s) => s.includes('"type"')).length, typedBefore, `the agent did not search again:\n${steps.join('\n')}`);
});

test('TASK_ADD_RELEVANT_TAB: the panel\'s tab joins the task, and the agent switches to it and acts there', async () => {
  // The shopper works on whatever product page it is on; it switches when told of a tab.
  navigator = (turn) => {
    const els = elements(turn);
    if (urlOf(turn).endsWith('/cart') && cart.length) return { action: 'done', success: true, answer: `Added ${cart.join(', ')}.` };
    const add = find(els, (e) => e.name === 'Add to cart');
    if (add) return { action: 'click', element: add.id };
    const other = [...turn.matchAll(/\[(\d+)\] tab \d+( \(current\))?/g)].find((m) => !m[2]);
    if (other && /I added tab/.test(turn)) return { action: 'switch_tab', tab: Number(other[1]) };
    return { action: 'wait', ms: 0 };
  };
  const waiting = holdNavigator(1);
  await ui.startTask(tab, 'Add the product in my other tab to the cart', site.url + '/');
  await waiting;
  const other = await browser.context.newPage();
  try {
    // Another site, so the panel's memory line shows when the panel follows the new tab
    // (the panel acts on the tab it shows, like the side panel does).
    await other.goto(`${OUTLET}/p/red-tote`);
    await other.bringToFront();
    await panel.getByRole('status', { name: 'Memory' }).filter({ hasText: 'outlet.tandem.test' }).waitFor();
    await press('Add this tab to the task');
    await ui.notice().filter({ hasText: /^Noted/ }).waitFor();
    // Once is enough: the same tab again is refused with a sentence.
    await press('Add this tab to the task');
    await ui.notice().filter({ hasText: 'already part of the task' }).waitFor();
    held.release();
    await ui.list().getByText('You added tab [1]: Red tote').waitFor();

    await ui.waitStatus(/^Done/);
    assert.deepEqual(cart, ['red-tote'], 'the agent acted in the tab the user added');
    assert.match(other.url(), /\/cart$/);
    assert.match(tab.url(), /\/$/, 'the first tab was left alone');
    const state = await ui.stored();
    assert.equal(state.relevantTabs.length, 2);
    const steps = await ui.steps();
    assert.ok(steps.some((s) => /"switch_tab".*✓ switched to tab \[1\]/.test(s)), steps.join('\n'));
  } finally {
    await other.close();
  }
});

test('guiding an ended task is refused with a sentence', async () => {
  mock.setDefault(model);
  await ui.startTask(tab, 'Add the blue backpack to the cart', site.url + '/');
  await ui.waitStatus(/^Done/);
  assert.equal(await ui.button('Send note').isVisible(), false, 'no guiding controls once the task ended');
  const answer = await panel.evaluate(() => new Promise((resolve) => {
    const port = chrome.runtime.connect({ name: 'tandem-chat' });
    port.onMessage.addListener((m) => resolve(JSON.parse(m).taskState));
    port.postMessage(JSON.stringify({ task: { command: { updateContext: { note: 'too late' } } } }));
  }));
  assert.match(answer.notice, /has ended; start a new one/);
  assert.deepEqual((await ui.stored()).notes, [], 'the note was not added');
});

test('a question asked before the worker restarted is still open; answering it resumes the task', async () => {
  navigator = (turn) => {
    const answered = turn.match(/the user answered: (\w+)/);
    if (answered) return { action: 'done', success: true, answer: `You chose ${answered[1]}.` };
    return { action: 'ask_user', question: 'Which colour do you want?' };
  };
  mock.setDefault(model);
  await ui.startTask(tab, 'Choose a colour for me', site.url + '/');
  await ui.question().waitFor({ timeout: 20_000 });
  await browser.stopServiceWorker();
  await ui.waitStatus(/^Paused.*Answer the question/, 15_000);
  assert.match(await ui.question().textContent(), /Which colour do you want\?/, 'the question is still there');
  await panel.getByRole('textbox', { name: 'Answer', exact: true }).fill('green');
  await ui.button('Send answer').click();
  await ui.waitStatus(/^Done/);
  assert.match(await panel.getByLabel('Final answer').textContent(), /You chose green/);
  const steps = await ui.steps();
  assert.ok(steps.some((s) => /"ask_user".*the user answered: green/.test(s)), steps.join('\n'));
  assert.equal(turns.filter((t) => t.startsWith(NAV) && /Which colour/.test(t) && !/answered/.test(t)).length, 0,
    'the model was not asked again before the answer');
});
