// Actions that do what they say, reports that match the page, and timing (issue #45): custom
// sliders with their own ranges, a drop zone that wants the item inside it, a path drawn on a
// sketch pad, a popup left open over a form, a terminal whose caret blinks, an SVG piece moved
// by its transform, a memory game shown in quick blinks and a button that jumps away after
// each hit. Each page is a small fixture on an https origin the manifest does not list; each
// test asserts what the PAGE recorded (its state, the requests it sent), then what the
// timeline says. The scripted model picks elements by their visible names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { navigatorSuite } from './lib/suites.mjs';
import { page, text } from './lib/fixtures.mjs';
import { elements } from './lib/scripted-shopper.mjs';

const KEY = 'sk-test-agent-widgets-actions-1234';
let site, tab, ui;

// A slider made of a track and a thumb moved with the mouse (no keys), its value from
// `lo` to `hi` in steps of `step`: `aria` puts the range and value on the thumb
// (aria-valuemin/max/now); without it the value shows only as text beside the track.
const slider = (id, label, { aria, lo = 0, hi = 200, step = 1, start = 20 }) => `
  <div class="row"><span>${label}</span>
    <div class="track" id="${id}"><div class="thumb" tabindex="0" aria-label="${label} handle"
      ${aria ? `role="slider" aria-valuemin="${lo}" aria-valuemax="${hi}" aria-valuenow="${start}"` : ''}></div></div>
    <span class="value" id="${id}-value">${start}</span></div>
  <script>
    (() => {
      const track = document.getElementById('${id}');
      const thumb = track.querySelector('.thumb');
      const shown = document.getElementById('${id}-value');
      let moving = false;
      const put = (v) => {
        window.values['${id}'] = v;
        thumb.style.left = ((v - ${lo}) / (${hi} - ${lo}) * 100) + '%';
        shown.textContent = String(v);
        if (${aria}) thumb.setAttribute('aria-valuenow', String(v));
      };
      const place = (x) => {
        const r = track.getBoundingClientRect();
        const f = Math.min(Math.max((x - r.left) / r.width, 0), 1);
        put(Math.round((${lo} + f * (${hi} - ${lo})) / ${step}) * ${step});
      };
      thumb.addEventListener('mousedown', (e) => { moving = true; e.preventDefault(); });
      document.addEventListener('mousemove', (e) => { if (moving) place(e.clientX); });
      document.addEventListener('mouseup', (e) => { if (moving) { place(e.clientX); moving = false; } });
      put(${start});
    })();
  </script>`;

const routes = {
  '/mixer': page('Mixer', `<h1>Mixer</h1>
    <style>.row{display:flex;gap:12px;align-items:center;margin:18px 0}.track{position:relative;width:400px;height:8px;background:#ccc}
      .thumb{position:absolute;top:-6px;width:14px;height:20px;margin-left:-7px;background:#246;cursor:pointer}</style>
    <script>window.values = {};</script>
    ${slider('gain', 'Gain', { aria: true })}
    ${slider('bass', 'Bass', { aria: false })}
    ${slider('treble', 'Treble', { aria: true, step: 25, start: 0 })}
    <button id="save">Save mix</button>
    <script>document.getElementById('save').addEventListener('click', () => fetch('/mix?gain=' + values.gain + '&bass=' + values.bass));</script>`),
  '/mix': () => text('ok'),

  // A file dragged with the mouse onto folders: the page puts the file where it was
  // released (centred on the pointer); the recycle bin takes it only when the whole file
  // lies inside it; the locked folder refuses it, and the file goes back to where it was.
  '/files': page('Files', `<h1>Files</h1>
    <style>.zone{position:absolute;width:240px;height:120px;border:2px dashed #888}#file{position:absolute;width:80px;height:80px;background:#fc6;cursor:grab}</style>
    <div class="zone" id="bin" role="region" tabindex="0" aria-label="Recycle bin" style="left:40px;top:320px">Recycle bin</div>
    <div class="zone" id="locked" role="region" tabindex="0" aria-label="Locked folder" style="left:340px;top:320px">Locked folder</div>
    <div id="file" tabindex="0" aria-label="report.pdf" style="left:120px;top:120px"></div>
    <script>
      const file = document.getElementById('file');
      window.where = 'desk';
      let moving = null;
      file.addEventListener('mousedown', (e) => { moving = { left: file.style.left, top: file.style.top }; e.preventDefault(); });
      document.addEventListener('mouseup', (e) => {
        if (!moving) return;
        const back = moving;
        moving = null;
        file.style.left = (e.pageX - 40) + 'px';
        file.style.top = (e.pageY - 40) + 'px';
        const f = file.getBoundingClientRect();
        const within = (z) => { const r = z.getBoundingClientRect(); return f.left >= r.left && f.right <= r.right && f.top >= r.top && f.bottom <= r.bottom; };
        if (within(document.getElementById('locked'))) { file.style.left = back.left; file.style.top = back.top; fetch('/refused'); return; }
        if (within(document.getElementById('bin'))) { window.where = 'bin'; fetch('/binned'); }
      });
    </script>`),
  '/binned': () => text('ok'),
  '/refused': () => text('ok'),

  // A sketch pad that records the strokes drawn on it with the pointer.
  '/sketch': page('Sketch', `<h1>Sketch</h1>
    <canvas id="pad" width="300" height="300" role="img" aria-label="Sketch pad" tabindex="0" style="border:1px solid #888;cursor:crosshair"></canvas>
    <button id="send">Save sketch</button>
    <script>
      const pad = document.getElementById('pad');
      const g = pad.getContext('2d');
      window.strokes = [];
      let stroke = null;
      const at = (e) => { const r = pad.getBoundingClientRect(); return [Math.round(e.clientX - r.left), Math.round(e.clientY - r.top)]; };
      pad.addEventListener('pointerdown', (e) => { stroke = [at(e)]; });
      document.addEventListener('pointermove', (e) => {
        if (!stroke) return;
        const [x, y] = at(e); const [px, py] = stroke[stroke.length - 1];
        g.beginPath(); g.moveTo(px, py); g.lineTo(x, y); g.stroke();
        stroke.push([x, y]);
      });
      document.addEventListener('pointerup', () => { if (stroke) { strokes.push(stroke); stroke = null; } });
      document.getElementById('send').addEventListener('click', () => fetch('/sketch-sent?strokes=' + strokes.length));
    </script>`),
  '/sketch-sent': () => text('ok'),

  // A colour picker that opens over the form and stays open: Escape does not close it, a
  // press outside it or Tab out of it does.
  '/paint': page('Paint order', `<h1>Paint order</h1>
    <style>#picker{position:absolute;left:0;top:60px;width:100%;height:260px;background:#fff;border:1px solid #888}</style>
    <form id="f" onsubmit="event.preventDefault(); fetch('/painted?colour=' + document.getElementById('colour').value)">
      <label>Colour <input id="colour" readonly value="none"></label>
      <button type="button" id="pick">Pick colour</button>
      <div style="height:140px"></div>
      <button id="submit">Order paint</button>
    </form>
    <div id="picker" role="dialog" aria-label="Colour picker" hidden>
      <button type="button" class="swatch" data-c="red">Red</button><button type="button" class="swatch" data-c="blue">Blue</button>
    </div>
    <script>
      const picker = document.getElementById('picker');
      document.getElementById('pick').addEventListener('click', () => { picker.hidden = false; picker.querySelector('.swatch').focus(); });
      for (const s of picker.querySelectorAll('.swatch')) s.addEventListener('click', () => { document.getElementById('colour').value = s.dataset.c; });
      picker.addEventListener('focusout', (e) => { if (!picker.contains(e.relatedTarget)) picker.hidden = true; });
      document.addEventListener('mousedown', (e) => { if (!picker.hidden && !picker.contains(e.target) && e.target.id !== 'pick') picker.hidden = true; });
    </script>`),
  '/painted': () => text('ok'),

  // A terminal whose caret blinks and whose status light pulses on timers; Enter runs the
  // command line, other keys it ignores.
  '/terminal': page('Terminal', `<h1>Terminal</h1>
    <style>#term{font-family:monospace;background:#111;color:#eee;padding:8px;width:400px;height:120px}.caret{display:inline-block;width:8px;height:14px;background:#eee}.caret.off{visibility:hidden}.light{display:inline-block;width:10px;height:10px;border-radius:5px;background:#0a0}.light.dim{opacity:.4}</style>
    <div><span class="light" id="light"></span> connected</div>
    <div id="term" tabindex="0" role="textbox" aria-label="Terminal"><div id="out"></div><span>$ ls</span><span class="caret" id="caret"></span></div>
    <script>
      window.keys = [];
      setInterval(() => document.getElementById('caret').classList.toggle('off'), 40);
      setInterval(() => document.getElementById('light').classList.toggle('dim'), 45);
      document.getElementById('term').addEventListener('keydown', (e) => {
        keys.push(e.key);
        if (e.key === 'Enter') { const line = document.createElement('div'); line.textContent = 'notes.txt'; document.getElementById('out').append(line); }
      });
    </script>`),

  // A board game piece in an SVG, moved by rewriting its group's transform while dragged.
  '/board': page('Board', `<h1>Board</h1>
    <svg id="svg" width="500" height="200" style="border:1px solid #888">
      <g id="piece" transform="translate(60,100)"><circle r="30" fill="#36c" role="button" tabindex="0" aria-label="Blue piece" style="cursor:move"></circle></g>
    </svg>
    <script>
      const piece = document.getElementById('piece');
      window.piece = { x: 60, y: 100 };
      let from = null;
      piece.addEventListener('mousedown', (e) => { from = { x: e.clientX - window.piece.x, y: e.clientY - window.piece.y }; e.preventDefault(); });
      document.addEventListener('mousemove', (e) => {
        if (!from) return;
        window.piece = { x: e.clientX - from.x, y: e.clientY - from.y };
        piece.setAttribute('transform', 'translate(' + window.piece.x + ',' + window.piece.y + ')');
      });
      document.addEventListener('mouseup', () => { from = null; });
    </script>`),

  // A memory game: Start shows a sequence of cells lit a quarter second each; the player
  // then presses them in that order.
  '/memory': page('Memory', `<h1>Memory</h1>
    <style>.grid{display:grid;grid-template-columns:repeat(3,60px);gap:6px}.cell{height:60px;background:#ddd}.cell.lit{background:#fd0}</style>
    <button id="start">Start</button>
    <div class="grid">${Array.from({ length: 9 }, (_, i) => `<button class="cell" aria-label="Cell ${i + 1}" data-n="${i + 1}"></button>`).join('')}</div>
    <script>
      const SEQUENCE = [3, 7, 1, 5];
      window.pressed = [];
      const cell = (n) => document.querySelector('.cell[data-n="' + n + '"]');
      document.getElementById('start').addEventListener('click', () => {
        window.pressed = [];
        SEQUENCE.forEach((n, i) => {
          setTimeout(() => cell(n).classList.add('lit'), 300 + i * 350);
          setTimeout(() => cell(n).classList.remove('lit'), 550 + i * 350);
        });
      });
      for (const c of document.querySelectorAll('.cell')) c.addEventListener('click', () => {
        pressed.push(Number(c.dataset.n));
        if (pressed.length === SEQUENCE.length) fetch('/memory-done?ok=' + (pressed.join() === SEQUENCE.join()));
      });
    </script>`),
  '/memory-done': () => text('ok'),

  // A button that jumps to another place after each hit (a new element each time), and
  // every 700 ms on its own; ten hits win.
  '/whack': page('Whack', `<h1>Hit the button</h1><p id="score">0 hits</p>
    <div id="field" style="position:relative;width:600px;height:300px;border:1px solid #888"></div>
    <script>
      const SPOTS = [[10, 10], [400, 200], [200, 40], [500, 120], [60, 220], [300, 150], [450, 20], [120, 120], [350, 250], [20, 160], [260, 90]];
      window.hits = 0;
      window.hitTimes = [];
      let spot = 0;
      const place = () => {
        const old = document.getElementById('target');
        if (old) old.remove();
        const b = document.createElement('button');
        b.id = 'target';
        b.textContent = 'Hit me';
        b.style.cssText = 'position:absolute;left:' + SPOTS[spot % SPOTS.length][0] + 'px;top:' + SPOTS[spot % SPOTS.length][1] + 'px';
        b.addEventListener('click', () => {
          hits++;
          hitTimes.push(performance.now());
          document.getElementById('score').textContent = hits + ' hits';
          if (hits === 10) fetch('/whack-won?hits=10');
          spot++;
          place();
        });
        document.getElementById('field').append(b);
      };
      place();
      setInterval(() => { spot++; place(); }, 700);
    </script>`),
  '/whack-won': () => text('ok'),
};

let navigator = () => ({ action: 'done', success: false, answer: 'no script' });
const { navigatorTurns, paths } = navigatorSuite({ routes, key: KEY, navigator: (turn) => navigator(turn), ready: (env) => ({ site, tab, ui } = env) });
const named = (turn, name) => elements(turn).find((e) => e.name === name);
const lastResult = (turn) => (turn.match(/Result of the previous step: (.*)/) ?? [])[1] ?? '';

test('custom sliders reach the asked value on their own range (aria 0–200, and a value shown only as text); one that cannot is not read as done', async () => {
  let step = 0;
  navigator = (turn) => {
    switch (step++) {
      case 0: return { action: 'set_value', element: named(turn, 'Gain handle').id, value: 98 };
      case 1: return { action: 'set_value', element: named(turn, 'Bass handle').id, value: 98 };
      case 2: return { action: 'set_value', element: named(turn, 'Treble handle').id, value: 98 };
      case 3: return { action: 'click', element: named(turn, 'Save mix').id };
      default: return { action: 'done', success: true, answer: 'Saved.' };
    }
  };
  await ui.startTask(tab, 'Set gain and bass to 98 and save', site.url + '/mixer');
  await ui.waitStatus(/^(Done|Failed)/);

  const values = await tab.evaluate(() => window.values);
  assert.ok(Math.abs(values.gain - 98) <= 1, JSON.stringify(values));
  assert.ok(Math.abs(values.bass - 98) <= 1, JSON.stringify(values));
  // Steps of 25: 98 cannot be had; the nearest is shown.
  assert.equal(values.treble, 100);
  assert.deepEqual(paths('/mix').map((r) => r.query), [{ gain: String(values.gain), bass: String(values.bass) }]);
  const s = await ui.steps();
  assert.ok(s.some((x) => /"set_value".*"Gain handle".*✓ set the value; it shows 9[789]\b/.test(x)), s.join('\n'));
  assert.ok(s.some((x) => /"set_value".*"Bass handle".*✓ set the value; it shows 9[789]\b/.test(x)), s.join('\n'));
  const treble = s.find((x) => /"set_value".*"Treble handle"/.test(x)) ?? '';
  assert.match(treble, /✗ the slider did not take the value; it shows 100/, s.join('\n'));
  assert.match(treble, /^Could not set/, s.join('\n'));
});

test('a file dropped on a zone lands inside it; a zone that refuses it is reported as outside, not as done', async () => {
  let step = 0;
  navigator = (turn) => {
    const file = named(turn, 'report.pdf');
    switch (step++) {
      case 0: return { action: 'drag', element: file.id, to: named(turn, 'Locked folder').id };
      case 1: return { action: 'drag', element: file.id, to: named(turn, 'Recycle bin').id };
      default: return { action: 'done', success: true, answer: 'Binned.' };
    }
  };
  await ui.startTask(tab, 'Put report.pdf in the recycle bin', site.url + '/files');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.equal(await tab.evaluate(() => window.where), 'bin', (await ui.steps()).join('\n'));
  assert.equal(paths('/binned').length, 1);
  assert.ok(paths('/refused').length >= 1);
  const s = await ui.steps();
  assert.ok(s.some((x) => /"drag".*"report.pdf".*✗ dragged it, but it ended outside the target/.test(x)), s.join('\n'));
  assert.ok(s.some((x) => /"drag".*"report.pdf".*✓ dragged it; it is now inside the target/.test(x)), s.join('\n'));
});

test('a closed loop drawn along a path of points on a sketch pad', async () => {
  const loop = [[150, 50], [221, 79], [250, 150], [221, 221], [150, 250], [79, 221], [50, 150], [79, 79], [150, 50]];
  navigator = (turn) => {
    if (paths('/sketch-sent').length) return { action: 'done', success: true, answer: 'Sent.' };
    if (/dragged it along/.test(lastResult(turn))) return { action: 'click', element: named(turn, 'Save sketch').id };
    return { action: 'drag', element: named(turn, 'Sketch pad').id, path: loop.map((p) => p.join(',')).join(' ') };
  };
  await ui.startTask(tab, 'Draw a circle on the sketch pad and send it', site.url + '/sketch');
  await ui.waitStatus(/^(Done|Failed)/);

  const strokes = await tab.evaluate(() => window.strokes);
  assert.equal(strokes.length, 1, JSON.stringify(strokes));
  const pts = strokes[0];
  assert.ok(pts.length >= 30, `only ${pts.length} points`);
  const near = (a, b) => Math.abs(a[0] - b[0]) <= 2 && Math.abs(a[1] - b[1]) <= 2;
  assert.ok(near(pts[0], loop[0]) && near(pts[pts.length - 1], loop[0]), 'the loop is closed where it began');
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  assert.ok(Math.min(...xs) <= 52 && Math.max(...xs) >= 248 && Math.min(...ys) <= 52 && Math.max(...ys) >= 248, 'it went all the way round');
  assert.equal(paths('/sketch-sent').length, 1);
  const s = await ui.steps();
  assert.ok(s.some((x) => /^Dragged Sketch pad along a path of 9 points/.test(x)), s.join('\n'));
});

test('a colour picker left open over the form: the click says what covers it, Tab closes it, then the order goes', async () => {
  let step = 0;
  navigator = (turn) => {
    if (paths('/painted').length) return { action: 'done', success: true, answer: 'Ordered.' };
    switch (step++) {
      case 0: return { action: 'click', element: named(turn, 'Pick colour').id };
      case 1: return { action: 'click', element: named(turn, 'Red').id };
      // Still listed while the picker covers it, marked so.
      case 2: return { action: 'click', element: named(turn, 'Order paint').id };
      case 3: return /covered by a dialog/.test(lastResult(turn)) ? { action: 'press', key: 'Tab' } : { action: 'done', success: false, answer: 'not covered?' };
      // Tab until focus leaves the picker (it closes then) and the button is offered again.
      default: return /"Order paint" covered/.test(turn) ? { action: 'press', key: 'Tab' } : { action: 'click', element: named(turn, 'Order paint').id };
    }
  };
  await ui.startTask(tab, 'Order red paint', site.url + '/paint');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(paths('/painted').map((r) => r.query), [{ colour: 'red' }]);
  const s = await ui.steps();
  const covered = s.find((x) => /"click".*"Order paint".*✗ covered by a dialog/.test(x)) ?? '';
  assert.match(covered, /Colour picker/, s.join('\n'));
  assert.ok(s.some((x) => /"press".*"Tab".*✓/.test(x)), s.join('\n'));
  // The list the model read while the picker was open offered the button, marked covered by it.
  assert.ok(navigatorTurns().some((t) => /^\[\d+\]\*? button "Order paint" covered by "Colour picker"/m.test(t)), navigatorTurns().join('\n---\n'));
});

test('a caret that blinks and a light that pulses are not effects: a key the terminal ignores reads as no reaction, Enter as done', async () => {
  let step = 0;
  navigator = (turn) => {
    const term = named(turn, 'Terminal');
    switch (step++) {
      // The page's own motion is seen while the agent waits, as a person sees it.
      case 0: return { action: 'wait', ms: 600 };
      case 1: return { action: 'press', element: term.id, key: 'F2' };
      case 2: return { action: 'press', element: term.id, key: 'Enter' };
      default: return { action: 'done', success: true, answer: 'Ran it.' };
    }
  };
  await ui.startTask(tab, 'Run the command in the terminal', site.url + '/terminal');
  await ui.waitStatus(/^(Done|Failed)/);

  const keys = await tab.evaluate(() => window.keys);
  assert.ok(keys.includes('F2') && keys.includes('Enter'), JSON.stringify(keys));
  const s = await ui.steps();
  const f2 = s.find((x) => /"press".*"F2"/.test(x)) ?? '';
  assert.match(f2, /✗ .*the page did not react/, s.join('\n'));
  assert.doesNotMatch(f2, /content changed/);
  assert.ok(s.some((x) => /"press".*"Enter".*✓ pressed the key; 1 element appeared/.test(x)), s.join('\n'));
});

test('an SVG piece moved by its transform is reported as moved, not as "did not react"', async () => {
  let step = 0;
  navigator = (turn) => {
    switch (step++) {
      case 0: return { action: 'drag', element: named(turn, 'Blue piece').id, dx: 200, dy: 0 };
      default: return { action: 'done', success: true, answer: 'Moved.' };
    }
  };
  await ui.startTask(tab, 'Move the blue piece 200 pixels right', site.url + '/board');
  await ui.waitStatus(/^(Done|Failed)/);

  const piece = await tab.evaluate(() => window.piece);
  assert.ok(Math.abs(piece.x - 260) <= 2 && Math.abs(piece.y - 100) <= 2, JSON.stringify(piece));
  const s = await ui.steps();
  assert.ok(s.some((x) => /"drag".*"Blue piece".*✓ dragged it; it moved/.test(x)), s.join('\n'));
  assert.ok(!s.some((x) => /did not react/.test(x)), s.join('\n'));
});

test('a memory game shown in quarter-second blinks: a wait says what lit, in order, and the sequence is played back', async (t) => {
  let order = null;
  navigator = (turn) => {
    if (paths('/memory-done').length) return { action: 'done', success: true, answer: 'Played.' };
    if (order) {
      const n = order.shift();
      return { action: 'click', element: named(turn, `Cell ${n}`).id };
    }
    if (/waited 2500 ms/.test(turn)) {
      order = [...turn.matchAll(/Cell (\d): lit/g)].map((m) => Number(m[1]));
      return order.length ? { action: 'click', element: named(turn, `Cell ${order.shift()}`).id } : { action: 'done', success: false, answer: 'saw nothing' };
    }
    if (/clicked/.test(lastResult(turn))) return { action: 'wait', ms: 2500 };
    return { action: 'click', element: named(turn, 'Start').id };
  };
  await ui.startTask(tab, 'Play the memory game', site.url + '/memory');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(await tab.evaluate(() => window.pressed), [3, 7, 1, 5]);
  // What the wait reported, for docs/agent.md's Timing paragraph.
  t.diagnostic((navigatorTurns().find((x) => /waited 2500 ms/.test(x)) ?? '').match(/Cell \d: lit at [\d.]+ s/g)?.join(', ') ?? '');
  assert.deepEqual(paths('/memory-done').map((r) => r.query.ok), ['true']);
});

test('a button that jumps away after each hit is hit ten times in one step', async (t) => {
  navigator = (turn) => {
    if (/clicked it/.test(lastResult(turn))) return { action: 'done', success: true, answer: 'Ten hits.' };
    return { action: 'click', element: named(turn, 'Hit me').id, times: 10 };
  };
  await ui.startTask(tab, 'Hit the moving button 10 times', site.url + '/whack');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.equal(await tab.evaluate(() => window.hits), 10);
  // A figure for docs/agent.md's Timing paragraph, not asserted: how long the ten hits took.
  const times = await tab.evaluate(() => window.hitTimes);
  t.diagnostic(`ten hits in ${Math.round(times[times.length - 1] - times[0])} ms`);
  assert.equal(paths('/whack-won').length, 1);
  const s = await ui.steps();
  assert.ok(s.some((x) => /^Clicked Hit me 10 times/.test(x) && /✓ clicked it 10 times/.test(x)), s.join('\n'));
});
