// Targets the DOM alone does not show, and facts the list adds so a model can choose among
// look-alikes: an element that reacts only to hover, an outline in a drawing where a shape is
// dropped, a puzzle piece and a resize grip whose handlers sit on the document, a text area's
// resize corner, a 5×5 grid of identical circles, a calendar's time slots, a large drawing
// clicked at a point, controls drawn by CSS alone (an id, a CSS image), marks a CSS image
// places in a tic-tac-toe board, the 150th of 200 identical rows in a scrolled box, and
// identical pins placed on a map by absolute position.
// The pages are served on an https origin the manifest does not list, trusted up front. Each
// test asserts what the PAGE recorded (its requests, its own state read with tab.evaluate).
// The scripted model picks elements as a model reading the list would: by name, or by the
// row, column or place its line gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { navigatorSuite } from './lib/suites.mjs';
import { page, text } from './lib/fixtures.mjs';
import { elements } from './lib/scripted-shopper.mjs';

const KEY = 'sk-test-agent-widgets-targets-1234';
let site, tab, ui;

// A 5×5 board of identical circles, each recording its own row and column when clicked.
const dots = Array.from({ length: 25 }, (_, i) => {
  const row = Math.floor(i / 5) + 1;
  const col = (i % 5) + 1;
  return `<circle cx="${col * 60 - 20}" cy="${row * 60 - 20}" r="22" fill="#3a7" data-row="${row}" data-col="${col}"/>`;
}).join('');

// A week's calendar as a grid: time rows with row headers, day columns with column headers,
// each slot an empty cell that books itself when clicked.
const days = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'];
const hours = ['9 am', '10 am', '11 am', '12 pm', '1 pm', '2 pm', '3 pm'];
const calendar = `<table role="grid" aria-label="Week of 7 June" id="cal">
  <tr role="row"><th role="columnheader"></th>${days.map((d) => `<th role="columnheader">${d}</th>`).join('')}</tr>
  ${hours.map((h) => `<tr role="row"><th role="rowheader">${h}</th>${days.map((d) => `<td role="gridcell" class="slot" data-at="${d} ${h}"></td>`).join('')}</tr>`).join('')}
</table>`;

const routes = {
  // A delivery note shown while the pointer is over "Shipping details" (mouseenter only).
  '/product': page('Desk lamp', `<h1>Desk lamp</h1><p>$39</p>
    <style>#ship{display:inline-block;padding:6px;border-bottom:1px dotted #555}#tip{display:none}</style>
    <span id="ship">Shipping details</span><div id="tip">Ships in 2 days from Lyon.</div>
    <script>
      const ship = document.getElementById('ship');
      ship.addEventListener('mouseenter', () => { document.getElementById('tip').style.display = 'block'; fetch('/shown-shipping'); });
      ship.addEventListener('mouseleave', () => { document.getElementById('tip').style.display = 'none'; });
    </script>`),
  '/shown-shipping': () => text('ok'),

  // Drag the red ball into the square outline; the page moves the ball with the pointer
  // (mousedown on the ball, mousemove and mouseup on the document).
  '/ball': page('Ball game', `<h1>Put the ball in the box</h1>
    <svg id="field" width="500" height="220" style="border:1px solid #ccc">
      <rect id="box" x="330" y="50" width="120" height="120" fill="none" stroke="#070" stroke-width="4"/>
      <circle id="ball" cx="70" cy="110" r="24" fill="#d22"/>
    </svg>
    <script>
      const svg = document.getElementById('field');
      const ball = document.getElementById('ball');
      let dragging = false;
      ball.addEventListener('mousedown', (e) => { dragging = true; e.preventDefault(); });
      const at = (e) => { const r = svg.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
      document.addEventListener('mousemove', (e) => { if (!dragging) return; const [x, y] = at(e); ball.setAttribute('cx', x); ball.setAttribute('cy', y); });
      document.addEventListener('mouseup', (e) => {
        if (!dragging) return;
        dragging = false;
        const [x, y] = at(e);
        window.inBox = x > 330 && x < 450 && y > 50 && y < 170;
        if (window.inBox) fetch('/scored');
      });
    </script>`),
  '/scored': () => text('ok'),

  // A slide-to-verify puzzle: the piece (cursor: grab, no listener of its own) is dragged
  // along its track by handlers on the document; far enough, the page says verified.
  '/verify': page('Verify', `<h1>Slide to verify</h1>
    <style>#track{position:relative;width:320px;height:44px;background:#eee}#puzzle-piece{position:absolute;left:0;top:0;width:44px;height:44px;background:#48c;cursor:grab}</style>
    <div id="track"><div id="puzzle-piece"></div></div>
    <script>
      const piece = document.getElementById('puzzle-piece');
      let from = null;
      document.addEventListener('mousedown', (e) => { if (e.target === piece) { from = e.clientX; e.preventDefault(); } });
      document.addEventListener('mousemove', (e) => { if (from !== null) piece.style.left = Math.max(0, Math.min(276, e.clientX - from)) + 'px'; });
      document.addEventListener('mouseup', (e) => {
        if (from === null) return;
        const moved = e.clientX - from;
        from = null;
        window.verified = moved > 200;
        if (window.verified) fetch('/verified');
      });
    </script>`),
  '/verified': () => text('ok'),

  // A note widget resized by a jQuery-UI-like grip in its corner (handlers on the document),
  // and a text area whose own corner resizes it.
  '/notes': page('Notes', `<h1>Notes</h1>
    <style>#note{position:relative;width:200px;height:120px;border:1px solid #999;background:#ffc}.ui-resizable-handle{position:absolute;right:0;bottom:0;width:14px;height:14px;background:#777}</style>
    <div id="note"><p>Buy milk</p><div class="ui-resizable-handle ui-resizable-se"></div></div>
    <label>Comment <textarea id="comment" rows="3"></textarea></label>
    <script>
      const note = document.getElementById('note');
      const grip = note.querySelector('.ui-resizable-handle');
      let start = null;
      document.addEventListener('mousedown', (e) => { if (e.target === grip) { start = [e.clientX, note.offsetWidth]; e.preventDefault(); } });
      document.addEventListener('mousemove', (e) => { if (start) note.style.width = (start[1] + e.clientX - start[0]) + 'px'; });
      document.addEventListener('mouseup', () => { if (start) { start = null; fetch('/resized?width=' + note.offsetWidth); } });
    </script>`),
  '/resized': () => text('ok'),

  // A 5×5 board of identical circles; the svg listens and records the circle clicked.
  '/dots': page('Dots', `<h1>Dots</h1>
    <svg id="board" width="300" height="300">${dots}</svg>
    <script>
      document.getElementById('board').addEventListener('click', (e) => {
        const c = e.target.closest('circle');
        if (c) fetch('/dot?row=' + c.dataset.row + '&col=' + c.dataset.col);
      });
    </script>`),
  '/dot': () => text('ok'),

  '/calendar': page('Book a meeting', `<h1>Book a meeting</h1>
    <style>td.slot{width:60px;height:24px;border:1px solid #ccc;cursor:pointer}</style>
    ${calendar}
    <script>
      for (const slot of document.querySelectorAll('.slot')) {
        slot.addEventListener('click', () => fetch('/book?at=' + encodeURIComponent(slot.dataset.at)));
      }
    </script>`),
  '/book': () => text('ok'),

  // A floor plan larger than a third of the window, listening on the drawing itself.
  '/floor': page('Floor plan', `<h1>Pick a desk area</h1>
    <svg id="plan" role="img" aria-label="Office floor plan" width="1000" height="600" style="background:#f4f4f4">
      <line x1="500" y1="0" x2="500" y2="600" stroke="#999"/><line x1="0" y1="300" x2="1000" y2="300" stroke="#999"/>
    </svg><p id="picked"></p>
    <script>
      document.getElementById('plan').addEventListener('click', (e) => {
        const r = e.currentTarget.getBoundingClientRect();
        const area = (e.clientY - r.top < r.height / 2 ? 'north' : 'south') + '-' + (e.clientX - r.left < r.width / 2 ? 'west' : 'east');
        document.getElementById('picked').textContent = area + ' picked';
        fetch('/area?name=' + area);
      });
    </script>`),
  '/area': () => text('ok'),

  // A post's actions drawn by CSS alone: a retweet icon as a background image, a share icon
  // as the button's CSS content, and a control whose only word is its id.
  '/post': page('Post', `<h1>Post</h1><p>Sunset over the harbour.</p>
    <style>.act{display:inline-block;width:24px;height:24px;margin:6px;cursor:pointer}
      .rt{background-image:url(/static/img/icons/retweet-24.svg)}
      #share{content:url(/static/share.png);width:24px;height:24px}
      #add-bookmark{display:inline-block;width:24px;height:24px;background:#ccc}</style>
    <span class="act rt"></span><button id="share" type="button"></button><div id="add-bookmark" role="button" tabindex="0"></div>
    <script>
      document.querySelector('.rt').addEventListener('click', () => fetch('/action?did=retweet'));
      document.getElementById('share').addEventListener('click', () => fetch('/action?did=share'));
      document.getElementById('add-bookmark').addEventListener('click', () => fetch('/action?did=bookmark'));
    </script>`),
  '/action': () => text('ok'),

  // Tic-tac-toe whose marks are CSS background images set by a class; empty cells show none.
  '/tictactoe': page('Tic-tac-toe', `<h1>Tic-tac-toe</h1>
    <style>#b{display:grid;grid-template-columns:repeat(3,60px);gap:4px}.cell{width:60px;height:60px;border:1px solid #333;background-size:cover;cursor:pointer}
      .cell.x{background-image:url(/img/x.svg)}.cell.o{background-image:url(/img/o.svg)}</style>
    <div id="b">${['x', 'o', '', 'o', 'x', '', '', '', ''].map((m, i) => `<div class="cell ${m}" data-i="${i}"></div>`).join('')}</div>
    <script>
      for (const c of document.querySelectorAll('.cell')) c.addEventListener('click', () => fetch('/play?cell=' + c.dataset.i));
    </script>`),
  '/play': () => text('ok'),

  // An article whose "Quote" button quotes what is selected on the page.
  '/harbour': page('Harbour walk', `<h1>A harbour walk</h1>
    <article><p>We left early. The fishing boats came back to the harbour at dawn, gulls behind them, and the market opened soon after.</p>
    <p>By noon the quay was full.</p></article>
    <button id="quote" type="button">Quote selection</button>
    <script>
      const q = document.getElementById('quote');
      q.addEventListener('mousedown', (e) => e.preventDefault());
      q.addEventListener('click', () => fetch('/quote?text=' + encodeURIComponent(String(getSelection()))));
    </script>`),
  '/quote': () => text('ok'),

  // A side panel listing 200 messages in its own scroll box; each row records its click.
  '/inbox': page('Inbox', `<h1>Inbox</h1>
    <div id="box" role="region" aria-label="Messages" tabindex="0" style="height:240px;width:360px;overflow-y:auto;border:1px solid #888">
      ${Array.from({ length: 200 }, (_, i) => `<div class="msg" data-n="${i + 1}" style="padding:6px;border-bottom:1px solid #eee">Message ${i + 1} from Ann</div>`).join('')}
    </div>
    <script>
      const box = document.getElementById('box');
      window.furthest = 0;
      box.addEventListener('scroll', () => { window.furthest = Math.max(window.furthest, box.scrollTop); });
      for (const m of document.querySelectorAll('.msg')) m.addEventListener('click', () => fetch('/open?n=' + m.dataset.n));
    </script>`),
  '/open': () => text('ok'),

  // A service's event log: 200 identical rows in their own scroll box, each opening its
  // entry when clicked. Only the rows near the box's view are described in full.
  '/log': page('Event log', `<h1>Event log</h1>
    <div id="log" role="region" aria-label="Events" tabindex="0" style="height:400px;width:360px;overflow-y:auto;border:1px solid #888;font:14px sans-serif">
      ${Array.from({ length: 200 }, (_, i) => `<div class="entry" data-n="${i + 1}" style="height:20px;line-height:20px;cursor:pointer">Health check passed</div>`).join('')}
    </div>
    <script>
      for (const e of document.querySelectorAll('.entry')) e.addEventListener('click', () => fetch('/entry?n=' + e.dataset.n));
    </script>`),
  '/entry': () => text('ok'),

  // A map with identical meeting-point pins placed by absolute position; each records its spot.
  '/map': page('Meeting points', `<h1>Pick a meeting point</h1>
    <style>#map{position:relative;width:600px;height:400px;background:#dde8d0}
      .pin{position:absolute;width:24px;height:24px;margin:-12px 0 0 -12px;border:0;border-radius:50%;background:#c33;cursor:pointer}</style>
    <div id="map">${[['west', 10, 15], ['north-east', 85, 10], ['centre', 40, 50], ['south-east', 70, 80], ['south-west', 20, 70], ['north', 55, 30]]
      .map(([spot, x, y]) => `<button class="pin" aria-label="Meeting point" data-spot="${spot}" style="left:${x}%;top:${y}%"></button>`).join('')}</div>
    <script>
      for (const p of document.querySelectorAll('.pin')) p.addEventListener('click', () => fetch('/meet?spot=' + p.dataset.spot));
    </script>`),
  '/meet': () => text('ok'),
};

let navigator = () => ({ action: 'done', success: false, answer: 'no script' });
const { paths } = navigatorSuite({ routes, key: KEY, navigator: (turn) => navigator(turn), ready: (env) => ({ site, tab, ui } = env) });
const named = (turn, name) => elements(turn).find((e) => e.name === name);
// The number of the first list line matching `re` (a line the model would pick by its facts).
const lineId = (turn, re) => {
  const line = turn.split('\n').find((l) => /^\[\d+\]/.test(l) && re.test(l));
  return line ? Number(/^\[(\d+)\]/.exec(line)[1]) : undefined;
};
const lastResult = (turn) => (turn.match(/Result of the previous step: (.*)/) ?? [])[1] ?? '';
const giveUp = (why) => ({ action: 'done', success: false, answer: why });

test('an element that reacts only to hover is listed, and hovering it shows what it shows', async () => {
  navigator = (turn) => {
    if (paths('/shown-shipping').length) return { action: 'done', success: true, answer: 'Ships in 2 days.' };
    const ship = named(turn, 'Shipping details');
    return ship ? { action: 'hover', element: ship.id } : giveUp('no shipping details');
  };
  await ui.startTask(tab, 'How fast does the lamp ship?', site.url + '/product');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.equal(paths('/shown-shipping').length, 1);
  assert.equal(await tab.evaluate(() => getComputedStyle(document.getElementById('tip')).display), 'block');
});

test('an unfilled outline in a drawing is listed as where the ball is dropped', async () => {
  navigator = (turn) => {
    if (paths('/scored').length) return { action: 'done', success: true, answer: 'In the box.' };
    const ball = lineId(turn, /circle .*red/);
    const box = lineId(turn, /rect .*green/);
    if (!ball || !box) return giveUp('no ball or box');
    return { action: 'drag', element: ball, to: box };
  };
  await ui.startTask(tab, 'Put the ball in the box', site.url + '/ball');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.equal(await tab.evaluate(() => window.inBox), true);
  assert.equal(paths('/scored').length, 1);
});

test('a puzzle piece dragged by handlers on the document is listed, named by its id, and slides', async () => {
  navigator = (turn) => {
    if (paths('/verified').length) return { action: 'done', success: true, answer: 'Verified.' };
    const piece = named(turn, 'puzzle piece');
    return piece ? { action: 'drag', element: piece.id, dx: 240, dy: 0 } : giveUp('no piece');
  };
  await ui.startTask(tab, 'Slide the puzzle to verify', site.url + '/verify');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.equal(await tab.evaluate(() => window.verified), true);
});

test('a resize grip is listed and dragged; a text area says it is resizable', async () => {
  let seen = '';
  navigator = (turn) => {
    seen = turn;
    if (paths('/resized').length) return { action: 'done', success: true, answer: 'Wider.' };
    const grip = named(turn, 'resizable handle');
    return grip ? { action: 'drag', element: grip.id, dx: 100, dy: 0 } : giveUp('no grip');
  };
  await ui.startTask(tab, 'Make the note wider', site.url + '/notes');
  await ui.waitStatus(/^(Done|Failed)/);

  const widths = paths('/resized').map((r) => Number(r.query.width));
  assert.equal(widths.length, 1);
  assert.ok(widths[0] >= 290, `the note is ${widths[0]}px wide`);
  assert.match(seen, /textbox "Comment".* resizable/);
});

test('"row 3, column 2" of a grid of identical circles is clicked by its place', async () => {
  navigator = (turn) => {
    if (paths('/dot').length) return { action: 'done', success: true, answer: 'Clicked.' };
    const dot = lineId(turn, /\(row 3, column 2\)/);
    return dot ? { action: 'click', element: dot } : giveUp('no row 3, column 2');
  };
  await ui.startTask(tab, 'Click the circle in row 3, column 2', site.url + '/dots');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(paths('/dot').map((r) => r.query), [{ row: '3', col: '2' }]);
});

test('the 2 pm slot on Tuesday is booked by its row and column headers', async () => {
  navigator = (turn) => {
    if (paths('/book').length) return { action: 'done', success: true, answer: 'Booked.' };
    const slot = lineId(turn, /\(row "2 pm", column "Tue"\)/);
    return slot ? { action: 'click', element: slot } : giveUp('no 2 pm Tuesday slot');
  };
  await ui.startTask(tab, 'Book the 2 pm slot on Tuesday', site.url + '/calendar');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(paths('/book').map((r) => r.query.at), ['Tue 2 pm']);
});

test('a large drawing listening on itself is listed and clicked at a point of it', async () => {
  navigator = (turn) => {
    if (paths('/area').length) return { action: 'done', success: true, answer: 'Picked.' };
    const plan = named(turn, 'Office floor plan');
    return plan ? { action: 'click_at', element: plan.id, x: 0.8, y: 0.75 } : giveUp('no floor plan');
  };
  await ui.startTask(tab, 'Pick the south-east area of the floor plan', site.url + '/floor');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(paths('/area').map((r) => r.query.name), ['south-east']);
});

test('controls drawn by CSS alone are named by their image file or id', async () => {
  let step = 0;
  navigator = (turn) => {
    const want = ['retweet', 'share', 'add bookmark'][step++];
    if (!want) return { action: 'done', success: true, answer: 'Done.' };
    const el = named(turn, want);
    return el ? { action: 'click', element: el.id } : giveUp(`no ${want}`);
  };
  await ui.startTask(tab, 'Retweet, share, then bookmark the post', site.url + '/post');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(paths('/action').map((r) => r.query.did), ['retweet', 'share', 'bookmark']);
});

test('marks a CSS image places in tic-tac-toe cells are seen, so the free cell is played', async () => {
  navigator = (turn) => {
    if (paths('/play').length) return { action: 'done', success: true, answer: 'Played.' };
    // The first cell of the top row showing no mark: top row = row 1 of the board.
    const free = lineId(turn, /^\[\d+\]\*? div \(row 1, column \d\)/);
    return free ? { action: 'click', element: free } : giveUp('no free cell');
  };
  await ui.startTask(tab, 'Play O in the free cell of the top row', site.url + '/tictactoe');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(paths('/play').map((r) => r.query.cell), ['2']);
});

test("select_text names a passage alone: the page's selection is exactly that passage", async () => {
  let step = 0;
  navigator = (turn) => {
    switch (step++) {
      case 0: return { action: 'select_text', text: 'the harbour at dawn' };
      case 1: return { action: 'click', element: named(turn, 'Quote selection').id };
      default: return { action: 'done', success: true, answer: 'Quoted.' };
    }
  };
  await ui.startTask(tab, 'Quote "the harbour at dawn"', site.url + '/harbour');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.equal(await tab.evaluate(() => String(window.getSelection())), 'the harbour at dawn');
  assert.deepEqual(paths('/quote').map((r) => r.query.text), ['the harbour at dawn']);
});

test('after a box scrolls, a row keeps its number: the number it had before the scroll still clicks it', async () => {
  let before;
  let step = 0;
  navigator = (turn) => {
    switch (step++) {
      case 0:
        before = named(turn, 'Message 3 from Ann');
        if (!before) return giveUp('no message 3');
        return { action: 'scroll', element: named(turn, 'Message 1 from Ann').id, direction: 'down' };
      case 1: return { action: 'click', element: before.id };
      default: return { action: 'done', success: true, answer: 'Opened.' };
    }
  };
  await ui.startTask(tab, 'Open message 3', site.url + '/inbox');
  await ui.waitStatus(/^(Done|Failed)/);

  const s = await ui.steps();
  assert.ok(await tab.evaluate(() => window.furthest) > 100, s.join('\n'));
  assert.deepEqual(paths('/open').map((r) => r.query.n), ['3'], s.join('\n'));
});

test('in a scrolled box of 200 identical rows, "the 150th" is clicked by a rank counted over all 200', async () => {
  let scrolls = 0;
  navigator = (turn) => {
    if (paths('/entry').length) return { action: 'done', success: true, answer: 'Opened.' };
    const row = lineId(turn, /"Health check passed" \(150th of 200\)/);
    if (row) return { action: 'click', element: row };
    // Not listed yet: scroll the log down, as a person would, until it is.
    const any = lineId(turn, /"Health check passed"/);
    if (!any || scrolls++ >= 15) return giveUp('no 150th entry');
    return { action: 'scroll', element: any, direction: 'down' };
  };
  await ui.startTask(tab, 'Open the 150th entry of the event log', site.url + '/log');
  await ui.waitStatus(/^(Done|Failed)/);

  const s = await ui.steps();
  assert.deepEqual(paths('/entry').map((r) => r.query.n), ['150'], s.join('\n'));
});

test('identical pins placed on a map say where they are: the pin at the top right is clicked', async () => {
  navigator = (turn) => {
    if (paths('/meet').length) return { action: 'done', success: true, answer: 'Picked.' };
    // The pin furthest right and up: the largest x less y of the places the list gives.
    const pins = turn.split('\n').map((l) => /^\[(\d+)\]\*? button "Meeting point" at (\d+)%, (\d+)% of the drawing/.exec(l))
      .filter(Boolean).map((m) => ({ id: Number(m[1]), score: Number(m[2]) - Number(m[3]) }));
    if (pins.length < 6) return giveUp('the pins say no place');
    const best = pins.reduce((a, b) => (b.score > a.score ? b : a));
    return { action: 'click', element: best.id };
  };
  await ui.startTask(tab, 'Pick the meeting point at the top right of the map', site.url + '/map');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(paths('/meet').map((r) => r.query.spot), ['north-east']);
});
