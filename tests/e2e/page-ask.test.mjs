// "Ask about this page" in the real browser: the question reaches the provider with the page's
// main text fenced as data (never its navigation, banner, ads, sidebar or footer), "Summarize
// this page" is one click, `/page …` in the Message box does the same, and a page Tandem
// cannot read (Chrome's own page, an extension's page, an error page where executeScript
// fails) is a sentence in the panel, the question kept in the Message box, and no request.
//
// The article is served on an https origin the manifest does not list (routeSite), so the
// reading needs the access a user's site needs. The panel is opened as a tab and follows
// whichever other tab is brought to the front, as the side panel follows its window.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { routeSite } from './lib/fixtures.mjs';
import { setContextWindow, useProvider } from './lib/panel.mjs';

const KEY = 'sk-page-ask-test-1234';
const NEWS = 'https://news.tandem.test';
const DOWN = 'https://down.tandem.test';

// Every part of the page that is not the article carries a marker the request must not hold.
const CHROME_MARKERS = ['NAVLINK-SPORT-7731', 'SITE-BANNER-TAGLINE-4410', 'ADVERT-BUY-NOW-9921', 'SIDEBAR-MOST-READ-5512', 'FOOTER-COPYRIGHT-3307', 'COOKIE-BANNER-2231'];
const ARTICLE = [
  'ARTICLE-FACT-1: Sea otters hold hands while they sleep so they do not drift apart.',
  'ARTICLE-FACT-2: A sea otter has up to a million hairs per square inch of fur.',
];
const article = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Otters of the Bay</title></head><body>
<header class="site-header"><nav aria-label="Sections"><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">NAVLINK-SPORT-7731</a></nav>
<p>SITE-BANNER-TAGLINE-4410: the bay's own paper</p></header>
<div class="ad-slot"><p>ADVERT-BUY-NOW-9921: fifty percent off kayaks</p></div>
<main>
  <article>
    <header><h1>Otters of the Bay</h1><p>By the science desk</p></header>
    <p>${ARTICLE[0]}</p>
    <p>${ARTICLE[1]}</p>
  </article>
  <aside><h2>Most read</h2><p>SIDEBAR-MOST-READ-5512</p></aside>
</main>
<div role="dialog" aria-label="Cookies"><p>COOKIE-BANNER-2231: we use cookies</p></div>
<footer><p>FOOTER-COPYRIGHT-3307 All rights reserved.</p></footer>
</body></html>`;

// A long article: each paragraph names its number, so the request shows where the cut fell.
const LONG_PARAGRAPHS = 3000;
const longArticle = `<!doctype html><html lang="en"><head><title>The long read</title></head><body>
<nav><a href="/">NAVLINK-SPORT-7731</a></nav>
<article>${Array.from({ length: LONG_PARAGRAPHS }, (_, i) => `<p>Paragraph ${i + 1} of the long read tells one more small thing about otters.</p>`).join('\n')}</article>
</body></html>`;

let browser, mock, site, panel, tab;

before(async () => {
  mock = await startMockProvider({ delayMs: 1 });
  browser = await launchExtension();
  site = await routeSite(browser.context, { origin: NEWS, routes: { '/otters': article, '/long': longArticle } });
  // A site that cannot be reached: Chrome shows its error page, where executeScript fails.
  await browser.context.route(`${DOWN}/**`, (route) => route.abort('connectionrefused'));
  panel = await browser.openPanel();
  await configure();
  tab = await browser.context.newPage();
});
after(async () => {
  await site?.close();
  await browser?.close();
  await mock?.close();
});
// A short answer: the mock's default echoes the whole question, page text included.
beforeEach(() => { mock.reset(); mock.setDefault({ reply: 'Mostly about otters.' }); });

const message = () => panel.getByRole('textbox', { name: 'Message' });
const memoryLine = () => panel.getByRole('status', { name: 'Memory' });
const bubbles = (name) => panel.getByRole('log', { name: 'Conversation' }).getByRole('article', { name });
const alertLine = () => panel.getByRole('alert');

async function configure() {
  // The first run opens Settings by itself.
  await panel.waitForTimeout(200);
  await useProvider(panel, { baseUrl: `${mock.url}/v1`, model: 'gpt-page', key: KEY });
}

/** Shows `url` in the test tab, brings it to the front and waits until the panel follows it. */
async function visit(url, memory) {
  await tab.goto(url).catch(() => {}); // an unreachable site still commits Chrome's error page
  await tab.bringToFront();
  await memoryLine().filter({ hasText: memory }).waitFor();
}

/** Waits for the request whose last message ends with `question`, then for the answer's end. */
async function requestFor(question) {
  const request = await mock.waitForRequest((r) => r.path === '/v1/chat/completions' && String(r.body?.messages?.at(-1)?.content ?? '').endsWith(question));
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
  return request;
}

/** The page text the last user message fences, and what follows the fence. */
function fenced(request) {
  const last = request.body.messages.at(-1);
  assert.equal(last.role, 'user');
  const m = /^⟦untrusted data: page text⟧\n([\s\S]*)\n⟦\/untrusted data⟧\n\n([\s\S]*)$/.exec(last.content);
  assert.ok(m, `the page text is fenced before the question: ${last.content.slice(0, 300)}`);
  return { inside: m[1], after: m[2] };
}

function assertArticleOnly(request) {
  const { inside } = fenced(request);
  for (const fact of ARTICLE) assert.ok(inside.includes(fact), `the article is inside the fence: ${fact}`);
  assert.match(inside, /^Title: Otters of the Bay\nAddress: https:\/\/news\.tandem\.test\/otters/);
  const whole = JSON.stringify(request.body);
  for (const marker of CHROME_MARKERS) assert.ok(!whole.includes(marker), `not in the request: ${marker}`);
  // The system prompt says how to read the fence.
  const system = request.body.messages.find((m) => m.role === 'system')?.content ?? '';
  assert.match(system, /fenced as "page text"/);
}

test('"Ask about this page" sends the question with the article, fenced, and none of the page around it', async () => {
  await visit(`${NEWS}/otters`, 'Remembered for news.tandem.test');
  await message().fill('How do otters sleep?');
  await panel.getByRole('button', { name: 'Ask about this page' }).click();
  const request = await requestFor('How do otters sleep?');
  assertArticleOnly(request);
  assert.equal(fenced(request).after, 'How do otters sleep?');
  // What the person sees: their question, marked as about the page, and the answer.
  const asked = bubbles('You').last();
  await asked.filter({ hasText: 'How do otters sleep?' }).waitFor();
  assert.match(await asked.textContent(), /About this page/);
  assert.ok(!(await asked.textContent()).includes('ARTICLE-FACT-1'), 'the page text is not pasted into the bubble');
  await bubbles('Tandem').last().filter({ hasText: 'Mostly about otters.' }).waitFor();
  assert.equal(await message().inputValue(), '');
  // The page text never reaches chrome.storage.local (only the in-memory session store).
  const local = await panel.evaluate(() => chrome.storage.local.get(null));
  assert.ok(!JSON.stringify(local).includes('ARTICLE-FACT'), 'no page text in storage.local');
});

test('"Summarize this page" is one click', async () => {
  await message().fill('');
  await panel.getByRole('button', { name: 'Summarize this page' }).click();
  const request = await requestFor('Summarize this page.');
  assertArticleOnly(request);
  assert.equal(fenced(request).after, 'Summarize this page.');
  await bubbles('You').filter({ hasText: 'Summarize this page.' }).waitFor();
});

test('"/page what is this?" in the Message box asks about the page the same way', async () => {
  await message().fill('/page what is this?');
  await message().press('Enter');
  const request = await requestFor('what is this?');
  assertArticleOnly(request);
  assert.equal(fenced(request).after, 'what is this?');
  await bubbles('You').filter({ hasText: /^About this page.*what is this\?/ }).first().waitFor();
  assert.ok(!(await bubbles('You').last().textContent()).includes('/page'));
});

test('a follow-up after a page question still fences the page text as data', async () => {
  await message().fill('And their fur?');
  await message().press('Enter');
  const request = await requestFor('And their fur?');
  const history = request.body.messages.filter((m) => m.role === 'user').map((m) => m.content);
  const earlier = history.find((c) => c.includes('ARTICLE-FACT-2'));
  assert.ok(earlier, 'the page question is in the history');
  assert.match(earlier, /^⟦untrusted data: page text⟧\n/);
  assert.equal(history.at(-1), 'And their fur?');
});

test('Chrome\'s own page: a sentence in the panel, the question kept, no request', async () => {
  await visit('chrome://version/', 'Not remembered');
  await message().fill('What version is this?');
  await panel.getByRole('button', { name: 'Ask about this page' }).click();
  await alertLine().filter({ hasText: 'Tandem cannot read chrome://version/: Chrome does not let extensions read or change its own pages.' }).waitFor();
  assert.equal(await message().inputValue(), 'What version is this?');
  assert.equal(await bubbles('You').filter({ hasText: 'What version is this?' }).count(), 0, 'the question is taken back out');
  assert.equal(mock.requests.length, 0, 'nothing was sent to the provider');
});

test('an extension\'s page and "Summarize this page": a sentence, the box untouched, no request', async () => {
  await visit(browser.url('manifest.json'), 'Not remembered');
  await message().fill('my draft');
  await panel.getByRole('button', { name: 'Summarize this page' }).click();
  await alertLine().filter({ hasText: /^Tandem cannot read chrome-extension:\/\/.*an extension's own page/ }).waitFor();
  assert.equal(await message().inputValue(), 'my draft');
  assert.equal(mock.requests.length, 0, 'nothing was sent to the provider');
});

test('a page where executeScript fails (an error page): a sentence, "/page …" kept in the box, no request', async () => {
  await visit(`${DOWN}/story`, 'Remembered for down.tandem.test');
  await message().fill('/page what happened?');
  await message().press('Enter');
  await alertLine().waitFor();
  assert.match(await alertLine().textContent(), /down\.tandem\.test.*error page/);
  assert.doesNotMatch(await alertLine().textContent(), /Frame with ID|Cannot access/i, 'none of Chrome\'s raw words');
  assert.equal(await message().inputValue(), '/page what happened?');
  assert.equal(mock.requests.length, 0, 'nothing was sent to the provider');
});

test('a page longer than the model\'s window is cut to fit, at a paragraph, and says so', async () => {
  // Last in the file: the smaller window stays for the rest of this browser's life.
  await setContextWindow(panel, 4096);
  await visit(`${NEWS}/long`, 'Remembered for news.tandem.test');
  await message().fill('What is the long read about?');
  await panel.getByRole('button', { name: 'Ask about this page' }).click();
  const request = await requestFor('What is the long read about?');
  const { inside } = fenced(request);
  assert.match(inside, /Paragraph 1 of the long read/);
  assert.ok(!inside.includes(`Paragraph ${LONG_PARAGRAPHS} of`), 'the end of the page did not fit');
  assert.match(inside, /about otters\.\n\n\[The rest of the page was left out to fit the model's window\.\]$/);
  assert.ok(!JSON.stringify(request.body).includes('NAVLINK-SPORT-7731'));
  // The whole request fits the window with the answer's reserve (2,048): ~4 characters a
  // token for this English text is generous.
  assert.ok(JSON.stringify(request.body.messages).length < (4096 - 2048) * 4, 'the request fits the window');
  await bubbles('Tandem').last().filter({ hasText: 'Mostly about otters.' }).waitFor();
});
