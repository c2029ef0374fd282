// Workflows: a task that ended Done is saved, then run again WITHOUT the model on a shop
// that re-rendered (new ids, classes, order, a moved button), with another value, with a
// step that diverged (the model takes over from there only), and with an irreversible step
// asked about on every run. Real Chromium, the real dist/, a routed https shop and a
// scripted mock model whose requests are counted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scriptedModel } from './lib/agent-harness.mjs';
import { elements, find, urlOf } from './lib/scripted-shopper.mjs';
import { page } from './lib/shop-site.mjs';
import { agentSuite } from './lib/suites.mjs';

const PRODUCTS = [
  ['blue-backpack', 'Blue backpack', 35],
  ['red-scarf', 'Red scarf', 20],
  ['green-hat', 'Green hat', 15],
];

/** What the shop received: each cart line and each order placed. */
const cart = [];
const orders = [];
/** How the shop renders: 'a' as recorded; 'b' re-rendered (new ids and classes, another
 * order, the Add to cart button moved above the size); 'c' with the button renamed
 * "Put in basket" and moved into a menu at the page's foot; 'd' as 'b', with the search
 * results' products named otherwise ("Hat, green"). */
let look = 'a';
let seq = 0;
const uid = () => `${look}${++seq}`;

function productPage([id, name, price]) {
  const sizeId = `${uid()}-size`;
  const size = `<label for="${sizeId}">Size</label><select id="${sizeId}" name="size" form="buy"><option>S</option><option>M</option><option>L</option></select>`;
  // 'e': as 'b', with the button written as an input (`<input type=submit value=…>`), which
  // the element list names the same way.
  const add = (label) => (look === 'e'
    ? `<input type="submit" class="${uid()}" form="buy" value="${label}">`
    : `<button class="${uid()}" form="buy">${label}</button>`);
  const form = `<form id="buy" action="/cart/add" method="post"><input type="hidden" name="sku" value="${id}"></form>`;
  const head = `<h1>${name}</h1><p>$${price}</p>`;
  const nav = '<a href="/cart">Cart</a> <a href="/">Home</a>';
  if (look === 'a') return page(name, `${head}${form}<div class="opts">${size}</div><div class="buy">${add('Add to cart')}</div>${nav}`);
  if (look === 'b' || look === 'e') return page(name, `<div class="${uid()}">${nav}</div><section class="${uid()}">${add('Add to cart')}<div>${head}</div>${size}</section>${form}`);
  return page(name, `${nav}${head}${form}${size}<p>Delivery in 2 days.</p><footer><div class="menu">${add('Put in basket')}</div></footer>`);
}

const routes = {
  '/': () => page('Shop', look === 'a'
    ? `<h1>Shop</h1><form action="/search"><input type="search" name="q" aria-label="Search" id="q1"><button>Search</button></form><a href="/cart">Cart</a>`
    : `<a href="/cart" class="${uid()}">Cart</a><a href="/help">Help</a><form action="/search" class="${uid()}"><button class="${uid()}">Search</button><input type="search" name="q" aria-label="Search" id="${uid()}"></form><h1>Shop</h1>`),
  '/help': page('Help', '<h1>Help</h1>'),
  '/search': (rec) => {
    const q = String(rec.query.q ?? '').toLowerCase();
    let hits = PRODUCTS.filter(([, name]) => q.split(/\s+/).some((w) => w && name.toLowerCase().includes(w)));
    if (look !== 'a') hits = [...hits].reverse();
    // 'd': the results name their products otherwise ("Hat, green — $15"): a saved step that
    // looks for a link holding "green hat" no longer finds one.
    const label = (name) => (look === 'd' ? name.split(' ').reverse().join(', ').replace(/^./, (c) => c.toUpperCase()).replace(/, (.)/, (m, c) => `, ${c.toLowerCase()}`) : name);
    const items = hits.map(([id, name, price]) => `<li class="${uid()}"><a id="${uid()}" href="/p/${id}">${label(name)} — $${price}</a></li>`).join('');
    return page('Results', `<h1>Results</h1><ul>${items}</ul><a href="/cart">Cart</a>`);
  },
  ...Object.fromEntries(PRODUCTS.map((p) => [`/p/${p[0]}`, () => productPage(p)])),
  '/cart/add': (rec) => {
    const form = new URLSearchParams(rec.body);
    cart.push(`${form.get('sku')}/${form.get('size')}`);
    return { status: 303, headers: { location: `/p/${form.get('sku')}` }, body: '' };
  },
  '/cart': () => page('Your cart', `<h1>Your cart</h1><ul>${cart.map((c) => `<li>${c}</li>`).join('')}</ul>
    <form action="/order" method="post"><button>Place order</button></form><a href="/">Home</a>`),
  '/order': () => { orders.push([...cart]); return page('Thank you', '<h1>Order placed</h1>'); },
};

// ---------------------------------------------------------------- the scripted model

/** The shopper of the recorded task: search, pick, size M, add, go to the cart, done. */
function shopper(turn) {
  const els = elements(turn);
  const url = urlOf(turn);
  if (/\/cart$/.test(url)) {
    const order = find(els, (e) => e.name === 'Place order');
    if (wantOrder && order) {
      wantOrder = false;
      return { action: 'click', element: order.id };
    }
    return { action: 'done', success: true, answer: 'In the cart.' };
  }
  if (/\/order$/.test(url)) return { action: 'done', success: true, answer: 'Ordered.' };
  if (/\/p\//.test(url)) {
    const added = /\/p\/[^\s]*$/.test(url) && sizeChosen && addClicked;
    if (added) return { action: 'click', element: find(els, (e) => e.name === 'Cart').id };
    if (!sizeChosen) {
      sizeChosen = true;
      return { action: 'select_option', element: find(els, (e) => e.name === 'Size').id, option: 'M' };
    }
    addClicked = true;
    return { action: 'click', element: find(els, (e) => /^(Add to cart|Put in basket)$/.test(e.name)).id };
  }
  if (/\/search/.test(url)) return { action: 'click', element: find(els, (e) => e.role === 'link' && /^Blue backpack/.test(e.name)).id };
  return { action: 'type', element: find(els, (e) => e.name === 'Search' && e.role !== 'button').id, text: 'blue backpack', submit: true };
}
let sizeChosen = false;
let addClicked = false;
let wantOrder = false;

const planner = (turn) => ({ plan: '1. search 2. pick 3. size 4. add 5. cart', complete: /navigator says the task is done/.test(turn) });
const turns = [];
const llm = scriptedModel({ planner, navigator: (turn) => shopper(turn), turns });

// ---------------------------------------------------------------- harness

let env, mock, panel, tab, ui, site;
agentSuite({
  routes,
  key: 'sk-test-flows-12345678',
  // The person allowed notifications when Chrome asked (the first Save schedule).
  granted: ['notifications'],
  llm,
  turns,
  ready: (started) => {
    env = started;
    ({ mock, panel, tab, ui, site } = env);
  },
  reset: () => {
    cart.length = 0;
    orders.length = 0;
    sizeChosen = false;
    addClicked = false;
    wantOrder = false;
    look = 'a';
  },
});

/** Waits until `check()` (async, in the test) is truthy; `what` names it in the timeout. */
async function until(check, what, timeout = 30_000) {
  for (const t0 = Date.now(); Date.now() - t0 < timeout; await new Promise((r) => setTimeout(r, 100))) {
    const v = await check();
    if (v) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

const workflowsView = () => panel.getByRole('region', { name: 'Workflows' });
const stored = () => panel.evaluate(() => chrome.storage.local.get('workflows').then((x) => x.workflows ?? []));
const notice = () => ui.notice().textContent();

async function openWorkflows() {
  if (await workflowsView().isHidden()) await panel.getByRole('button', { name: 'Workflows', exact: true }).click();
  await workflowsView().waitFor();
}

/** Types `/run …` in the Task box and waits for the run to be saved as the current task. */
async function runFromTaskBox(text) {
  await closeWorkflows();
  await ui.startTask(tab, text, null);
}

async function closeWorkflows() {
  if (await workflowsView().isVisible()) await workflowsView().getByRole('button', { name: 'Back to conversation' }).click();
}

/** Types `/run …` that the worker refuses, and waits for its sentence. */
async function refusedRun(text, says) {
  await closeWorkflows();
  await ui.task().fill(text);
  await ui.start().click();
  await ui.notice().filter({ hasText: says }).waitFor();
}

const SHOP_TASK = 'Search for blue backpack, pick size M and add it to the cart';

/** The task card's form that "Save as workflow" opens, and its name field. */
const saveForm = () => panel.getByRole('group', { name: 'Save as workflow' });
const nameField = () => saveForm().getByRole('textbox', { name: 'Workflow name' });

/** Save as workflow: the card asks for the name; `name` (when given) is typed over the one
 * it proposes, and Save pressed. Returns the proposed name. */
async function saveAsWorkflow(name) {
  await ui.button('Save as workflow').click();
  await nameField().waitFor();
  const proposed = await nameField().inputValue();
  if (name !== undefined) await nameField().fill(name);
  await saveForm().getByRole('button', { name: 'Save workflow' }).click();
  return proposed;
}

/** Records the 5-step shop task with the model and saves it as a workflow under the name
 * the card proposes. */
async function recordShopWorkflow() {
  await recordShopTask();
  const count = (await stored()).length;
  const proposed = await saveAsWorkflow();
  await until(async () => (await stored()).length > count, 'a stored workflow');
  assert.match(await notice(), /Saved as the workflow/);
  const [flow] = (await stored()).slice(-1);
  assert.equal(flow.name, proposed, 'saved under the name the person kept');
  return flow;
}

async function recordShopTask() {
  await closeWorkflows(); // a previous test may have left the view open over the composer
  await ui.startTask(tab, SHOP_TASK, site.url + '/');
  await ui.waitStatus(/^Done/);
  assert.deepEqual(cart, ['blue-backpack/M']);
  assert.ok(mock.requests.length >= 6, `the recording used the model (${mock.requests.length} requests)`);
}

test('a Done task is saved with its steps and a named parameter, and replays on a re-rendered shop with no model request', async () => {
  await panel.evaluate(() => chrome.storage.local.remove('workflows'));
  const flow = await recordShopWorkflow();
  // A few words of the task that make sense, not its first eight cut mid-phrase.
  assert.equal(flow.name, 'Search for blue backpack');
  assert.equal(flow.steps.length, 5, JSON.stringify(flow.steps));
  assert.deepEqual(flow.params.map((p) => [p.name, p.value]), [['query', 'blue backpack'], ['size', 'M']]);
  assert.ok(!JSON.stringify(flow).includes('Results'), 'no page text beyond target names is stored');

  // The view lists it: name, start site, steps, parameters.
  await openWorkflows();
  const entry = workflowsView().getByRole('listitem', { name: flow.name });
  await entry.waitFor();
  assert.match(await entry.textContent(), /Starts on shop\.tandem\.test/);
  assert.equal(await entry.getByRole('list', { name: `Steps of ${flow.name}` }).getByRole('listitem').count(), 5);
  assert.equal(await entry.getByRole('textbox', { name: 'Value of query' }).inputValue(), 'blue backpack');

  // The shop re-renders: new ids and classes, another order, the button moved.
  look = 'b';
  cart.length = 0;
  mock.reset();
  mock.setDefault(llm);
  await entry.getByRole('button', { name: `Run ${flow.name}` }).click();
  await ui.waitStatus(/^Done: Workflow .* replayed/, 30_000);
  // The save's sentence belonged to the task it saved: the run that followed does not show it.
  // (Read only when on screen: a hidden notice has no role to find it by.)
  const stale = (await ui.notice().isVisible()) ? await notice() : '';
  assert.doesNotMatch(stale, /Saved as the workflow/, 'the old notice stayed');
  assert.equal(mock.requests.length, 0, 'a replay whose pages match sends no model request');
  assert.deepEqual(cart, ['blue-backpack/M'], 'the shop received the same order');
  assert.match(await tab.url(), /\/cart$/);
  const steps = await ui.steps();
  const acted = steps.filter((s) => /replayed/.test(s));
  assert.equal(acted.length, 5, steps.join('\n'));
  assert.ok(acted.every((s) => /✓/.test(s) && !/tokens/.test(s)), steps.join('\n'));

  // The run's outcome is on the workflow.
  await openWorkflows();
  await until(async () => (await stored())[0]?.lastRun, 'the last run on the workflow');
  assert.match(await workflowsView().getByRole('listitem', { name: flow.name }).textContent(), /Last run .*: Done without the model/);
});

test('Save as workflow asks for the name: another workflow\'s is refused with a sentence and nothing is saved; the name typed is kept and /run finds it', async () => {
  const before = await stored();
  assert.equal(before.length, 1, 'the previous test saved a workflow');
  await recordShopTask();

  // The name the card proposes is the one taken: refused, with a sentence naming it.
  await ui.button('Save as workflow').click();
  await nameField().waitFor();
  assert.equal(await nameField().inputValue(), 'Search for blue backpack');
  assert.equal(await panel.evaluate(() => document.activeElement?.id), 'task-workflow-name', 'the field has the focus');
  await nameField().fill('  search FOR blue backpack ');
  await nameField().press('Enter');
  await ui.notice().filter({ hasText: 'There is already a workflow called “Search for blue backpack”. Choose another name.' }).waitFor();
  assert.ok(await nameField().isVisible(), 'the form stays to change the name');
  assert.equal(await nameField().inputValue(), '  search FOR blue backpack ');
  // Cancel closes it; nothing was saved either way.
  await saveForm().getByRole('button', { name: 'Cancel' }).click();
  await saveForm().waitFor({ state: 'hidden' });
  assert.deepEqual(await stored(), before, 'nothing was saved');

  // Opened again, the field keeps what the person typed; Enter saves the name they type.
  await ui.button('Save as workflow').click();
  assert.equal(await nameField().inputValue(), '  search FOR blue backpack ');
  await nameField().fill(' Backpack, size M ');
  await nameField().press('Enter');
  await ui.notice().filter({ hasText: 'Saved as the workflow “Backpack, size M”' }).waitFor();
  await saveForm().waitFor({ state: 'hidden' });
  const after = await stored();
  assert.equal(after.length, 2);
  assert.equal(after[1].name, 'Backpack, size M', 'exactly what was typed, trimmed');

  // Rename refuses another workflow's name too.
  await openWorkflows();
  const entry = workflowsView().getByRole('listitem', { name: 'Backpack, size M', exact: true });
  await entry.getByRole('textbox', { name: 'New name for Backpack, size M' }).fill('SEARCH for blue backpack');
  await entry.getByRole('button', { name: 'Rename Backpack, size M' }).click();
  await panel.getByRole('status', { name: 'Workflows status' }).filter({ hasText: 'There is already a workflow called “Search for blue backpack”. Choose another name.' }).waitFor();
  assert.deepEqual(await stored(), after, 'nothing renamed');

  // /run finds it by the name the person gave.
  cart.length = 0;
  mock.reset();
  mock.setDefault(llm);
  await runFromTaskBox('/run Backpack, size M query=red scarf');
  await ui.waitStatus(/^Done: Workflow .* replayed/, 30_000);
  assert.deepEqual(cart, ['red-scarf/M']);
  assert.equal(mock.requests.length, 0);
  // The tests that follow run the first workflow alone.
  await panel.evaluate(() => chrome.storage.local.get('workflows').then(({ workflows }) => chrome.storage.local.set({ workflows: workflows.slice(0, 1) })));
});

test('a parameterised replay (/run … query=red scarf) reaches the other product, still without the model', async () => {
  const [flow] = await stored();
  assert.ok(flow, 'the previous test saved a workflow');
  look = 'b';
  await runFromTaskBox(`/run ${flow.name} query=red scarf`);
  await ui.waitStatus(/^Done: Workflow .* replayed/, 30_000);
  assert.equal(mock.requests.length, 0);
  assert.deepEqual(cart, ['red-scarf/M']);
  // An unknown parameter is refused with a sentence, and nothing runs.
  const before = cart.length;
  await refusedRun(`/run ${flow.name} colour=red`, /has no parameter “colour”; its parameters are: query, size/);
  await refusedRun('/run no such workflow', /There is no workflow called “no such workflow”/);
  assert.equal(cart.length, before, 'nothing ran');
  assert.equal(mock.requests.length, 0);
});

test('the view runs once with the values in its fields, keeping the defaults; Save as default changes them for every run', async () => {
  const [flow] = await stored();
  const defaults = flow.params.map((p) => [p.name, p.value]);
  assert.deepEqual(defaults, [['query', 'blue backpack'], ['size', 'M']]);
  await openWorkflows();
  const entry = workflowsView().getByRole('listitem', { name: flow.name, exact: true });
  const query = entry.getByRole('textbox', { name: 'Value of query' });
  assert.match(await entry.getByRole('group', { name: `Parameters of ${flow.name}` }).textContent(), /Run uses these values this time only; Save as default keeps a value for every run/);

  // Another value, then Run: the shop gets the other product, the stored default stays.
  await query.fill('red scarf');
  const ran = Date.now();
  // The last run's "Done" is still on screen: wait for this run's task before its status.
  const previous = (await ui.stored())?.id;
  await entry.getByRole('button', { name: `Run ${flow.name}` }).click();
  await until(async () => (await ui.stored())?.id !== previous, 'the run to start');
  await panel.locator(`#task-status[data-task="${(await ui.stored()).id}"]`).waitFor();
  await ui.waitStatus(/^Done: Workflow .* replayed/, 30_000);
  assert.deepEqual(cart, ['red-scarf/M'], 'the shop received the value typed for this run');
  assert.equal(mock.requests.length, 0);
  await until(async () => (await stored())[0].lastRun?.at >= ran, 'the run\'s outcome');
  assert.deepEqual((await stored())[0].params.map((p) => [p.name, p.value]), defaults, 'the defaults are unchanged');
  await openWorkflows();
  await until(async () => (await query.inputValue()) === 'blue backpack', 'the field showing the default again');

  // Save as default: stored for every run, and nothing runs.
  await query.fill('green hat');
  await entry.getByRole('button', { name: 'Save as default value of query' }).click();
  await panel.getByRole('status', { name: 'Workflows status' }).filter({ hasText: 'Saved: query is “green hat” on every run that gives no other value.' }).waitFor();
  assert.deepEqual((await stored())[0].params.map((p) => [p.name, p.value]), [['query', 'green hat'], ['size', 'M']]);
  assert.deepEqual(cart, ['red-scarf/M'], 'saving a default runs nothing');
  // Back as recorded, for the tests that follow.
  await entry.getByRole('textbox', { name: 'Value of query' }).fill('blue backpack');
  await entry.getByRole('button', { name: 'Save as default value of query' }).click();
  await until(async () => (await stored())[0].params[0].value === 'blue backpack', 'the default back');
});

test('a replay finds "Add to cart" written as <input type=submit> where the task clicked a <button>, without the model', async () => {
  const [flow] = await stored();
  look = 'e';
  const before = cart.length;
  await runFromTaskBox(`/run ${flow.name} query=green hat`);
  await ui.waitStatus(/^Done: Workflow .* replayed/, 30_000);
  assert.equal(mock.requests.length, 0, 'no step went to the model');
  assert.deepEqual(cart.slice(before), ['green-hat/M'], 'the shop received the item');
});

test('a diverged step hands over to the model from that step only; Update workflow then replays with no model request', async () => {
  const [flow] = await stored();
  look = 'c'; // "Add to cart" is now "Put in basket", in a menu elsewhere on the page
  sizeChosen = true; // the model takes over after the size was replayed
  await runFromTaskBox(`/run ${flow.name}`);
  await ui.waitStatus(/^Done/, 30_000);
  assert.deepEqual(cart, ['blue-backpack/M'], 'the model finished the order');
  const steps = await ui.steps();
  const diverged = steps.findIndex((s) => /Replay diverged at step 4: the button “add to cart” was not found; the model took over from there/.test(s));
  assert.ok(diverged > 0, steps.join('\n'));
  assert.ok(steps.slice(0, diverged).every((s) => /replayed/.test(s) && /✓/.test(s)), steps.join('\n'));
  assert.equal(steps.slice(0, diverged).length, 3, 'search, pick and size were replayed');
  assert.ok(mock.requests.length > 0, 'the model took over');
  // Every model request came after the divergence: each carries the workflow's hint.
  for (const t of turns) assert.match(t, /Replaying the saved workflow .* stopped at step 4/);
  assert.match(turns[0], /⟦untrusted data: saved workflow⟧[\s\S]*add to cart[\s\S]*⟦\/untrusted data⟧/);

  await ui.button('Update workflow').click();
  await ui.notice().filter({ hasText: /^Updated the workflow/ }).waitFor();
  const [updated] = await stored();
  assert.ok(updated.steps.some((s) => s.target?.name === 'put in basket'), JSON.stringify(updated.steps));

  mock.reset();
  mock.setDefault(llm);
  cart.length = 0;
  await runFromTaskBox(`/run ${flow.name}`);
  await ui.waitStatus(/^Done: Workflow .* replayed/, 30_000);
  assert.equal(mock.requests.length, 0, 'the updated workflow replays without the model');
  assert.deepEqual(cart, ['blue-backpack/M']);
});

test('an irreversible step asks on every replay, and Deny ends the run with nothing done past it', async () => {
  await panel.evaluate(() => chrome.storage.local.remove('workflows'));
  wantOrder = true;
  cart.push('green-hat/S');
  await ui.startTask(tab, 'Place the order in my cart', site.url + '/cart');
  await ui.approval().waitFor();
  await ui.button('Approve').click();
  await ui.waitStatus(/^Done/);
  assert.equal(orders.length, 1);
  assert.equal(await saveAsWorkflow(), 'Place the order');
  await until(async () => (await stored()).length === 1, 'the saved workflow');
  const [flow] = await stored();
  mock.reset();

  // Run 1: asked again, approved, ordered.
  await runFromTaskBox(`/run ${flow.name}`);
  await ui.approval().waitFor();
  assert.match(await ui.approval().textContent(), /Place order/);
  await ui.button('Approve').click();
  await ui.waitStatus(/^Done: Workflow .* replayed/);
  assert.equal(orders.length, 2);

  // Run 2: asked again; Deny ends the run, no order placed.
  await runFromTaskBox(`/run ${flow.name}`);
  await ui.approval().waitFor();
  await ui.button('Deny').click();
  await ui.waitStatus(/^Cancelled: You denied step 1 of the workflow; nothing after it was done/);
  assert.equal(orders.length, 2, 'nothing was ordered');
  assert.equal(mock.requests.length, 0);
});

test('hostile or broken imports are refused with a sentence and storage is unchanged', async () => {
  const before = JSON.stringify(await stored());
  await openWorkflows();
  const good = (await stored())[0];
  const files = [
    ['javascript.json', JSON.stringify([{ ...good, startUrl: 'javascript:alert(document.cookie)' }]), /not an http or https address/],
    ['types.json', JSON.stringify([{ ...good, steps: 'all of them' }]), /not in the expected form/],
    ['broken.json', '{"name": "half', /not valid JSON/],
    ['huge.json', 'x'.repeat(10 * 1024 * 1024), /larger than 512 KB/],
    // The file's own words are quoted with their control characters shown, not obeyed.
    ['bell.json', JSON.stringify([{ ...good, name: 'Evil\u0007\u202egpj' }]), /Evil␇\\u\{202e\}gpj.*control characters/],
  ];
  for (const [name, text, says] of files) {
    await panel.getByLabel('Import workflows').setInputFiles({ name, mimeType: 'application/json', buffer: Buffer.from(text) });
    const line = panel.getByRole('status', { name: 'Workflows status' });
    await line.filter({ hasText: says }).waitFor();
    assert.match(await line.textContent(), /^This file cannot be imported/);
    assert.doesNotMatch(await line.textContent(), /[\u0000-\u0008\u000b-\u001f\u202a-\u202e]/);
    assert.equal(JSON.stringify(await stored()), before, `${name} changed nothing`);
  }
  // A sound file is taken, under a new id.
  await panel.getByLabel('Import workflows').setInputFiles({ name: 'ok.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify([good])) });
  await panel.getByRole('status', { name: 'Workflows status' }).filter({ hasText: 'Imported 1 workflow.' }).waitFor();
  const now = await stored();
  assert.equal(now.length, 2);
  assert.notEqual(now[1].id, now[0].id);
});

test('a store that leaves the list as shown keeps a name being typed; a store that changes it is shown', async () => {
  await openWorkflows();
  const [first] = await stored();
  const entry = workflowsView().getByRole('listitem', { name: first.name }).first();
  const field = entry.getByRole('textbox', { name: `New name for ${first.name}` });
  await field.fill('Backpack again');
  // Every store comes back to the panel as a change, its own saves too (Chrome tells of no
  // store that leaves the value as it was, so the echo of a save is the change from the list
  // before it). Here another writer stores the same workflows with a field Tandem does not
  // read: a change for Chrome, the list the panel shows once read. The page waits until the
  // panel has heard it and read the list (its read was asked first, so it is answered first).
  const write = (workflows) => panel.evaluate((list) => new Promise((resolve) => {
    const heard = (changes) => {
      if (!('workflows' in changes)) return;
      chrome.storage.onChanged.removeListener(heard);
      chrome.storage.local.get('workflows').then(() => setTimeout(resolve, 0));
    };
    chrome.storage.onChanged.addListener(heard);
    chrome.storage.local.set({ workflows: list });
  }), workflows);
  const now = await stored();
  await write(now.map((w, i) => (i === 0 ? { ...w, seenBy: 'another window' } : w)));
  assert.equal(await field.inputValue(), 'Backpack again', 'the name being typed was kept');

  // A store that changes the list is shown: the other workflow, renamed elsewhere.
  await write(now.map((w, i) => (i === 1 ? { ...w, name: 'Imported backpack' } : w)));
  await workflowsView().getByRole('listitem', { name: 'Imported backpack', exact: true }).waitFor();
});

/** A workflow file as the export writes it: search for `query`, open the hat it finds. */
const hatWorkflow = {
  id: 'x', name: 'Find a hat', goal: 'Find a {query}', startUrl: 'https://shop.tandem.test/',
  params: [{ name: 'query', value: 'green hat' }],
  steps: [
    { action: { type: { value: { param: 'query' }, submit: true } }, page: 'shop.tandem.test/', target: { role: 'searchbox', tag: 'input', name: 'search', attrs: [['type', 'search'], ['name', 'q']] } },
    { action: 'click', page: 'shop.tandem.test/search', target: { role: 'link', tag: 'a', name: '{query} — $15' } },
  ],
};

/** Sets the schedule of workflow `name` in its view (`allowModel`: "Let scheduled runs use
 * the model when the page changed"), then makes its alarm ring now. */
async function scheduleAndRing(name, { allowModel = false } = {}) {
  await openWorkflows();
  const entry = workflowsView().getByRole('listitem', { name }).first();
  await entry.getByRole('combobox', { name: `How often ${name} runs` }).selectOption('hours');
  await entry.getByRole('textbox', { name: `Hours between runs of ${name}` }).fill('6');
  await entry.getByRole('checkbox', { name: 'Let scheduled runs use the model when the page changed' }).setChecked(allowModel);
  await entry.getByRole('button', { name: `Save schedule of ${name}` }).click();
  await panel.getByRole('status', { name: 'Workflows status' }).filter({ hasText: 'Scheduled: runs every 6 hours.' }).waitFor();
  const flow = (await stored()).find((w) => w.name === name);
  const alarm = await panel.evaluate((n) => chrome.alarms.get(n), `workflow:${flow.id}`);
  assert.equal(alarm?.periodInMinutes, 360, 'the schedule is a chrome.alarms alarm');
  assert.ok(Math.abs(alarm.scheduledTime - flow.schedule.nextAt) < 1000);
  await closeWorkflows();
  // The test drives chrome.alarms: the same alarm, due now.
  await panel.evaluate((n) => chrome.alarms.create(n, { when: Date.now() + 100 }), `workflow:${flow.id}`);
  return flow;
}

const notifications = () => panel.evaluate(() => chrome.notifications.getAll());

/** The person clicks the notification `id`: Chrome's own notification cannot be clicked in
 * headless Chromium, so the click is delivered to the very listener background.js registered
 * (chrome.notifications.onClicked.dispatch; its sidePanel.open() fails without a real gesture,
 * which it reports and survives: the panel here is a tab). */
async function clickNotification(id) {
  await env.browser.serviceWorker.evaluate((n) => chrome.notifications.onClicked.dispatch(n), id);
}

/** The web page in front of the person: the active tab's address. */
const frontUrl = () => panel.evaluate(() => chrome.tabs.query({ active: true, lastFocusedWindow: true }).then(([t]) => t?.url ?? ''));

test('a schedule fires: the workflow runs in a background tab, the run is in its history and a notification says how it went', async () => {
  await panel.getByLabel('Import workflows').setInputFiles({ name: 'hat.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify([hatWorkflow])) });
  await panel.getByRole('status', { name: 'Workflows status' }).filter({ hasText: 'Imported 1 workflow.' }).waitFor();
  const pages = env.browser.context.pages().length;
  const flow = await scheduleAndRing('Find a hat');
  // chrome.alarms may ring a little late on a busy machine: a generous bound, and where the
  // run stood if it never ended.
  await until(async () => (await stored()).find((w) => w.id === flow.id)?.lastRun, 'the scheduled run\'s outcome', 60_000)
    .catch(async (e) => {
      const task = await panel.evaluate(() => chrome.storage.session.get('agentTask').then((x) => x.agentTask ?? null));
      throw new Error(`${e.message}; the task: ${JSON.stringify({ status: task?.status, reason: task?.reason, errors: task?.errors, steps: task?.steps?.length })}`);
    });
  const after = (await stored()).find((w) => w.id === flow.id);
  assert.ok(after.lastRun, JSON.stringify(await stored()));
  assert.equal(after.lastRun.outcome, 'Done without the model');
  assert.ok(after.schedule.nextAt > Date.now(), 'the next run is planned after now');
  assert.ok(site.requests.some((r) => r.path === '/p/green-hat'), 'the shop saw the run');
  assert.equal(env.browser.context.pages().length, pages + 1, 'it ran in a tab of its own');
  assert.equal(mock.requests.length, 0);
  // The notification is made once the outcome is stored: it may come a moment after.
  await until(async () => Object.keys(await notifications()).includes(`workflow:${flow.id}`), 'the run\'s notification');
});

test('clicking a scheduled run\'s notification shows that run: its tab in front, the Workflows view on its entry and outcome', async () => {
  const flow = (await stored()).find((w) => w.name === 'Find a hat');
  assert.ok(flow?.lastRun, 'the previous test ran it on its schedule');
  await closeWorkflows();
  await tab.bringToFront();
  assert.doesNotMatch(await frontUrl(), /\/p\/green-hat$/);
  await clickNotification(`workflow:${flow.id}`);
  await workflowsView().waitFor();
  const entry = workflowsView().getByRole('listitem', { name: 'Find a hat' });
  await until(() => panel.evaluate(() => document.activeElement?.getAttribute('aria-label')).then((n) => n === 'Find a hat'), 'the run\'s entry focused');
  assert.match(await entry.textContent(), /Last run .*: Done without the model/);
  assert.match(await panel.getByRole('status', { name: 'Workflows status' }).textContent(), /^Find a hat: Last run .*: Done without the model/);
  assert.equal(await entry.getAttribute('aria-current'), 'true');
  await until(async () => /\/p\/green-hat$/.test(await frontUrl()), 'the run\'s tab in front');
  assert.ok(!Object.keys(await notifications()).includes(`workflow:${flow.id}`), 'the clicked notification is gone');
});

test('a scheduled run that reaches an approval pauses and notifies; it never approves by itself', async () => {
  cart.push('green-hat/S');
  const name = (await stored())[0].name; // the "Place the order…" workflow
  const flow = await scheduleAndRing(name);
  await ui.approval().waitFor({ timeout: 30_000 });
  await until(async () => Object.keys(await notifications()).includes(`workflow:${flow.id}`), 'the notification');
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(orders.length, 0, 'nothing was ordered without the user');
  // Its notification, clicked while the person looks at the Workflows view, shows what waits.
  await openWorkflows();
  await clickNotification(`workflow:${flow.id}`);
  await workflowsView().waitFor({ state: 'hidden' });
  assert.ok(await ui.approval().isVisible(), 'the approval is on screen');
  assert.match(await ui.approval().textContent(), /Place order/);
  await until(async () => /\/cart$/.test(await frontUrl()), 'the run\'s tab in front');
  await ui.button('Cancel').click();
  await ui.waitStatus(/^Cancelled/);
  assert.equal(orders.length, 0);
});

/** The green hat's search results, told apart by their links' names (look 'd'): the model's
 * part when it takes over. */
function hatFinder(turn) {
  const els = elements(turn);
  if (/\/p\/green-hat$/.test(urlOf(turn))) return { action: 'done', success: true, answer: 'Found the green hat.' };
  const link = find(els, (e) => e.role === 'link' && /^hat, green/i.test(e.name));
  return link ? { action: 'click', element: link.id } : { action: 'done', success: false, answer: 'no hat' };
}

test('a scheduled run whose page changed waits and notifies; with the model allowed, the model takes over from that step only', async () => {
  const name = 'Find a hat';
  const flow = (await stored()).find((w) => w.name === name);
  const hatTurns = [];
  mock.setDefault(scriptedModel({ planner, navigator: hatFinder, turns: hatTurns }));
  const visits = () => site.requests.filter((r) => r.path === '/p/green-hat').length;
  const before = visits();
  look = 'd';

  // Off (the default): the run stops at the changed step, asks the model nothing, and says so.
  await scheduleAndRing(name);
  await ui.waitStatus(/^Paused/, 30_000);
  const status = await ui.status().textContent();
  assert.match(status, /The scheduled run stopped at step 2: the link “green hat — \$15” was not found\. Its schedule does not let the model take over where a page changed; press Resume to let it\./);
  assert.doesNotMatch(status, /took over/);
  await until(async () => Object.keys(await notifications()).includes(`workflow:${flow.id}`), 'the notification');
  assert.equal(mock.requests.length, 0, 'no model request without the leave');
  assert.equal(visits(), before, 'nothing past the changed step was done');
  const steps = await ui.steps();
  assert.ok(steps.some((s) => /Replay diverged at step 2/.test(s)), steps.join('\n'));
  await ui.button('Cancel').click();
  await ui.waitStatus(/^Cancelled/);

  // On: the same run goes on with the model from step 2, and only from there.
  const rung = Date.now();
  await scheduleAndRing(name, { allowModel: true });
  await until(async () => (await stored()).find((w) => w.id === flow.id)?.lastRun?.at > rung, 'the run\'s outcome', 60_000);
  const outcome = (await stored()).find((w) => w.id === flow.id).lastRun.outcome;
  assert.match(outcome, /^Done; step 2: the link “green hat — \$15” was not found; the model took over from there/);
  assert.equal(visits(), before + 1, 'the model opened the hat');
  assert.ok(mock.requests.length > 0, 'the model took over');
  assert.equal(mock.requests.length, hatTurns.length);
  // Every request came after step 1 was replayed: each carries the replay's hint from step 2.
  for (const t of hatTurns) assert.match(t, /Replaying the saved workflow .*Find a hat.* stopped at step 2/);
  const after = await ui.steps();
  const at = after.findIndex((s) => /Replay diverged at step 2/.test(s));
  assert.equal(at, 1, after.join('\n'));
  assert.match(after[0], /replayed/);
});

test('runs missed while Chrome was closed run once at the next start, not once per miss', async () => {
  look = 'a';
  const flow = (await stored()).find((w) => w.name === 'Find a hat');
  const visits = () => site.requests.filter((r) => r.path === '/p/green-hat').length;
  const before = visits();
  // Chrome was closed for two days over a schedule of every 6 hours, and starts without the
  // workflow's alarm: what the worker finds at its next start.
  const twoDaysAgo = Date.now() - 48 * 3600_000 - 60_000;
  await panel.evaluate(async ([id, nextAt]) => {
    const { workflows } = await chrome.storage.local.get('workflows');
    const list = workflows.map((w) => (w.id === id ? { ...w, lastRun: null, schedule: { every: { hours: 6 }, nextAt, allowModel: false } } : w));
    await chrome.storage.local.set({ workflows: list });
    await chrome.alarms.clear(`workflow:${id}`);
  }, [flow.id, twoDaysAgo]);
  await env.browser.stopServiceWorker();
  // Any event starts the worker again: the panel's connection does.
  await panel.reload();
  await env.browser.waitForServiceWorker();
  await until(async () => (await stored()).find((w) => w.id === flow.id)?.lastRun, 'the missed run', 60_000);
  const after = (await stored()).find((w) => w.id === flow.id);
  assert.equal(after.lastRun.outcome, 'Done without the model');
  assert.ok(after.schedule.nextAt > Date.now(), 'the next run is after now');
  assert.ok(after.schedule.nextAt < Date.now() + 6 * 3600_000, 'and keeps the schedule\'s rhythm');
  // The worker starting again (it stops when idle) runs nothing more.
  await new Promise((r) => setTimeout(r, 2500));
  await env.browser.stopServiceWorker();
  await panel.reload();
  await env.browser.waitForServiceWorker();
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal(visits(), before + 1, 'one run for the eight missed');
  const alarm = await panel.evaluate((n) => chrome.alarms.get(n), `workflow:${flow.id}`);
  assert.ok(alarm && alarm.scheduledTime > Date.now() + 3600_000, `the alarm is set for later (${JSON.stringify(alarm)})`);
});
