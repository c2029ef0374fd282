// Eyes for what the DOM cannot say: a bar chart drawn on a <canvas>, with no text alternative,
// on an https origin the manifest does not list. A model that takes images gets a screenshot
// of the viewport (unasked on a page that is mostly pictures; after `look` on a page whose
// list says more) in its provider's own wire format; the mock model reads the bars' places
// from the page, checks in the decoded screenshot that the pixel it picks has the target
// bar's colour (a blank, stale or misplaced screenshot fails here), and answers click_at with
// screenshot pixels. The page records which bar was clicked. A text-only model gets no image
// and no `look` in its schema; a screenshot point on an irreversible control waits for the
// person like a click on it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { lastUserText, startAgentEnv, useMockProvider } from './lib/agent-harness.mjs';
import { closeSettings, openSettings, useProvider } from './lib/panel.mjs';

const KEY = 'sk-test-agent-look-5678';
const ANTHROPIC_KEY = 'sk-ant-test-agent-look-5678';

const page = (title, body) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
  <style>body{margin:0;font:14px sans-serif}h1{margin:8px;font-size:18px}canvas{display:block;margin:8px}nav a{margin-right:6px}</style></head><body>${body}</body></html>`;

// Four bars with their labels drawn on the canvas (nothing in the DOM says which is where).
// A click inside a bar writes `clicked: <label>` into the page; anywhere else, `missed`.
const BARS = [
  { label: 'North', colour: [229, 57, 53], x: 60, h: 300 },
  { label: 'South', colour: [67, 160, 71], x: 300, h: 220 },
  { label: 'East', colour: [30, 136, 229], x: 540, h: 380 },
  { label: 'West', colour: [251, 140, 0], x: 780, h: 160 },
];
const BAR_W = 160;
const CHART_H = 480;
const chart = (extra = '') => page('Quarterly sales', `<h1>Quarterly sales</h1>${extra}
  <canvas id="chart" width="1000" height="${CHART_H}"></canvas>
  <p id="out"></p>
  <script>
    const BARS = ${JSON.stringify(BARS)};
    const c = document.getElementById('chart');
    const g = c.getContext('2d');
    g.fillStyle = '#fff'; g.fillRect(0, 0, c.width, c.height);
    g.font = '20px sans-serif';
    for (const b of BARS) {
      g.fillStyle = 'rgb(' + b.colour.join(',') + ')';
      g.fillRect(b.x, ${CHART_H} - 40 - b.h, ${BAR_W}, b.h);
      g.fillStyle = '#222';
      g.fillText(b.label, b.x + 40, ${CHART_H} - 12);
    }
    c.addEventListener('click', (e) => {
      const hit = BARS.find((b) => e.offsetX >= b.x && e.offsetX < b.x + ${BAR_W} && e.offsetY >= ${CHART_H} - 40 - b.h && e.offsetY < ${CHART_H} - 40);
      document.getElementById('out').textContent = hit ? 'clicked: ' + hit.label : 'missed';
    });
  </script>`);

// The same chart under a long list of links: the element list says enough that no
// screenshot comes unasked.
const links = '<nav>' + Array.from({ length: 16 }, (_, i) => `<a href="/report/${i + 1}">Report ${i + 1}</a>`).join('') + '</nav>';

// A payment pad drawn on a canvas: its only name is "Pay now"; clicking it pays.
const pay = page('Checkout', `<h1>Checkout</h1>
  <canvas id="pay" width="600" height="300" aria-label="Pay now"></canvas>
  <p id="out"></p>
  <script>
    const c = document.getElementById('pay');
    const g = c.getContext('2d');
    g.fillStyle = '#2e7d32'; g.fillRect(0, 0, 600, 300);
    g.fillStyle = '#fff'; g.font = '40px sans-serif'; g.fillText('PAY $499', 200, 160);
    c.addEventListener('click', () => { document.getElementById('out').textContent = 'paid'; });
  </script>`);

const routes = {
  '/chart': chart(),
  '/chart-links': chart(links),
  '/pay': pay,
};

let env, ui, tab;

before(async () => {
  env = await startAgentEnv({ routes, key: KEY, model: 'gpt-4o' });
  ({ ui, tab } = env);
});
after(async () => { await env?.close(); });

const planned = (plan, turn) => ({ reply: JSON.stringify({ plan, complete: /navigator says the task is done/.test(turn) }) });

/** The screenshots a recorded request carries, as data: URLs, in its provider's wire format. */
function imagesOf(rec) {
  const body = rec.body ?? {};
  if (rec.provider === 'anthropic') {
    return (body.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((p) => p.type === 'image')
      .map((p) => `data:${p.source.media_type};base64,${p.source.data}`);
  }
  return (body.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((p) => p.type === 'image_url')
    .map((p) => p.image_url.url);
}

/** Everything a request tells the model besides its turns: system text and output schema. */
const instructions = (rec) => JSON.stringify([rec.body?.system ?? '', (rec.body?.messages ?? []).filter((m) => m.role === 'system'), rec.body?.response_format ?? '', rec.body?.tools ?? '']);

/** Width, height and the colour at (x, y) of a screenshot, decoded in a browser page. */
async function decode(dataUrl, x, y) {
  return env.panel.evaluate(async ({ dataUrl, x, y }) => {
    const bitmap = await createImageBitmap(await (await fetch(dataUrl)).blob());
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const g = canvas.getContext('2d');
    g.drawImage(bitmap, 0, 0);
    const at = (px, py) => [...g.getImageData(px, py, 1, 1).data.slice(0, 3)];
    return { width: bitmap.width, height: bitmap.height, colour: x == null ? null : at(x, y) };
  }, { dataUrl, x, y });
}

const near = (a, b, tolerance = 40) => a.every((v, i) => Math.abs(v - b[i]) <= tolerance);

/**
 * Where the middle of `label`'s bar is in a `width`-pixel-wide screenshot of the tab's
 * viewport: the page says where its canvas is, the fixture where the bar is on it.
 */
async function barPoint(label, width) {
  const bar = BARS.find((b) => b.label === label);
  const { left, top, viewport } = await tab.evaluate(() => {
    const r = document.getElementById('chart').getBoundingClientRect();
    return { left: r.left, top: r.top, viewport: innerWidth };
  });
  const scale = width / viewport;
  return {
    x: Math.round((left + bar.x + BAR_W / 2) * scale),
    y: Math.round((top + CHART_H - 40 - bar.h / 2) * scale),
  };
}

/**
 * The chart model: on a turn with a screenshot, it finds `target`'s bar in it (and checks
 * the pixel there is that bar's colour, the other bars' places theirs) and clicks it by
 * screenshot pixels; without one, it answers `look` when `ask` is set; once the page says
 * `clicked`, done. `seen` collects what each navigator request carried.
 */
function chartModel({ target, ask, seen }) {
  return async (rec) => {
    const turn = lastUserText(rec.body);
    if (turn.startsWith('ROLE: PLANNER')) return planned(`Click the ${target} bar.`, turn);
    const images = imagesOf(rec);
    const entry = { images: images.length, instructions: instructions(rec), turn };
    seen.push(entry);
    const out = await tab.evaluate(() => document.getElementById('out')?.textContent ?? '');
    if (out) return { reply: JSON.stringify({ action: 'done', success: out === `clicked: ${target}`, answer: out }) };
    if (images.length === 0) {
      return { reply: JSON.stringify(ask ? { action: 'look' } : { action: 'done', success: false, answer: 'I cannot see the chart.' }) };
    }
    const shot = images.at(-1);
    const { width } = await decode(shot);
    const point = await barPoint(target, width);
    entry.point = point;
    entry.colour = (await decode(shot, point.x, point.y)).colour;
    entry.others = [];
    for (const other of BARS.filter((b) => b.label !== target)) {
      const p = await barPoint(other.label, width);
      entry.others.push({ label: other.label, colour: (await decode(shot, p.x, p.y)).colour });
    }
    return { reply: JSON.stringify({ action: 'click_at', x: point.x, y: point.y }) };
  };
}

const targetColour = (label) => BARS.find((b) => b.label === label).colour;

function assertSawBars(entry, target) {
  assert.ok(entry.colour, 'the model looked at a screenshot');
  assert.ok(near(entry.colour, targetColour(target)), `the screenshot shows ${target}'s colour at the point: ${entry.colour}`);
  for (const o of entry.others) {
    assert.ok(near(o.colour, targetColour(o.label)), `the screenshot shows ${o.label}'s colour at its bar: ${o.colour}`);
  }
}

test('OpenAI-compatible: a page that is mostly canvas comes with a screenshot unasked; click_at by its pixels hits the East bar', async () => {
  env.mock.reset();
  const seen = [];
  env.mock.setDefault(chartModel({ target: 'East', ask: false, seen }));
  await ui.startTask(tab, 'Click the East bar in the sales chart.', env.site.url + '/chart');
  await ui.waitStatus(/^(Done|Failed)/, 40_000);

  assert.equal(await tab.evaluate(() => document.getElementById('out').textContent), 'clicked: East');
  const first = seen[0];
  assert.equal(first.images, 1, 'the first navigator request carried one screenshot, unasked');
  assert.match(first.instructions, /"look"/, 'a model that takes images is offered look');
  assertSawBars(first, 'East');
  // The image went as OpenAI's image_url content part, a JPEG data: URL.
  const rec = env.mock.requests.find((r) => imagesOf(r).length);
  assert.match(imagesOf(rec)[0], /^data:image\/jpeg;base64,/);
  assert.match(await ui.status().textContent(), /^Done/);
});

test('Anthropic: the model asks to look, gets the screenshot as an image block, and clicks the West bar by its pixels', async () => {
  await useProvider(env.panel, { provider: 'Anthropic', baseUrl: `${env.mock.url}/v1`, model: 'claude-sonnet-4-5', key: ANTHROPIC_KEY });
  env.mock.reset();
  const seen = [];
  env.mock.setDefault(chartModel({ target: 'West', ask: true, seen }));
  await ui.startTask(tab, 'Click the West bar in the sales chart.', env.site.url + '/chart-links');
  await ui.waitStatus(/^(Done|Failed)/, 40_000);

  assert.equal(await tab.evaluate(() => document.getElementById('out').textContent), 'clicked: West');
  assert.equal(seen[0].images, 0, 'a page whose list says much gets no screenshot unasked');
  const looked = seen.find((s) => s.images === 1);
  assert.ok(looked, 'the turn after look carried the screenshot');
  assertSawBars(looked, 'West');
  const rec = env.mock.requests.find((r) => r.provider === 'anthropic' && imagesOf(r).length);
  const block = rec.body.messages.at(-1).content.find((p) => p.type === 'image');
  assert.equal(block.source.type, 'base64');
  assert.equal(block.source.media_type, 'image/jpeg');
  // Only the request of that step carried it: the next step's did not send it again.
  const after = env.mock.requests.filter((r) => r.provider === 'anthropic').slice(env.mock.requests.filter((r) => r.provider === 'anthropic').indexOf(rec) + 1);
  assert.ok(after.length > 0 && after.every((r) => imagesOf(r).length === 0));
  assert.match(await ui.status().textContent(), /^Done/);
});

test('a screenshot point on an irreversible control waits for Approve / Deny, and Deny leaves the page untouched', async () => {
  await useMockProvider(env.panel, env.mock, { key: KEY, model: 'gpt-4o' });
  env.mock.reset();
  env.mock.setDefault(async (rec) => {
    const turn = lastUserText(rec.body);
    if (turn.startsWith('ROLE: PLANNER')) return planned('Pay.', turn);
    if (/denied/.test(turn)) return { reply: JSON.stringify({ action: 'done', success: false, answer: 'Payment denied.' }) };
    if (!imagesOf(rec).length) return { reply: JSON.stringify({ action: 'look' }) };
    return { reply: JSON.stringify({ action: 'click_at', x: 200, y: 120 }) };
  });
  await ui.startTask(tab, 'Look at the checkout page.', env.site.url + '/pay');
  await ui.approval().waitFor({ timeout: 30_000 });
  assert.match(await ui.approval().textContent(), /Pay now/);
  await ui.button('Deny').click();
  await ui.waitStatus(/^(Done|Failed)/, 30_000);
  assert.equal(await tab.evaluate(() => document.getElementById('out').textContent), '', 'nothing was paid');
});

test('a text-only model gets no screenshot and no look; asking to look is refused with a sentence', async () => {
  await useMockProvider(env.panel, env.mock, { key: KEY, model: 'gpt-test' });
  env.mock.reset();
  const seen = [];
  env.mock.setDefault(async (rec) => {
    const turn = lastUserText(rec.body);
    if (turn.startsWith('ROLE: PLANNER')) return planned('Look at the chart.', turn);
    seen.push({ images: imagesOf(rec).length, instructions: instructions(rec), turn });
    if (/look is not available/.test(turn)) return { reply: JSON.stringify({ action: 'done', success: false, answer: 'I cannot see the chart.' }) };
    return { reply: JSON.stringify({ action: 'look' }) };
  });
  await ui.startTask(tab, 'Click the East bar in the sales chart.', env.site.url + '/chart');
  await ui.waitStatus(/^(Done|Failed)/, 30_000);

  assert.ok(seen.length >= 2, 'the model was asked twice');
  assert.ok(env.mock.requests.every((r) => imagesOf(r).length === 0), 'no request carried an image');
  for (const s of seen) {
    assert.doesNotMatch(s.instructions, /"look"|screenshot/i, 'look is not offered to a text-only model');
  }
  assert.match(seen[1].turn, /look is not available: this model does not take images/);
  assert.equal(await tab.evaluate(() => document.getElementById('out').textContent), '');
});

/** What Settings says under Model, as a screen reader announces it with the field. */
async function modelDescription(model) {
  await openSettings(env.panel);
  const field = env.panel.getByLabel('Model', { exact: true });
  await field.fill(model);
  const said = await field.evaluate((el) => el.getAttribute('aria-describedby').split(' ')
    .map((id) => document.getElementById(id)?.textContent ?? '').join(' ').trim());
  await closeSettings(env.panel);
  return said;
}

test('Settings says under Model whether this model gets screenshots', async () => {
  await useMockProvider(env.panel, env.mock, { key: KEY, model: 'gpt-4o' });
  assert.match(await modelDescription('gpt-4o'), /Tasks send this model screenshots of the page/);
  assert.match(await modelDescription('gpt-3.5-turbo'), /This model takes text only/);
  assert.match(await modelDescription('llava:13b'), /screenshots of the page/);
});
