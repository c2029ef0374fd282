// Answers are Markdown: streamed into real elements, never into markup the model controls,
// fast for long answers, and Stop is immediate. Real Chromium, the real dist/, the mock
// speaking OpenAI's wire format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { longMarkdown } from './lib/model-text.mjs';
import { openChatMode } from './lib/panel.mjs';
import { panelSuite } from './lib/suites.mjs';

const KEY = 'sk-test-markdown-12345678';
let browser, mock, panel;

panelSuite({
  mock: { delayMs: 20 },
  provider: { key: KEY },
  ready: (env) => ({ browser, mock, panel } = env),
  setUp: () => browser.context.grantPermissions(['clipboard-read', 'clipboard-write']),
});

const ui = {
  message: () => panel.getByRole('textbox', { name: 'Message' }),
  stop: () => panel.getByRole('button', { name: 'Stop' }),
  lastAnswer: () => panel.getByRole('article', { name: 'Tandem' }).last(),
};

async function ask(text) {
  await openChatMode(panel);
  await ui.message().fill(text);
  await ui.message().press('Enter');
}

const idle = () => panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'), null, { timeout: 120_000 });
const clipboard = () => panel.evaluate(() => navigator.clipboard.readText());

const RICH = [
  '# Plan',
  '',
  'This is **important** and *subtle*, with `inline code` and ~~old~~ text.',
  '',
  '- first item',
  '- second item',
  '',
  '1. one',
  '2. two',
  '',
  '> a quoted line',
  '',
  '```rust',
  'fn main() {',
  '    println!("<b>not bold</b>");',
  '}',
  '```',
  '',
  '| Name | Size |',
  '|------|-----:|',
  '| a.txt | 12 |',
  '| b.txt | 345 |',
  '',
  'See [the docs](https://docs.example.com/start) for more.',
].join('\n');

test('a streamed Markdown answer becomes elements, the code block has a language and Copy', async () => {
  mock.script({ reply: RICH });
  await ask('show me some markdown');
  const answer = ui.lastAnswer();
  // Rendered while it streams, not only at the end.
  await panel.waitForFunction(() => {
    const a = [...document.querySelectorAll('article[aria-label="Tandem"]')].at(-1);
    return a?.getAttribute('aria-busy') === 'true' && a.querySelector('strong') !== null;
  });
  await idle();
  assert.equal(await answer.locator('h1').textContent(), 'Plan');
  assert.equal(await answer.locator('strong').textContent(), 'important');
  assert.equal(await answer.locator('em').textContent(), 'subtle');
  assert.equal(await answer.locator('del').textContent(), 'old');
  assert.equal(await answer.locator(':not(pre) > code').textContent(), 'inline code');
  assert.deepEqual(await answer.locator('ul > li').allTextContents(), ['first item', 'second item']);
  assert.deepEqual(await answer.locator('ol > li').allTextContents(), ['one', 'two']);
  assert.equal(await answer.locator('blockquote').textContent(), 'a quoted line');
  assert.equal(await answer.locator('pre code').textContent(), 'fn main() {\n    println!("<b>not bold</b>");\n}\n');
  assert.equal(await answer.locator('pre b').count(), 0, 'markup inside code stays text');
  assert.equal(await answer.locator('.code-lang').textContent(), 'rust');
  assert.deepEqual(await answer.locator('table th').allTextContents(), ['Name', 'Size']);
  assert.deepEqual(await answer.locator('table tbody td').allTextContents(), ['a.txt', '12', 'b.txt', '345']);
  assert.equal(await answer.locator('table td').nth(1).evaluate((td) => getComputedStyle(td).textAlign), 'right');

  await answer.getByRole('button', { name: 'Copy code' }).click();
  assert.equal(await clipboard(), 'fn main() {\n    println!("<b>not bold</b>");\n}\n');
  await answer.getByRole('button', { name: 'Copy answer' }).click();
  assert.equal(await clipboard(), RICH, 'the answer is copied as its Markdown source');
  await browser.screenshot(panel, 'markdown-answer');
  const link = answer.getByRole('link', { name: 'the docs' });
  assert.equal(await link.getAttribute('href'), 'https://docs.example.com/start');
  assert.equal(await link.getAttribute('target'), '_blank');
  assert.deepEqual((await link.getAttribute('rel')).split(' ').sort(), ['noopener', 'noreferrer']);
  // The link really opens a new tab (served by the test). Last: the panel then follows the
  // new tab and shows that tab's conversation instead.
  await browser.context.route('https://docs.example.com/**', (r) => r.fulfill({ status: 200, contentType: 'text/html', body: '<title>Docs</title>ok' }));
  const [opened] = await Promise.all([browser.context.waitForEvent('page'), link.click()]);
  await opened.waitForLoadState();
  assert.equal(opened.url(), 'https://docs.example.com/start');
  await opened.close();
  await browser.context.unroute('https://docs.example.com/**');
});

test('raw HTML and javascript: links in an answer stay inert text', async () => {
  const reply = [
    'Look: <img src=x onerror="document.title=\'pwned\'"> here.',
    '',
    '<img src=y onerror="document.title=\'pwned\'">',
    '',
    'Click [x](javascript:alert(1)) or [y](data:text/html,<b>hi</b>) or ![pic](javascript:alert(2)).',
  ].join('\n');
  mock.script({ reply });
  await ask('try to break out');
  await idle();
  const answer = ui.lastAnswer();
  assert.equal(await answer.locator('img').count(), 0, 'no img element');
  assert.equal(await panel.locator('#messages img').count(), 0);
  assert.equal(await answer.locator('a').count(), 0, 'no live link');
  assert.equal(await answer.getByRole('link').count(), 0);
  const text = await answer.locator('.text').textContent();
  assert.ok(text.includes('<img src=x onerror='), text);
  assert.ok(text.includes('x (javascript:alert(1))'), text);
  assert.notEqual(await panel.title(), 'pwned');
});

test('a bare web address is a link and a task list shows read-only checkboxes', async () => {
  const reply = [
    'The guide is at https://docs.example.com/start. Not javascript:alert(1) though.',
    '',
    '- [x] pack the bag',
    '- [ ] book the train',
  ].join('\n');
  mock.script({ reply });
  await ask('a link and a checklist');
  await idle();
  const answer = ui.lastAnswer();
  const link = answer.getByRole('link', { name: 'https://docs.example.com/start' });
  assert.equal(await link.getAttribute('href'), 'https://docs.example.com/start', 'the sentence\'s full stop is not part of it');
  assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
  assert.equal(await answer.getByRole('link').count(), 1, 'javascript: stays text');
  const done = answer.getByRole('checkbox', { name: 'Done', exact: true });
  const open = answer.getByRole('checkbox', { name: 'Not done', exact: true });
  assert.ok(await done.isChecked());
  assert.ok(await done.isDisabled(), 'the person does not edit the model\'s list');
  assert.equal(await open.isChecked(), false);
  assert.deepEqual(await answer.locator('ul > li').allTextContents(), ['pack the bag', 'book the train']);
});

test('a 500 KB answer: its end is shown and the Message box keeps taking typing', async (t) => {
  const reply = longMarkdown(500_000, 'the-very-last-words');
  mock.script({ reply, delayMs: 0, batch: 400 });
  // A slow machine (CI has two cores): the CPU runs four times slower, so frames lag the
  // layout, and parts of the answer are shown at their estimated height for longer.
  const cdp = await browser.context.newCDPSession(panel);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  t.after(() => cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 }).then(() => cdp.detach()).catch(() => {}));
  await ask('a very long answer please');
  // Typed while the answer floods in.
  await panel.waitForFunction(() => [...document.querySelectorAll('article[aria-label="Tandem"]')].at(-1)?.getAttribute('aria-busy') === 'true');
  await ui.message().pressSequentially('still typing');
  assert.equal(await ui.message().inputValue(), 'still typing');
  await idle();
  const end = ui.lastAnswer().getByText('the-very-last-words');
  await end.waitFor({ state: 'visible' });
  // Visible means on screen: the conversation scrolled to it.
  const at = await end.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const main = document.querySelector('main');
    const m = main.getBoundingClientRect();
    return { inView: r.bottom <= m.bottom + 1 && r.top >= m.top - 1, word: [r.top, r.bottom], main: [m.top, m.bottom], scrollTop: main.scrollTop, scrollHeight: main.scrollHeight };
  });
  assert.equal(at.inView, true, `the last words are scrolled into view: ${JSON.stringify(at)}`);
  assert.equal(await ui.lastAnswer().locator('h2').count(), await countOf(reply, /^## /gm));
  await ui.message().fill('');
});

/**
 * Asks for a long answer and, once it is taller than three screens, scrolls the conversation
 * to its top as a person does: the mouse over it, the wheel turned up. Returns `main`.
 */
async function scrollUpDuringLongAnswer(bytes, last) {
  mock.script({ reply: longMarkdown(bytes, last), delayMs: 2, batch: 2 });
  await ask(`a long answer ending with ${last}`);
  const main = panel.locator('main');
  await panel.waitForFunction(() => {
    const m = document.querySelector('main');
    return m.scrollHeight > m.clientHeight * 3;
  });
  // Where the conversation went, to say so if it is not at the top.
  await main.evaluate((m) => {
    window.scrolls = [];
    m.addEventListener('scroll', () => window.scrolls.push([Math.round(performance.now()), m.scrollTop, m.scrollHeight]));
  });
  const box = await main.boundingBox();
  await panel.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await panel.mouse.wheel(0, -1_000_000);
  await panel.waitForFunction(() => document.querySelector('main').scrollTop === 0, null, { timeout: 15_000 })
    .catch(async (e) => {
      const scrolls = await panel.evaluate(() => JSON.stringify(window.scrolls.slice(0, 30)));
      throw new Error(`not at the top after the wheel; scroll events [ms, top, height]: ${scrolls}`, { cause: e });
    });
  return main;
}

/** Whether `locator` is on screen in the conversation (not only rendered somewhere in it). */
const onScreen = (locator) => locator.evaluate((el) => {
  const r = el.getBoundingClientRect();
  const m = document.querySelector('main').getBoundingClientRect();
  return r.bottom <= m.bottom + 1 && r.top >= m.top - 1;
});

test('a reader who scrolled up stays where they are while the answer streams', async () => {
  const main = await scrollUpDuringLongAnswer(100_000, 'end-of-scroll-test');
  const height = await main.evaluate((m) => m.scrollHeight);
  assert.equal(await ui.lastAnswer().getAttribute('aria-busy'), 'true', 'still streaming when the reader went up');
  await panel.waitForFunction((h) => document.querySelector('main').scrollHeight > h + 500, height);
  assert.equal(await main.evaluate((m) => m.scrollTop), 0, 'not pulled down by new text');
  await idle();
  assert.equal(await main.evaluate((m) => m.scrollTop), 0, 'not pulled down when it ended');
});

test('a reader who scrolls back down to the end follows the answer again', async () => {
  const main = await scrollUpDuringLongAnswer(80_000, 'end-of-follow-test');
  // Down to the end again, while the answer still streams.
  await panel.mouse.wheel(0, 10_000_000);
  const atEnd = () => panel.waitForFunction(() => {
    const m = document.querySelector('main');
    return m.scrollTop + m.clientHeight >= m.scrollHeight - 32;
  });
  await atEnd();
  const height = await main.evaluate((m) => m.scrollHeight);
  assert.equal(await ui.lastAnswer().getAttribute('aria-busy'), 'true', 'still streaming when the reader came back');
  await panel.waitForFunction((h) => document.querySelector('main').scrollHeight > h + 2000, height);
  await idle();
  await atEnd();
  assert.equal(await onScreen(ui.lastAnswer().getByText('end-of-follow-test')), true, 'the end of the answer is on screen');
});

test('Stop during a fast flood: no new text appears after the click', async () => {
  // Bursts of ten 200-byte deltas every 20 ms (about 100 KB a second, far faster than a
  // model writes), for longer than the test lasts; the panel keeps up, so the click is not
  // queued behind the flood on a loaded 2-core test machine, yet deltas do wait in the queue.
  const reply = longMarkdown(4_000_000, 'never-reached');
  const tokens = reply.match(/[^]{1,200}/g);
  mock.script({ tokens, delayMs: 20, batch: 10 });
  await ask('flood me');
  const length = () => ui.lastAnswer().locator('.text').evaluate((e) => e.textContent.length);
  await panel.waitForFunction(() => ([...document.querySelectorAll('article[aria-label="Tandem"]')].at(-1)?.querySelector('.text')?.textContent.length ?? 0) > 2000);
  const before = await length();
  await new Promise((r) => setTimeout(r, 200));
  assert.ok((await length()) > before, 'the answer was still growing before Stop');
  await ui.stop().click();
  const first = await length();
  const samples = [];
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 100));
    samples.push(await length());
  }
  assert.deepEqual(samples, Array(10).fill(first), 'the answer did not grow after Stop');
  assert.match(await ui.lastAnswer().textContent(), /Stopped$/);
  assert.equal(await ui.lastAnswer().getAttribute('aria-busy'), null);
  assert.ok(!(await ui.lastAnswer().textContent()).includes('never-reached'));
  assert.equal(await panel.getByRole('button', { name: 'Send' }).isEnabled(), true);
  // The worker aborted the HTTP stream.
  for (let i = 0; i < 50 && !mock.requests.at(-1).aborted; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(mock.requests.at(-1).aborted, true);
});

function countOf(text, re) {
  return (text.match(re) ?? []).length;
}
