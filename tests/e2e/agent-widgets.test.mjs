// The agent's hands on ordinary widgets: a kanban board (HTML5 drag-and-drop, and a copy
// whose handlers accept only trusted events), a sortable list built on mouse events, a hover
// menu (script-opened, and one opened by CSS :hover alone), a popup that closes on Escape, an
// agreement whose Accept unlocks at the end of its scroll box, a rich-text editor (select a
// word, press Bold), a jQuery-UI-like slider and a native range, a multi-select, a canvas
// chart clicked at a point, and a report that appears a moment later (wait for text).
// The pages are served on an https origin the manifest does not list, trusted up front. Each
// test asserts what the PAGE recorded (requests the fixture site received, its own state read
// with tab.evaluate), then what the timeline says. The scripted model picks elements by their
// visible names, as in agent-clicks.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { navigatorSuite } from './lib/suites.mjs';
import { page, text } from './lib/fixtures.mjs';
import { elements } from './lib/scripted-shopper.mjs';

const KEY = 'sk-test-agent-widgets-1234';
let site, tab, ui;


// A board whose cards move between columns by HTML5 drag-and-drop; the page keeps where each
// card is in `window.board` and tells its server. `trusted`: the handlers ignore synthetic
// events (`event.isTrusted`), as some pages do.
const board = (trusted) => page('Sprint board', `<h1>Sprint board</h1>
  <style>.cols{display:flex;gap:16px}.col{width:200px;min-height:220px;border:1px solid #888;padding:8px}.card{border:1px solid #333;margin:6px 0;padding:6px;background:#fff}</style>
  <div class="cols">
    <section class="col" tabindex="0" aria-label="To do" data-col="todo">
      <article class="card" draggable="true" tabindex="0" aria-label="Fix login bug" id="c1">Fix login bug</article>
      <article class="card" draggable="true" tabindex="0" aria-label="Write release notes" id="c2">Write release notes</article>
    </section>
    <section class="col" tabindex="0" aria-label="Doing" data-col="doing"></section>
    <section class="col" tabindex="0" aria-label="Done" data-col="done"></section>
  </div>
  <script>
    const TRUSTED = ${trusted};
    window.board = { c1: 'todo', c2: 'todo' };
    const ok = (e) => !TRUSTED || e.isTrusted;
    for (const card of document.querySelectorAll('.card')) {
      card.addEventListener('dragstart', (e) => { if (ok(e)) e.dataTransfer.setData('text/plain', card.id); });
    }
    for (const col of document.querySelectorAll('.col')) {
      col.addEventListener('dragover', (e) => { if (ok(e)) e.preventDefault(); });
      col.addEventListener('drop', (e) => {
        if (!ok(e)) return;
        e.preventDefault();
        const card = document.getElementById(e.dataTransfer.getData('text/plain'));
        if (!card) return;
        col.append(card);
        window.board[card.id] = col.dataset.col;
        fetch('/moved?card=' + card.id + '&to=' + col.dataset.col);
      });
    }
  </script>`);

const routes = {
  '/board': board(false),
  '/board-trusted': board(true),
  '/moved': () => text('ok'),

  // A list sorted by dragging with the mouse (mousedown on an item, mousemove and mouseup on
  // the document), as sortable plugins built on mouse events do: the dragged item goes
  // before the item the pointer is released over when moved up, after it when moved down.
  '/groceries': page('Shopping list', `<h1>Shopping list</h1>
    <style>#list{list-style:none;padding:0;width:240px}#list li{border:1px solid #999;margin:4px 0;padding:10px;user-select:none;background:#fff}</style>
    <ul id="list" aria-label="Shopping list">
      <li tabindex="0">Apples</li><li tabindex="0">Bread</li><li tabindex="0">Cheese</li><li tabindex="0">Dates</li>
    </ul>
    <script>
      const list = document.getElementById('list');
      let dragging = null;
      let startY = 0;
      list.addEventListener('mousedown', (e) => { dragging = e.target.closest('li'); startY = e.clientY; });
      document.addEventListener('mousemove', (e) => { if (dragging) dragging.style.opacity = '0.6'; });
      document.addEventListener('mouseup', (e) => {
        if (!dragging) return;
        const item = dragging;
        dragging = null;
        item.style.opacity = '';
        const over = [...list.children].find((li) => { const r = li.getBoundingClientRect(); return e.clientY >= r.top && e.clientY <= r.bottom; });
        if (!over || over === item) return;
        if (e.clientY < startY) over.before(item); else over.after(item);
        const order = [...list.children].map((li) => li.textContent).join(',');
        fetch('/order?items=' + encodeURIComponent(order));
      });
    </script>`),
  '/order': () => text('ok'),

  // A menu bar whose submenus open when the pointer enters their item (and close when it
  // leaves); clicking the top item itself opens the department's own page instead.
  '/store': page('Store', `<h1>Store</h1>
    <style>nav ul{list-style:none;margin:0;padding:0}.top{display:inline-block;position:relative;padding:8px}.sub{position:absolute;top:36px;left:0;background:#fff;border:1px solid #999;width:160px}.sub a{display:block;padding:6px}</style>
    <nav aria-label="Departments"><ul>
      <li class="top"><a href="/computers" aria-haspopup="true">Computers</a>
        <div class="sub" hidden><a href="/laptops">Laptops</a><a href="/desktops">Desktops</a></div></li>
      <li class="top"><a href="/garden" aria-haspopup="true">Garden</a>
        <div class="sub" hidden><a href="/mowers">Mowers</a></div></li>
    </ul></nav>
    <script>
      for (const li of document.querySelectorAll('.top')) {
        li.addEventListener('mouseenter', () => { li.querySelector('.sub').hidden = false; });
        li.addEventListener('mouseleave', () => { li.querySelector('.sub').hidden = true; });
      }
    </script>`),
  '/computers': page('Computers', '<h1>All computers</h1>'),
  '/logo': page('Store', '<h1>Store</h1><span tabindex="0" aria-label="Store logo" style="display:inline-block;width:80px;height:30px;background:#345"></span><p>Welcome.</p>'),
  '/laptops': page('Laptops', '<h1>Laptops</h1><p>12 laptops.</p>'),

  // The same menu shown by CSS :hover alone: no script sees the pointer.
  '/store-css': page('Store', `<h1>Store</h1>
    <style>.top{display:inline-block;position:relative;padding:8px}.sub{display:none;position:absolute;top:36px;left:0;background:#fff;border:1px solid #999;width:160px}.top:hover .sub{display:block}.sub a{display:block;padding:6px}</style>
    <nav aria-label="Departments"><ul style="list-style:none;padding:0">
      <li class="top"><a href="/computers" aria-haspopup="true">Computers</a><div class="sub"><a href="/laptops">Laptops</a></div></li>
    </ul></nav>`),

  // A newsletter popup over the article that only Escape closes (no close button), as such
  // popups often do; the article's button is under it until then.
  '/article': page('Article', `<h1>Ten trail runs</h1><p>The best runs near you.</p>
    <style>#popup{position:fixed;inset:0;background:rgba(255,255,255,.97);padding:40px}</style>
    <button id="more">Read the full article</button>
    <div id="popup" role="dialog" aria-label="Newsletter"><p>Get our newsletter!</p><input aria-label="Your email"></div>
    <script>
      window.closedBy = null;
      document.addEventListener('keydown', (e) => {
        if (e.key === 'Escape' && document.getElementById('popup')) { document.getElementById('popup').remove(); window.closedBy = 'Escape'; }
      });
      document.getElementById('more').addEventListener('click', () => fetch('/full-article'));
    </script>`),
  '/full-article': () => text('ok'),

  // Terms of service in a scroll box; Accept is disabled until the box was scrolled to its end.
  '/terms': page('Terms', `<h1>Before you continue</h1>
    <div id="terms" role="region" aria-label="Terms of service" tabindex="0" style="height:140px;width:420px;overflow-y:auto;border:1px solid #888;padding:8px">
      ${Array.from({ length: 30 }, (_, i) => `<p>Clause ${i + 1}. You agree to the terms of clause ${i + 1}.</p>`).join('')}
    </div>
    <button id="accept" disabled>Accept the terms</button>
    <script>
      const terms = document.getElementById('terms');
      terms.addEventListener('scroll', () => {
        if (terms.scrollTop + terms.clientHeight >= terms.scrollHeight - 2) document.getElementById('accept').disabled = false;
      });
      document.getElementById('accept').addEventListener('click', () => fetch('/accepted'));
    </script>`),
  '/accepted': () => text('ok'),

  // A rich-text editor: Bold applies to the selection (its button keeps the selection by
  // canceling mousedown, as editors' toolbars do); Save sends the editor's HTML.
  '/compose': page('Compose', `<h1>New post</h1>
    <div role="toolbar" aria-label="Formatting"><button id="bold" type="button">Bold</button><button id="italic" type="button">Italic</button></div>
    <div id="editor" contenteditable="true" role="textbox" aria-multiline="true" aria-label="Post body" style="border:1px solid #888;padding:8px;min-height:60px">The quick brown fox jumps.</div>
    <button id="save" type="button">Save post</button>
    <script>
      for (const [id, cmd] of [['bold', 'bold'], ['italic', 'italic']]) {
        const b = document.getElementById(id);
        b.addEventListener('mousedown', (e) => e.preventDefault());
        b.addEventListener('click', () => document.execCommand(cmd));
      }
      document.getElementById('save').addEventListener('click', () => fetch('/save-post', { method: 'POST', body: document.getElementById('editor').innerHTML }));
    </script>`),
  '/save-post': () => text('ok'),

  // An editor that draws its text from its own model and puts it back after every input it
  // did not make itself (as Draft.js does with an edit it could not map): typing into it
  // changes nothing that stays.
  '/stubborn': page('Notes', `<h1>Notes</h1>
    <div id="note" contenteditable="true" role="textbox" aria-label="Note" style="border:1px solid #888;padding:8px;min-height:40px">Buy milk.</div>
    <script>
      const note = document.getElementById('note');
      note.addEventListener('input', () => setTimeout(() => { note.textContent = 'Buy milk.'; }, 0));
    </script>`),

  // A jQuery-UI-like slider (a handle span moved with the mouse along its track, the value
  // written into a read-only field beside it, steps of 10 from 0 to 500) and a native range.
  '/filters': page('Filters', `<h1>Filter laptops</h1>
    <style>.ui-slider{position:relative;width:300px;height:10px;background:#ddd;margin:20px 10px}.ui-slider-handle{position:absolute;top:-5px;width:16px;height:20px;margin-left:-8px;background:#456;cursor:pointer}</style>
    <div class="field"><label for="amount">Maximum price</label> <input id="amount" readonly value="$100">
      <div class="ui-slider" id="price"><span class="ui-slider-handle" tabindex="0" aria-label="Maximum price handle" style="left:20%"></span></div></div>
    <div class="field"><label>Volume <input type="range" id="volume" min="0" max="100" value="20"></label></div>
    <button id="apply">Apply filters</button>
    <script>
      const track = document.getElementById('price');
      const handle = track.querySelector('.ui-slider-handle');
      const amount = document.getElementById('amount');
      let value = 100;
      let moving = false;
      const place = (x) => {
        const r = track.getBoundingClientRect();
        const f = Math.min(Math.max((x - r.left) / r.width, 0), 1);
        value = Math.round((f * 500) / 10) * 10;
        handle.style.left = (value / 5) + '%';
        amount.value = '$' + value;
      };
      handle.addEventListener('mousedown', (e) => { moving = true; e.preventDefault(); });
      document.addEventListener('mousemove', (e) => { if (moving) place(e.clientX); });
      document.addEventListener('mouseup', (e) => { if (moving) { place(e.clientX); moving = false; } });
      document.getElementById('apply').addEventListener('click', () =>
        fetch('/apply?price=' + value + '&volume=' + document.getElementById('volume').value));
    </script>`),
  '/apply': () => text('ok'),

  // Pizza toppings in a multi-select with one chosen already.
  '/pizza': page('Your pizza', `<h1>Your pizza</h1>
    <label>Toppings <select id="toppings" multiple size="5">
      <option selected>Cheese</option><option>Olives</option><option>Mushrooms</option><option>Peppers</option><option>Ham</option>
    </select></label>
    <button id="order">Save toppings</button>
    <script>
      document.getElementById('order').addEventListener('click', () =>
        fetch('/toppings?t=' + [...document.getElementById('toppings').selectedOptions].map((o) => o.text).join(',')));
    </script>`),
  '/toppings': () => text('ok'),

  // A canvas bar chart (four quarters, equal widths) that opens the quarter clicked.
  '/sales': page('Sales', `<h1>Sales by quarter</h1>
    <canvas id="chart" width="400" height="200" role="img" aria-label="Sales by quarter chart" tabindex="0" style="cursor:pointer"></canvas>
    <p id="picked"></p>
    <script>
      const c = document.getElementById('chart');
      const g = c.getContext('2d');
      [120, 150, 90, 180].forEach((v, i) => { g.fillStyle = '#38c'; g.fillRect(i * 100 + 20, 200 - v, 60, v); });
      c.addEventListener('click', (e) => {
        const q = 'Q' + (Math.floor(e.offsetX / 100) + 1);
        document.getElementById('picked').textContent = q + ' selected';
        fetch('/quarter?q=' + q);
      });
    </script>`),
  '/quarter': () => text('ok'),

  // A report the server prepares: "Report ready" and its link show 1.5 s after the click.
  '/reports': page('Reports', `<h1>Reports</h1><button id="gen">Generate report</button><div id="out"></div>
    <script>
      document.getElementById('gen').addEventListener('click', () => {
        setTimeout(() => { document.getElementById('out').innerHTML = '<p>Report ready</p><a href="/report-download">Download report</a>'; }, 1500);
      });
    </script>`),
  '/report-download': () => text('PDF'),
};

let navigator = () => ({ action: 'done', success: false, answer: 'no script' });
const { navigatorTurns, paths } = navigatorSuite({ routes, key: KEY, navigator: (turn) => navigator(turn), ready: (env) => ({ site, tab, ui } = env) });
const named = (turn, name) => elements(turn).find((e) => e.name === name);
const lastResult = (turn) => (turn.match(/Result of the previous step: (.*)/) ?? [])[1] ?? '';

test('kanban board: a card is dragged onto another column (HTML5 drag-and-drop) and the page moves it', async () => {
  navigator = (turn) => {
    if (paths('/moved').length) return { action: 'done', success: true, answer: 'Moved.' };
    const card = named(turn, 'Fix login bug');
    const done = named(turn, 'Done');
    if (!card || !done) return { action: 'done', success: false, answer: 'no card or column' };
    return { action: 'drag', element: card.id, to: done.id };
  };
  await ui.startTask(tab, 'Move "Fix login bug" to Done', site.url + '/board');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(await tab.evaluate(() => window.board), { c1: 'done', c2: 'todo' });
  assert.deepEqual(paths('/moved').map((r) => r.query), [{ card: 'c1', to: 'done' }]);
  assert.equal(await tab.evaluate(() => document.querySelector('[data-col=done]').contains(document.getElementById('c1'))), true);
  const s = await ui.steps();
  assert.ok(s.some((x) => /"drag".*"Fix login bug".*✓ dragged it; /.test(x)), s.join('\n'));
  assert.match(await ui.status().textContent(), /^Done/);
});

test('kanban board whose handlers demand trusted events: the ignored drag is repeated as real input, said in the step', async () => {
  navigator = (turn) => {
    if (paths('/moved').length) return { action: 'done', success: true, answer: 'Moved.' };
    if (/did not react/.test(lastResult(turn))) return { action: 'done', success: false, answer: 'The board did not take the drag.' };
    return { action: 'drag', element: named(turn, 'Fix login bug').id, to: named(turn, 'Done').id };
  };
  await ui.startTask(tab, 'Move "Fix login bug" to Done', site.url + '/board-trusted');
  await ui.waitStatus(/^(Done|Failed)/);

  // The page's own record: moved by events it trusted, once.
  assert.deepEqual(await tab.evaluate(() => window.board), { c1: 'done', c2: 'todo' });
  assert.deepEqual(paths('/moved').map((r) => r.query), [{ card: 'c1', to: 'done' }]);
  const s = await ui.steps();
  const drag = s.find((x) => /"drag".*"Fix login bug"/.test(x)) ?? '';
  assert.match(drag, /✓ the page ignored script events, so Tandem repeated it as real input through Chrome's debugger .*; dragged it; /, s.join('\n'));
  assert.match(await ui.status().textContent(), /^Done/);
});

test('sortable list: an item dragged with the mouse onto the first takes its place', async () => {
  navigator = (turn) => {
    if (paths('/order').length) return { action: 'done', success: true, answer: 'Cheese is first.' };
    return { action: 'drag', element: named(turn, 'Cheese').id, to: named(turn, 'Apples').id };
  };
  await ui.startTask(tab, 'Put Cheese at the top of the list', site.url + '/groceries');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(await tab.evaluate(() => [...document.querySelectorAll('#list li')].map((li) => li.textContent)),
    ['Cheese', 'Apples', 'Bread', 'Dates']);
  assert.deepEqual(paths('/order').map((r) => r.query.items), ['Cheese,Apples,Bread,Dates']);
  assert.match(await ui.status().textContent(), /^Done/);
});

test('hover menu: hovering the top item opens its submenu, and its item is clicked (not the top item)', async () => {
  navigator = (turn) => {
    if (paths('/laptops').length) return { action: 'done', success: true, answer: 'On Laptops.' };
    const laptops = named(turn, 'Laptops');
    if (laptops) return { action: 'click', element: laptops.id };
    return { action: 'hover', element: named(turn, 'Computers').id };
  };
  await ui.startTask(tab, 'Open Laptops under Computers', site.url + '/store');
  await ui.waitStatus(/^(Done|Failed)/);

  const s = await ui.steps();
  assert.match(tab.url(), /\/laptops$/, s.join('\n'));
  assert.equal(paths('/computers').length, 0, 'the top item was not clicked');
  assert.ok(s.some((x) => /"hover".*"Computers".*✓ hovered over it; /.test(x)), s.join('\n'));
  assert.match(await ui.status().textContent(), /^Done/);
});

test('a menu opened by CSS :hover alone: script events cannot open it, real input through the debugger does', async () => {
  navigator = (turn) => {
    if (paths('/laptops').length) return { action: 'done', success: true, answer: 'On Laptops.' };
    const laptops = named(turn, 'Laptops');
    if (laptops) return { action: 'click', element: laptops.id };
    if (/did not react/.test(lastResult(turn))) return { action: 'done', success: false, answer: 'The menu did not open.' };
    return { action: 'hover', element: named(turn, 'Computers').id };
  };
  await ui.startTask(tab, 'Open Laptops under Computers', site.url + '/store-css');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.equal(paths('/laptops').length, 1);
  assert.equal(paths('/computers').length, 0, 'the top item was not clicked');
  const s = await ui.steps();
  assert.ok(s.some((x) => /"hover".*"Computers".*✓ the page ignored script events, so Tandem repeated it as real input.*; hovered over it; 2 elements appeared/.test(x)), s.join('\n'));
  assert.match(await ui.status().textContent(), /^Done/);
});

test('an element that reacts to nothing: the hover is reported as not reacted to, even as real input, never as done', async () => {
  let hovered = false;
  navigator = (turn) => {
    if (hovered) return { action: 'done', success: false, answer: lastResult(turn) };
    hovered = true;
    return { action: 'hover', element: named(turn, 'Store logo').id };
  };
  await ui.startTask(tab, 'Show the logo menu', site.url + '/logo');
  await ui.waitStatus(/^(Done|Failed)/);
  const s = await ui.steps();
  assert.ok(s.some((x) => /"hover".*"Store logo".*✗ the page ignored script events, so Tandem repeated it as real input.*the page did not react: the pointer was moved over it, also as real input, but nothing visible changed/.test(x)), s.join('\n'));
  assert.ok(!s.some((x) => /"hover".*✓/.test(x)), s.join('\n'));
});

test('Escape closes a popup that has no close button, then the article button is clicked', async () => {
  navigator = (turn) => {
    if (paths('/full-article').length) return { action: 'done', success: true, answer: 'Reading.' };
    if (named(turn, 'Your email')) return { action: 'press', key: 'Escape' };
    const more = named(turn, 'Read the full article');
    return more ? { action: 'click', element: more.id } : { action: 'done', success: false, answer: 'no button' };
  };
  await ui.startTask(tab, 'Read the full article', site.url + '/article');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.equal(await tab.evaluate(() => window.closedBy), 'Escape');
  assert.equal(paths('/full-article').length, 1);
  const s = await ui.steps();
  assert.ok(s.some((x) => /"press".*"Escape".*✓ pressed the key; /.test(x)), s.join('\n'));
  assert.match(await ui.status().textContent(), /^Done/);
});

test('agreement box: scrolled to its end inside, which unlocks Accept, then accepted', async () => {
  navigator = (turn) => {
    if (paths('/accepted').length) return { action: 'done', success: true, answer: 'Accepted.' };
    const accept = turn.split('\n').find((l) => /"Accept the terms"/.test(l)) ?? '';
    if (accept && !/disabled/.test(accept)) return { action: 'click', element: named(turn, 'Accept the terms').id };
    return { action: 'scroll', element: named(turn, 'Terms of service').id, direction: 'end' };
  };
  await ui.startTask(tab, 'Accept the terms of service', site.url + '/terms');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.equal(paths('/accepted').length, 1);
  assert.equal(await tab.evaluate(() => document.getElementById('accept').disabled), false);
  const s = await ui.steps();
  assert.ok(s.some((x) => /"scroll".*"Terms of service".*✓ scrolled inside it, to its end/.test(x)), s.join('\n'));
  assert.match(await ui.status().textContent(), /^Done/);
});

test('rich-text editor: a word is selected and made bold, and the saved post has <b>word</b>', async () => {
  let step = 0;
  navigator = (turn) => {
    const body = named(turn, 'Post body');
    switch (step++) {
      case 0: return { action: 'select_text', element: body.id, text: 'quick' };
      case 1: return { action: 'click', element: named(turn, 'Bold').id };
      case 2: return { action: 'click', element: named(turn, 'Save post').id };
      default: return { action: 'done', success: true, answer: 'Saved.' };
    }
  };
  await ui.startTask(tab, 'Make the word "quick" bold and save the post', site.url + '/compose');
  await ui.waitStatus(/^(Done|Failed)/);

  const saved = paths('/save-post').map((r) => r.body);
  assert.equal(saved.length, 1);
  assert.equal(saved[0], 'The <b>quick</b> brown fox jumps.');
  const s = await ui.steps();
  assert.ok(s.some((x) => /"select_text".*"Post body".*✓ selected the text/.test(x)), s.join('\n'));
});

test('an editor that puts its old text back after typing: the step says the text was not kept, never plain "typed"', async () => {
  navigator = (turn) => {
    if (/typed/.test(lastResult(turn))) return { action: 'done', success: false, answer: lastResult(turn) };
    return { action: 'type', element: named(turn, 'Note').id, text: 'Buy bread.' };
  };
  await ui.startTask(tab, 'Change the note to "Buy bread."', site.url + '/stubborn');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.equal(await tab.evaluate(() => document.getElementById('note').textContent), 'Buy milk.');
  const s = await ui.steps();
  assert.ok(s.some((x) => /"type".*"Note".*typed, but the field did not keep the text/.test(x)), s.join('\n'));
});

test('a jQuery-UI-like slider and a native range are set to values, and the page applies them', async () => {
  navigator = (turn) => {
    if (paths('/apply').length) return { action: 'done', success: true, answer: 'Applied.' };
    const results = navigatorTurns().map(lastResult).join('\n');
    if (!/shows 300/.test(results)) return { action: 'set_value', element: named(turn, 'Maximum price handle').id, value: 300 };
    if (!/shows 70/.test(results)) return { action: 'set_value', element: named(turn, 'Volume').id, value: 70 };
    return { action: 'click', element: named(turn, 'Apply filters').id };
  };
  await ui.startTask(tab, 'Show laptops up to $300 at volume 70', site.url + '/filters');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(paths('/apply').map((r) => r.query), [{ price: '300', volume: '70' }]);
  assert.equal(await tab.evaluate(() => document.getElementById('amount').value), '$300');
  const s = await ui.steps();
  assert.ok(s.some((x) => /"set_value".*"Maximum price handle".*✓ set the value; it shows 300/.test(x)), s.join('\n'));
  assert.match(await ui.status().textContent(), /^Done/);
});

test('multi-select: two options are added to the one already chosen', async () => {
  navigator = (turn) => {
    if (paths('/toppings').length) return { action: 'done', success: true, answer: 'Saved.' };
    const added = navigatorTurns().filter((t) => /added the option/.test(lastResult(t))).length;
    const list = named(turn, 'Toppings');
    if (added === 0) return { action: 'select_option', element: list.id, option: 'Olives', mode: 'add' };
    if (added === 1) return { action: 'select_option', element: list.id, option: 'Peppers', mode: 'add' };
    return { action: 'click', element: named(turn, 'Save toppings').id };
  };
  await ui.startTask(tab, 'Add olives and peppers to my toppings', site.url + '/pizza');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(paths('/toppings').map((r) => r.query.t), ['Cheese,Olives,Peppers']);
  assert.match(await ui.status().textContent(), /^Done/);
});

test('canvas chart: a click at a point of its box hits the third bar', async () => {
  navigator = (turn) => {
    if (paths('/quarter').length) return { action: 'done', success: true, answer: 'Q3 open.' };
    return { action: 'click_at', element: named(turn, 'Sales by quarter chart').id, x: 0.62, y: 0.8 };
  };
  await ui.startTask(tab, 'Open the third quarter in the chart', site.url + '/sales');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(paths('/quarter').map((r) => r.query.q), ['Q3']);
  assert.equal(await tab.evaluate(() => document.getElementById('picked').textContent), 'Q3 selected');
});

test('wait for text: the agent waits until "Report ready" shows, then downloads; a text that never comes is a failure', async () => {
  navigator = (turn) => {
    if (paths('/report-download').length) return { action: 'done', success: true, answer: 'Downloaded.' };
    const download = named(turn, 'Download report');
    if (download) return { action: 'click', element: download.id };
    const result = lastResult(turn);
    if (/clicked/.test(result)) return { action: 'wait', text: 'Never shown', ms: 300 };
    if (/did not appear/.test(result)) return { action: 'wait', text: 'Report ready', ms: 8000 };
    return { action: 'click', element: named(turn, 'Generate report').id };
  };
  await ui.startTask(tab, 'Generate the report and download it', site.url + '/reports');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.equal(paths('/report-download').length, 1);
  const s = await ui.steps();
  assert.ok(s.some((x) => /"wait".*"Never shown".*✗ the text did not appear in time/.test(x)), s.join('\n'));
  assert.ok(s.some((x) => /"wait".*"Report ready".*✓ the text is on the page/.test(x)), s.join('\n'));
  assert.match(await ui.status().textContent(), /^Done/);
});
