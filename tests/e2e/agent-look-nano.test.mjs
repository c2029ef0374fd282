// Eyes on the device: Gemini Nano with image input. A bar chart drawn on a <canvas> (no text
// alternative) on an https origin the manifest does not list; Settings says "On-device only".
// The fake LanguageModel (lib/fake-language-model.js, loaded into a test-only copy of dist/)
// behaves like Chrome: image parts are refused unless the session was created with
// `expectedInputs` image, and a device whose model takes no images says "unavailable" to
// such a request. Its model finds the East bar BY ITS COLOUR in the screenshot it was given
// (so a blank, stale or misplaced image misses) and answers click_at with screenshot pixels;
// the page records which bar was clicked. Nothing may reach the cloud mock.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentEnv } from './lib/agent-harness.mjs';
import { closeSettings, openSettings } from './lib/panel.mjs';

const BARS = [
  { label: 'North', colour: [229, 57, 53], x: 60, h: 300 },
  { label: 'South', colour: [67, 160, 71], x: 300, h: 220 },
  { label: 'East', colour: [30, 136, 229], x: 540, h: 380 },
  { label: 'West', colour: [251, 140, 0], x: 780, h: 160 },
];
const chart = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Regional sales</title>
  <style>body{margin:0;font:14px sans-serif}h1{margin:8px;font-size:18px}canvas{display:block;margin:8px}</style></head>
  <body><h1>Regional sales</h1><canvas id="chart" width="1000" height="480"></canvas><p id="out"></p>
  <script>
    const BARS = ${JSON.stringify(BARS)};
    const c = document.getElementById('chart');
    const g = c.getContext('2d');
    g.fillStyle = '#fff'; g.fillRect(0, 0, c.width, c.height);
    for (const b of BARS) { g.fillStyle = 'rgb(' + b.colour.join(',') + ')'; g.fillRect(b.x, 440 - b.h, 160, b.h); }
    c.addEventListener('click', (e) => {
      const hit = BARS.find((b) => e.offsetX >= b.x && e.offsetX < b.x + 160 && e.offsetY >= 440 - b.h && e.offsetY < 440);
      document.getElementById('out').textContent = hit ? 'clicked: ' + hit.label : 'missed';
    });
  </script></body></html>`;

let env;
before(async () => {
  env = await startAgentEnv({
    routes: { '/chart': chart },
    key: 'sk-cloud-look-nano-1234',
    model: 'gpt-4o',
    onDevice: 'nano',
    fakeLanguageModel: { availability: 'available', delayMs: 2, contextWindow: 100_000 },
  });
});
after(async () => { await env?.close(); });

/**
 * Installs the on-device model in the worker: planner turns get a plan; a navigator turn
 * with an image finds `colour` in it (the centre of its pixels) and clicks there by
 * screenshot pixels; without one it answers `look` when the schema offers it, else gives up.
 */
async function installChartModel(sw, { images, colour }) {
  await sw.evaluate(`(() => {
    const cfg = globalThis.__fakeLanguageModel;
    cfg.images = ${images};
    cfg.calls.length = 0;
    let clicked = false;
    const colour = ${JSON.stringify(colour)};
    cfg.reply = async (turn, { parts }) => {
      if (turn.startsWith('ROLE: PLANNER')) return JSON.stringify({ plan: 'Click the East bar.', complete: /navigator says the task is done/.test(turn) });
      if (clicked) return JSON.stringify({ action: 'done', success: true, answer: 'Clicked the East bar.' });
      const shots = parts.filter((p) => p.type === 'image');
      if (!shots.length) {
        const offered = cfg.calls.some((c) => c.method === 'create' && JSON.stringify(c.options.initialPrompts ?? []).includes('"look"'));
        return JSON.stringify(offered ? { action: 'look' } : { action: 'done', success: false, answer: 'I cannot see the chart.' });
      }
      const bitmap = await createImageBitmap(shots.at(-1).value);
      const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
      const g = canvas.getContext('2d');
      g.drawImage(bitmap, 0, 0);
      const px = g.getImageData(0, 0, bitmap.width, bitmap.height).data;
      let sx = 0, sy = 0, n = 0;
      for (let y = 0; y < bitmap.height; y += 2) for (let x = 0; x < bitmap.width; x += 2) {
        const i = (y * bitmap.width + x) * 4;
        if (Math.abs(px[i] - colour[0]) < 30 && Math.abs(px[i + 1] - colour[1]) < 30 && Math.abs(px[i + 2] - colour[2]) < 30) { sx += x; sy += y; n += 1; }
      }
      if (n < 50) return JSON.stringify({ action: 'done', success: false, answer: 'The screenshot shows no East bar.' });
      clicked = true;
      return JSON.stringify({ action: 'click_at', x: Math.round(sx / n), y: Math.round(sy / n) });
    };
  })()`);
}

/** The image parts the worker's prompts carried: media type, first bytes and size. */
async function imagesSent(sw) {
  return sw.evaluate(async () => {
    const out = [];
    for (const c of globalThis.__fakeLanguageModel.calls) {
      if (!c.method.startsWith('prompt') || typeof c.input === 'string') continue;
      for (const m of c.input) {
        for (const p of Array.isArray(m.content) ? m.content : []) {
          if (p.type !== 'image') continue;
          const bytes = new Uint8Array(await p.value.arrayBuffer());
          const bitmap = await createImageBitmap(p.value);
          out.push({ type: p.value.type, head: [...bytes.slice(0, 3)], size: bytes.length, width: bitmap.width, height: bitmap.height, text: m.content.filter((q) => q.type === 'text').map((q) => q.value).join('') });
        }
      }
    }
    return out;
  });
}

const creates = (sw) => sw.evaluate(() => globalThis.__fakeLanguageModel.calls.filter((c) => c.method === 'create').map((c) => c.options.expectedInputs));

test('Nano with image input gets the screenshot as an image part and clicks the East bar by its pixels; nothing goes to the cloud', async () => {
  const sw = env.browser.serviceWorker;
  await installChartModel(sw, { images: true, colour: BARS[2].colour });
  env.mock.reset();
  await env.ui.startTask(env.tab, 'Click the East bar in the sales chart.', env.site.url + '/chart');
  await env.ui.waitStatus(/^(Done|Failed)/, 40_000);

  assert.equal(await env.tab.evaluate(() => document.getElementById('out').textContent), 'clicked: East');
  assert.equal(env.mock.requests.length, 0, 'nothing went to the cloud');
  assert.deepEqual(await creates(sw), [[{ type: 'text' }, { type: 'image' }]], 'one on-device session, created with image input');
  const images = await imagesSent(sw);
  assert.ok(images.length >= 1, 'a prompt carried the screenshot');
  const [shot] = images;
  assert.equal(shot.type, 'image/jpeg');
  assert.deepEqual(shot.head, [0xff, 0xd8, 0xff], 'its bytes are a JPEG');
  assert.ok(shot.width > 0 && shot.width <= 1024 && shot.height > 0, `${shot.width}×${shot.height}`);
  assert.match(shot.text, /screenshot/i, 'the turn that carries it says so');
  assert.match(await env.ui.status().textContent(), /^Done/);
});

test('a device whose Nano takes text only: a text-only session, no image part, no look offered', async () => {
  const sw = env.browser.serviceWorker;
  await installChartModel(sw, { images: false, colour: BARS[2].colour });
  env.mock.reset();
  await env.ui.startTask(env.tab, 'Click the East bar in the sales chart.', env.site.url + '/chart');
  await env.ui.waitStatus(/^(Done|Failed)/, 40_000);

  assert.equal(await env.tab.evaluate(() => document.getElementById('out').textContent), '');
  assert.equal(env.mock.requests.length, 0, 'nothing went to the cloud');
  assert.deepEqual(await creates(sw), [[{ type: 'text' }]], 'created without image input');
  assert.deepEqual(await imagesSent(sw), []);
  const constraints = await sw.evaluate(() => globalThis.__fakeLanguageModel.calls.filter((c) => c.method.startsWith('prompt')).map((c) => JSON.stringify(c.options.responseConstraint ?? '')));
  assert.ok(constraints.length > 0 && constraints.every((c) => !c.includes('"look"')), 'look is not in the answer schema');
});

test('Settings says under Model, for "On-device only", that Gemini Nano gets screenshots only where its model takes images', async () => {
  await openSettings(env.panel);
  const field = env.panel.getByLabel('Model', { exact: true });
  const said = await field.evaluate((el) => el.getAttribute('aria-describedby').split(' ')
    .map((id) => document.getElementById(id)?.textContent ?? '').join(' ').trim());
  await closeSettings(env.panel);
  assert.match(said, /Gemini Nano gets screenshots of the page only where Chrome's on-device model takes images/);
  assert.doesNotMatch(said, /Tasks send this model screenshots/, 'not the sentence about the cloud model (gpt-4o)');
});
