// A panel that does not grow with use: a person chats in two tabs and switches between them
// again and again, and edits a saved workflow again and again. Each switch rebuilds the
// conversation (bubbles with Copy, Hide from context, Edit, Regenerate, a code block's Copy);
// each edit rebuilds the Workflows list. After a warm-up, the panel's DOM nodes and event
// listeners (Chromium's own counters, read through CDP after a forced garbage collection)
// stay where they were however many rebuilds follow: nothing of a replaced bubble or entry
// is kept alive by a listener.
//
// Two sites, https://cats.test and https://dogs.test (origins the manifest does not list,
// served through the browser's routing). The panel is opened as a tab and follows whichever
// other tab is brought to the front, as the side panel follows its window's active tab.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { page, routeSite } from './lib/fixtures.mjs';
import { openChatMode, useProvider, waitIdle } from './lib/panel.mjs';

const CATS = 'https://cats.test';
const DOGS = 'https://dogs.test';
/** Switches before the first reading (caches, lazily made objects), and after it. */
const WARM_UP = 10;
const SWITCHES = 150;

let browser, mock, panel, cdp;

before(async () => {
  mock = await startMockProvider({ delayMs: 0 });
  browser = await launchExtension();
  for (const origin of [CATS, DOGS]) {
    await routeSite(browser.context, { origin, routes: { '/': page(origin, '<p>A page.</p>') } });
  }
  panel = await browser.openPanel();
  await useProvider(panel, { baseUrl: `${mock.url}/v1`, model: 'gpt-test', key: 'sk-leak-test-1234' });
  cdp = await browser.context.newCDPSession(panel);
  await cdp.send('Performance.enable');
});
after(async () => {
  await browser?.close();
  await mock?.close();
});

const memoryLine = () => panel.getByRole('status', { name: 'Memory' });
const conversation = () => panel.getByRole('log', { name: 'Conversation' });
const bubbles = (name) => conversation().getByRole('article', { name });

/** The panel's DOM nodes, event listeners and used JS heap, after a forced collection. */
async function counts() {
  // Twice: what the first collection frees can hold more that only the next one frees.
  for (let i = 0; i < 2; i++) await cdp.send('HeapProfiler.collectGarbage');
  const { metrics } = await cdp.send('Performance.getMetrics');
  const m = Object.fromEntries(metrics.map(({ name, value }) => [name, value]));
  return { nodes: m.Nodes, listeners: m.JSEventListeners, heap: m.JSHeapUsedSize };
}

/** Fails unless `after`, `rebuilds` rebuilds after `before`, grew by less than one DOM node a
 * rebuild (the leak kept ~50 a tab switch and ~180 a rename; a status line or a toast shown
 * between the readings is a one-off of a few dozen) and a handful of listeners. */
function assertFlat(before, after, rebuilds, what) {
  const said = `${what}: ${JSON.stringify(before)} → ${JSON.stringify(after)}`;
  assert.ok(after.nodes - before.nodes < rebuilds, `DOM nodes grew; ${said}`);
  assert.ok(after.listeners - before.listeners < 20, `event listeners grew; ${said}`);
  // The heap is noisier than the counters: only growth of the kind a leak makes (every
  // rebuild's bubbles kept) fails.
  assert.ok(after.heap - before.heap < before.heap * 0.25, `JS heap grew; ${said}`);
}

/** Asks `text` in the tab the panel shows and waits for the answer to end. */
async function chat(text) {
  await openChatMode(panel);
  await panel.getByRole('textbox', { name: 'Message' }).fill(text);
  await panel.getByRole('textbox', { name: 'Message' }).press('Enter');
  await bubbles('You').filter({ hasText: text }).waitFor();
  await waitIdle(panel);
}

/** Brings `tab` to the front and waits until the panel shows its conversation. */
async function show(tab, domain, says) {
  await tab.bringToFront();
  await memoryLine().filter({ hasText: `Remembered for ${domain} in this tab` }).waitFor();
  await bubbles('You').filter({ hasText: says }).first().waitFor();
}

test('switching between two tabs\' conversations many times leaves the panel\'s nodes, listeners and heap where they were', async () => {
  const cats = await browser.context.newPage();
  await cats.goto(`${CATS}/`);
  await memoryLine().filter({ hasText: 'Remembered for cats.test in this tab' }).waitFor();
  // Answers with a code block (its Copy button) and the per-answer buttons.
  mock.setDefault({ reply: 'Felix, as in:\n\n```js\nconst cat = "Felix";\n```' });
  await chat('My cat is called Felix.');
  await chat('What is my cat called?');
  const dogs = await browser.context.newPage();
  await dogs.goto(`${DOGS}/`);
  await memoryLine().filter({ hasText: 'Remembered for dogs.test in this tab' }).waitFor();
  mock.setDefault({ reply: 'Rex, as in:\n\n```js\nconst dog = "Rex";\n```' });
  await chat('My dog is called Rex.');
  await chat('What is my dog called?');
  mock.setDefault(null);

  const switchBoth = async () => {
    await show(cats, 'cats.test', 'My cat is called Felix.');
    await show(dogs, 'dogs.test', 'My dog is called Rex.');
  };
  for (let i = 0; i < WARM_UP; i++) await switchBoth();
  const first = await counts();
  for (let i = 0; i < SWITCHES / 2; i++) await switchBoth();
  const last = await counts();
  assertFlat(first, last, SWITCHES, `${SWITCHES} switches`);

  // The rebuilt conversation's buttons still act on their own message.
  const rex = bubbles('You').filter({ hasText: 'My dog is called Rex.' });
  await rex.getByRole('button', { name: 'Hide from context' }).click();
  assert.equal(await rex.getByRole('button', { name: 'Hide from context' }).getAttribute('aria-pressed'), 'true');
  await rex.getByRole('button', { name: 'Hide from context' }).click();
  assert.equal(await rex.getByRole('button', { name: 'Hide from context' }).getAttribute('aria-pressed'), 'false');
  await bubbles('You').last().getByRole('button', { name: 'Edit' }).click();
  assert.equal(await panel.getByRole('textbox', { name: 'Message' }).inputValue(), 'What is my dog called?');
  await panel.getByRole('textbox', { name: 'Message' }).press('Escape');
  await cats.close();
  await dogs.close();
});

test('renaming a saved workflow many times leaves the panel\'s nodes, listeners and heap where they were', async () => {
  const hat = {
    id: 'x', name: 'Find a hat', goal: 'Find a {query}', startUrl: 'https://shop.tandem.test/',
    params: [{ name: 'query', value: 'green hat' }],
    steps: [
      { action: { type: { value: { param: 'query' }, submit: true } }, page: 'shop.tandem.test/', target: { role: 'searchbox', tag: 'input', name: 'search', attrs: [['type', 'search'], ['name', 'q']] } },
      { action: 'click', page: 'shop.tandem.test/search', target: { role: 'link', tag: 'a', name: '{query} — $15' } },
    ],
  };
  const view = panel.getByRole('region', { name: 'Workflows' });
  await panel.getByRole('button', { name: 'Workflows', exact: true }).click();
  await view.waitFor();
  await panel.getByLabel('Import workflows').setInputFiles({ name: 'hat.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify([hat])) });
  await view.getByRole('listitem', { name: 'Find a hat' }).waitFor();

  // Each rename stores the list and rebuilds it (its entry, fields and buttons).
  let name = 'Find a hat';
  const rename = async (to) => {
    const entry = view.getByRole('listitem', { name, exact: true });
    await entry.getByRole('textbox', { name: `New name for ${name}` }).fill(to);
    await entry.getByRole('button', { name: `Rename ${name}` }).click();
    await view.getByRole('listitem', { name: to, exact: true }).waitFor();
    name = to;
  };
  const names = ['Find a cap', 'Find a hat'];
  for (let i = 0; i < WARM_UP; i++) await rename(names[i % 2]);
  const first = await counts();
  for (let i = 0; i < SWITCHES / 2; i++) await rename(names[i % 2]);
  const last = await counts();
  assertFlat(first, last, SWITCHES / 2, `${SWITCHES / 2} renames`);

  // The rebuilt entry's fields are the ones its buttons read.
  const entry = view.getByRole('listitem', { name, exact: true });
  await entry.getByRole('textbox', { name: 'Value of query' }).fill('red hat');
  await entry.getByRole('button', { name: 'Save as default value of query' }).click();
  await panel.getByRole('status', { name: 'Workflows status' }).filter({ hasText: 'Saved: query is “red hat” on every run that gives no other value.' }).waitFor();
  const stored = await panel.evaluate(() => chrome.storage.local.get('workflows').then((x) => x.workflows));
  assert.deepEqual(stored.map((w) => [w.name, w.params]), [[name, [{ name: 'query', value: 'red hat' }]]]);
});

test('an attachment\'s × removes that image, through its list\'s one listener', async () => {
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
  if (await panel.getByRole('region', { name: 'Workflows' }).isVisible()) {
    await panel.getByRole('button', { name: 'Workflows', exact: true }).click();
  }
  await openChatMode(panel);
  const attached = panel.getByRole('list', { name: 'Attached images' }).getByRole('img');
  await panel.getByLabel('Attach image').setInputFiles([
    { name: 'one.png', mimeType: 'image/png', buffer: png },
    { name: 'two.png', mimeType: 'image/png', buffer: png },
  ]);
  await panel.getByRole('img', { name: 'Attached image 2' }).waitFor();
  await panel.getByRole('button', { name: 'Remove image 1' }).click();
  await panel.getByRole('img', { name: 'Attached image 2' }).waitFor({ state: 'detached' });
  assert.equal(await attached.count(), 1);
  await panel.getByRole('button', { name: 'Remove image 1' }).click();
  await panel.getByRole('img', { name: 'Attached image 1' }).waitFor({ state: 'detached' });
});
