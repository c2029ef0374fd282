// Runs extension/content/driver.js in headless Chromium on the pages in ./pages and
//   - checks act() end to end (type, select, click, scroll, read, highlight, error codes), and
//     that no password or card number ever leaves the page;
//   - with --write, rewrites the snapshot fixtures beside this file, which the Rust tests in
//     crates/core/src/agent/tests.rs read. Ports and random document ids are replaced by fixed
//     values so the fixtures do not change from run to run.
// Usage: node tests/data/agent/regenerate.mjs [--write]   (needs tests/e2e's npm install)
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from '../../e2e/node_modules/playwright-core/index.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const driver = readFileSync(path.join(here, '../../../extension/content/driver.js'), 'utf8');
const write = process.argv.includes('--write');

const server = http.createServer((req, res) => {
  const name = path.basename(req.url.split('?')[0]) || 'shop.html';
  try {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(readFileSync(path.join(here, 'pages', name)));
  } catch {
    res.statusCode = 404;
    res.end();
  }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${server.address().port}`;

const HOSTS = {
  shop: 'https://shop.example', shop_rerendered: 'https://shop.example', login: 'https://mail.example',
  checkout: 'https://pay.example', twins: 'https://deals.example', twins_three: 'https://deals.example',
  clicks: 'https://clicks.example',
};
const docNames = new Map();
function save(name, snap) {
  const text = JSON.stringify(snap);
  assert(!text.includes('hunter2'), `${name}: password value leaked`);
  assert(!text.includes('4242'), `${name}: card number leaked`);
  if (!write) return;
  if (!docNames.has(snap.docId)) docNames.set(snap.docId, `doc${docNames.size + 1}`);
  const doc = docNames.get(snap.docId);
  const fixed = JSON.parse(
    text.split(origin).join(HOSTS[name]).split(`"${snap.docId}.`).join(`"${doc}.`).split(`"${snap.docId}"`).join(`"${doc}"`),
  );
  // One element per line: reviewable diffs.
  const { elements, ...head } = fixed;
  const top = JSON.stringify(head, null, 1).replace(/\n}$/, '');
  const body = elements.map((e) => '  ' + JSON.stringify(e)).join(',\n');
  writeFileSync(path.join(here, `${name}.json`), `${top},\n "elements": [\n${body}\n ]\n}\n`);
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium' });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  // Twice: the second injection must keep the first instance (and its handles).
  const inject = async () => {
    await page.evaluate(driver);
    const id = await page.evaluate(() => __tandemDriver.docId);
    await page.evaluate(driver);
    assert.equal(await page.evaluate(() => __tandemDriver.docId), id, 'reinjection replaced the driver');
  };
  const snap = (o) => page.evaluate((o) => __tandemDriver.snapshot(o), o);
  const act = (h, a) => page.evaluate(([h, a]) => __tandemDriver.act(h, a), [h, a]);
  const find = (s, pred) => s.elements.find(pred);

  await page.goto(`${origin}/shop.html`);
  await inject();
  const s1 = await snap({ maxText: 400 });
  save('shop', s1);
  // Re-render the list as a framework would: new nodes, new order, one product more.
  await page.evaluate(() => {
    const list = document.getElementById('list');
    const cards = [...list.children].map((c) => c.outerHTML);
    const extra = '<div class="card"><a href="/p/black-sling">Black sling — $25</a><p>Small.</p><button class="add">Add to cart</button></div>';
    list.innerHTML = [cards[2], extra, cards[0], cards[1]].join('');
    document.getElementById('cart').textContent = 'Cart (1)';
  });
  const s2 = await snap({});
  save('shop_rerendered', s2);
  assert.equal(s2.elements[0].handle, s1.elements[0].handle, 'same node, same handle');

  const search = find(s2, (e) => e.attrs.name === 'q');
  assert.deepEqual(await act(search.handle, { op: 'type', text: 'duffel', clear: true, submit: false }), { ok: true, accepted: true, changes: {} });
  assert.equal(await page.evaluate(() => document.querySelector('[name=q]').value), 'duffel');
  const sort = find(s2, (e) => e.tag === 'select');
  assert.deepEqual(await act(sort.handle, { op: 'select', option: 'Price: low to high' }), { ok: true, value: 'price-asc', text: 'Price: low to high', changes: {} });
  assert.equal((await act(sort.handle, { op: 'select', option: 'Cheapest' })).error, 'not-found');
  assert.equal((await act(find(s2, (e) => e.disabled).handle, { op: 'click' })).error, 'disabled');
  assert.equal((await act(find(s1, (e) => e.name.startsWith('Blue')).handle, { op: 'click' })).error, 'stale-handle');
  assert.equal((await act('elsewhere.1', { op: 'click' })).error, 'stale-handle');
  assert.equal((await act(`${s2.docId}.9999`, { op: 'click' })).error, 'not-found');
  assert.equal((await act(search.handle, { op: 'fly' })).error, 'bad-action');
  const scrolled = await act(null, { op: 'scroll', direction: 'down' });
  assert(scrolled.ok && scrolled.moved && scrolled.scroll.y > 0, JSON.stringify(scrolled));
  const chip = find(s2, (e) => e.attrs.id === 'chip-sale');
  await page.evaluate(() => {
    window.__events = [];
    for (const t of ['pointerdown', 'mousedown', 'mouseup', 'click']) {
      document.addEventListener(t, (e) => __events.push(`${e.type}:${e.target.id}`), true);
    }
  });
  // Nothing listens to the chip: the click is delivered and reported as changing nothing.
  assert.deepEqual(await act(chip.handle, { op: 'click' }), { ok: true, changes: {} });
  assert.equal(await page.evaluate(() => __events.join()), 'pointerdown:chip-sale,mousedown:chip-sale,mouseup:chip-sale,click:chip-sale');
  assert.deepEqual(await act(find(s2, (e) => e.name.startsWith('Black')).handle, { op: 'read' }), { ok: true, text: 'Black sling — $25' });
  assert.deepEqual(await act(chip.handle, { op: 'highlight', ms: 200 }), { ok: true });
  assert.equal((await snap({})).elements.length, s2.elements.length, 'the overlay is not reported');
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => document.documentElement.lastElementChild.tagName), 'BODY', 'overlay removed');
  // `expect`: act only while the page is as the last snapshot saw it.
  const s3 = await snap({});
  const onLook = (h, a) => page.evaluate(([h, a]) => __tandemDriver.act(h, a, null, null, true), [h, a]);
  assert.deepEqual(await onLook(find(s3, (e) => e.name.startsWith('Black')).handle, { op: 'read' }), { ok: true, text: 'Black sling — $25' });
  await page.evaluate(() => { document.getElementById('cart').textContent = 'Cart (2)'; });
  assert.equal((await onLook(find(s3, (e) => e.attrs.id === 'chip-sale').handle, { op: 'click' })).error, 'changed');
  assert.equal(await page.evaluate(() => __events.length), 4, 'nothing was clicked on a changed page');
  // `ticket`: the watch's first look is handed to lookOf(ticket) before the act returns, and
  // the act says whether it still held at the end, or carries the look taken after it.
  const early = (ticket) => page.evaluate(async ([h, ticket]) => {
    const at = {};
    const acting = __tandemDriver.act(h, { op: 'click' }, { maxText: 0 }, null, false, ticket).then((r) => { at.act = performance.now(); return r; });
    const look = await __tandemDriver.lookOf(ticket);
    at.look = performance.now();
    const result = await acting;
    return { look: JSON.parse(look).elements.length, before: at.look < at.act, result: { ...result, look: typeof result.look } };
  }, [find(s3, (e) => e.attrs.id === 'chip-sale').handle, ticket]);
  const s4 = await snap({});
  const quiet = await early(41);
  assert.deepEqual(quiet, { look: s4.elements.length, before: true, result: { ok: true, changes: {}, lookKept: true, look: 'undefined' } });
  await page.evaluate(() => document.getElementById('chip-sale').addEventListener('click', () => setTimeout(() => { document.getElementById('cart').textContent = 'Cart (3)'; }, 40)));
  const late = await early(42);
  assert.equal(late.before, true, 'the first look was handed out before the act ended');
  assert.equal(late.result.lookKept, undefined, 'a look the page changed after is not kept');
  assert.equal(late.result.look, 'string', 'the look taken after the change comes with the result');

  // Hit-testing looks into open shadow roots: the rating's button is reached, not its host.
  await page.evaluate(() => window.scrollTo(0, 0));
  const stars = find(await snap({}), (e) => e.shadow && e.tag === 'button');
  await page.evaluate(() => {
    window.__starred = 0;
    document.querySelector('custom-rating').shadowRoot.querySelector('button').addEventListener('click', () => __starred++);
  });
  assert.equal((await act(stars.handle, { op: 'click' })).ok, true);
  assert.equal(await page.evaluate(() => __starred), 1);

  await page.goto(`${origin}/login.html`);
  await inject();
  const login = await snap({ maxText: 300 });
  save('login', login);
  // ...and into same-origin frames: the frame's button is reached through its iframe.
  await page.evaluate(() => {
    window.__verified = 0;
    document.querySelector('iframe').contentDocument.querySelector('button').addEventListener('click', (e) => { e.preventDefault(); __verified++; });
  });
  assert.equal((await act(find(login, (e) => e.name === 'Verify').handle, { op: 'click' })).ok, true);
  assert.equal(await page.evaluate(() => __verified), 1);
  // A banner over the frame covers the frame's button too.
  await page.evaluate(() => {
    const r = document.querySelector('iframe').getBoundingClientRect();
    const d = document.createElement('div');
    d.id = 'over';
    d.textContent = 'Promo';
    d.style.cssText = `position:fixed;left:${r.left}px;top:${r.top}px;width:${r.width}px;height:${r.height}px;background:#fff`;
    document.body.append(d);
  });
  const overFrame = await act(find(login, (e) => e.name === 'Verify').handle, { op: 'click' });
  assert.equal(overFrame.error, 'covered', JSON.stringify(overFrame));
  assert.equal(find(await snap({}), (e) => e.name === 'Verify').covered, true);
  assert.equal(await page.evaluate(() => __verified), 1);
  await page.goto(`${origin}/checkout.html`);
  await inject();
  save('checkout', await snap({}));
  await page.goto(`${origin}/twins.html`);
  await inject();
  save('twins', await snap({}));
  await page.evaluate(() => {
    const d = document.createElement('div');
    d.innerHTML = '<button>Add to cart</button>';
    document.querySelector('section').append(d);
  });
  save('twins_three', await snap({}));

  // Clicks land where a person's would (clicks.html).
  await page.goto(`${origin}/clicks.html`);
  await inject();
  const c = await snap({});
  save('clicks', c);
  const named = (n) => find(c, (e) => (e.name || e.text) === n);
  const tab = find(c, (e) => e.role === 'tab' && e.name === 'Reviews');
  const link = find(c, (e) => e.attrs.id === 'tab-reviews');
  assert(tab.bare && link.within === c.elements.indexOf(tab), 'the tab holds nothing but its link');
  const list = find(c, (e) => e.attrs.id === 'suggest');
  const parma = named('Parma');
  assert(list.bare && parma.interactive.includes('item') && parma.within === c.elements.indexOf(list), JSON.stringify(parma));
  assert.deepEqual(c.elements.filter((e) => e.group === 'Shipping').map((e) => e.attrs.name), ['s1', 's2', 's3']);
  assert.deepEqual(c.elements.filter((e) => e.covered).map((e) => e.name), ['Row 1', 'Row 2', 'Buy now']);
  assert(!named('Accept cookies').covered && !named('Reply').covered);
  // A click on the tab lands on its link: the link's default action changes the URL.
  await page.evaluate(() => {
    window.__events = [];
    for (const t of ['mousedown', 'click']) document.addEventListener(t, (e) => __events.push(`${e.type}:${e.target.id || e.target.tagName}`), true);
  });
  const switched = await act(tab.handle, { op: 'click' });
  assert.equal(await page.evaluate(() => __events.join()), 'mousedown:tab-reviews,click:tab-reviews');
  assert(switched.ok && switched.changes.url.endsWith('#reviews'), JSON.stringify(switched));
  // A suggestion item selects itself.
  const picked = await act(parma.handle, { op: 'click' });
  assert.equal(await page.evaluate(() => document.getElementById('city').value), 'Parma');
  assert.deepEqual(picked, { ok: true, changes: { fields: 1 } }, 'the value the page set by script is seen');
  // The covered button is not clicked, and the failure names the banner.
  const buy = named('Buy now');
  const covered = await act(buy.handle, { op: 'click' });
  assert.equal(covered.error, 'covered', JSON.stringify(covered));
  assert.deepEqual(covered.by, { tag: 'div', role: 'dialog', name: 'Cookie consent' });
  assert.equal(await page.title(), 'Clicks', 'the covered button was not clicked');
  assert.deepEqual(await act(named('Accept cookies').handle, { op: 'click' }), { ok: true, changes: { removed: 1 } });
  assert.deepEqual(await act(buy.handle, { op: 'click' }), { ok: true, changes: { title: true } });
  assert.equal(await page.title(), 'Bought');
  assert.deepEqual(await act(named('Does nothing').handle, { op: 'click' }), { ok: true, changes: {} });
  // Typing into a covered field is refused the same way.
  assert.equal((await act(named('Row 1').handle, { op: 'click' })).error, 'covered');

  // A React-style controlled input: the instance's own value setter records writes, and the
  // input handler only reports a change when the value differs from the recorded one. A
  // plain `el.value = …` is swallowed; the driver's prototype setter is not.
  await page.setContent('<input id="r">');
  await page.evaluate(() => {
    const inp = document.getElementById('r');
    const proto = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value');
    let tracked = '';
    Object.defineProperty(inp, 'value', { get() { return proto.get.call(this); }, set(v) { tracked = v; proto.set.call(this, v); } });
    window.__changes = [];
    inp.addEventListener('input', () => { if (inp.value !== tracked) __changes.push(inp.value); tracked = inp.value; });
  });
  await inject();
  const field = (await snap({})).elements[0];
  assert.deepEqual(await act(field.handle, { op: 'type', text: 'hello', clear: true, submit: true }), { ok: true, accepted: true, changes: {} });
  assert.equal(await page.evaluate(() => __changes.join('|')), 'hello');
  console.log(write ? 'driver checks passed; fixtures rewritten' : 'driver checks passed');
} finally {
  await browser.close();
  server.close();
}
