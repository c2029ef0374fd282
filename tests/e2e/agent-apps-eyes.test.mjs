// What the agent sees of controls real web applications are made of (issue #44, "Eyes"):
// an admin's inline rows laid out as a table, labels hidden with CSS, a file browser's rows
// with a roving tab stop, rich-text editors, a dropdown opened over a long grid, a grid sorted
// on screen by aria-rowindex, icon radios and row switches in toolbars and rows, a context
// menu that only a real right click opens, and a terminal whose keys go to a hidden textarea.
// Each fixture is small and written after the real application's markup; pages are served on
// an https origin the manifest does not list, and each test asserts what the page recorded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { navigatorSuite } from './lib/suites.mjs';
import { page, text } from './lib/fixtures.mjs';
import { elements } from './lib/scripted-shopper.mjs';

const KEY = 'sk-test-agent-apps-eyes-1234';
let site, tab, ui;

/** The element list's lines (`[n] …`) of a turn. */
const lines = (turn) => turn.split('\n').filter((l) => /^\[\d+\]/.test(l));
const idOf = (line) => Number(line.match(/^\[(\d+)\]/)[1]);

const BOOK_ROW = (i, title = '', date = '', pages = '') => `<tr class="form-row">
  <td class="field-title"><input type="text" name="books-${i}-title" value="${title}" maxlength="100"></td>
  <td class="field-date"><input type="text" name="books-${i}-date" value="${date}" size="10"></td>
  <td class="field-pages"><input type="number" name="books-${i}-pages" value="${pages}"></td>
  <td class="delete">${title ? `<input type="checkbox" name="books-${i}-DELETE">` : ''}</td></tr>`;

const routes = {
  // A change form in the manner of Django's admin: the author's own fields, a language select
  // and a search box whose labels are hidden with CSS (kept for screen readers), and the
  // author's books as a TabularInline: a table whose columns say what each cell's field is,
  // a row per book plus an empty one for a new book.
  '/author': page('Change author', `<style>.hidden{display:none}</style>
    <h1>Change author</h1>
    <form method="get" action="/author-saved">
      <p><label for="id_name">Name:</label> <input type="text" id="id_name" name="name" value="Ursula K. Le Guin"></p>
      <p><label for="id_language" class="hidden">Language</label>
        <select id="id_language" name="language"><option value="en">English</option><option value="fr">Français</option><option value="de">Deutsch</option></select></p>
      <p><label for="id_q" class="hidden">Search books</label><input type="text" id="id_q" name="q"></p>
      <fieldset class="module"><h2>Books</h2>
        <table><thead><tr><th class="column-title">Title</th><th class="column-date">Publication date</th><th class="column-pages">Pages</th><th>Delete?</th></tr></thead>
        <tbody>${BOOK_ROW(0, 'The Dispossessed', '1974-05-01', '387')}${BOOK_ROW(1, 'The Lathe of Heaven', '1971-10-01', '184')}${BOOK_ROW(2)}</tbody></table>
      </fieldset>
      <table><thead><tr><td></td><th>Price</th></tr></thead>
        <tbody><tr><th scope="row">Paperback</th><td><input type="text" name="price-paper" value="12"></td></tr>
        <tr><th scope="row">Hardcover</th><td><input type="text" name="price-hard" value="25"></td></tr></tbody></table>
      <input type="submit" value="Save">
    </form>`),
  '/author-saved': () => text('saved'),

  // A file browser in the manner of a notebook IDE's: the rows of one list, moved through
  // with the arrow keys, only the current row in the tab order (roving tabindex); the list
  // listens for clicks and keys, the rows have nothing of their own.
  '/files': page('Files', `<style>.row{padding:4px 8px}.row.sel{background:#dbeafe}</style>
    <h1>Files</h1>
    <div role="list" aria-label="Files" id="list">
      ${['analysis.ipynb', 'data.csv', 'notes.txt', 'README.md'].map((f, i) => `<div role="listitem" class="row" tabindex="${i ? -1 : 0}">${f}</div>`).join('')}
    </div>
    <p id="opened"></p>
    <script>
      const list = document.getElementById('list');
      list.addEventListener('click', (e) => {
        const row = e.target.closest('.row');
        if (!row) return;
        for (const r of list.children) { r.tabIndex = r === row ? 0 : -1; r.classList.toggle('sel', r === row); }
        document.getElementById('opened').textContent = 'Selected ' + row.textContent;
        fetch('/selected?file=' + encodeURIComponent(row.textContent));
      });
      list.addEventListener('keydown', () => {});
    </script>`),
  '/selected': () => text('ok'),

  // A CMS's page editor: the intro is a contenteditable editor inside a section labelled
  // "Intro", with its placeholder drawn over it; the body's editor shows its placeholder from
  // a data attribute through CSS.
  '/edit': page('Edit page', `<style>.ed{position:relative;border:1px solid #999;min-height:48px}.ph{position:absolute;top:4px;left:4px;color:#999;pointer-events:none}
      [data-placeholder]:empty::before{content:attr(data-placeholder);color:#999}</style>
    <h1>Edit page</h1>
    <section aria-labelledby="intro-h"><h3 id="intro-h">Intro</h3>
      <div class="ed"><div class="ph">Write the intro…</div><div class="input" contenteditable="true" role="textbox" aria-multiline="true" style="min-height:48px"></div></div>
    </section>
    <div class="block"><div class="ed" contenteditable="true" data-placeholder="Body text"></div></div>
    <button type="button" id="save">Save draft</button>
    <script>
      const intro = document.querySelector('.input');
      intro.addEventListener('input', () => { document.querySelector('.ph').style.display = intro.textContent ? 'none' : ''; });
      document.getElementById('save').addEventListener('click', () =>
        fetch('/draft?intro=' + encodeURIComponent(intro.textContent) + '&body=' + encodeURIComponent(document.querySelector('[data-placeholder]').textContent)));
    </script>`),
  '/draft': () => text('ok'),

  // A monitoring app: a long grid of requests (300 rows of links), and a time-range dropdown
  // above it whose options open in a floating listbox appended at the end of the page.
  '/requests': page('Requests', `<style>body{margin:0;font:12px sans-serif}table{border-collapse:collapse}td{padding:0 6px;height:18px}
      #ranges{position:fixed;top:34px;left:8px;background:#fff;border:1px solid #999;margin:0;padding:0;list-style:none;z-index:5}#ranges li{padding:3px 10px}</style>
    <div style="height:30px;padding:4px 8px"><button id="range" aria-haspopup="listbox" aria-expanded="false" aria-controls="ranges">Last 24 hours</button></div>
    <table><tbody>${Array.from({ length: 300 }, (_, i) => `<tr><td><a href="/req/${i}">Request ${i}</a></td><td><a href="/trace/${i}">Trace ${i}</a></td><td><a href="/logs/${i}">Logs ${i}</a></td><td><a href="/host/${i}">Host ${i}</a></td><td><a href="/user/${i}">User ${i}</a></td><td><a href="/retry/${i}">Retry ${i}</a></td><td><a href="/raw/${i}">Raw ${i}</a></td><td><a href="/pin/${i}">Pin ${i}</a></td></tr>`).join('')}</tbody></table>
    <ul role="listbox" id="ranges" aria-label="Time range" hidden>
      ${['Last hour', 'Last 24 hours', 'Last 7 days', 'Last 30 days', 'All time'].map((r) => `<li role="option">${r}</li>`).join('')}
    </ul>
    <script>
      const button = document.getElementById('range');
      const ranges = document.getElementById('ranges');
      button.addEventListener('click', () => { ranges.hidden = !ranges.hidden; button.setAttribute('aria-expanded', String(!ranges.hidden)); });
      ranges.addEventListener('click', (e) => {
        const li = e.target.closest('li');
        if (!li) return;
        button.textContent = li.textContent;
        ranges.hidden = true;
        button.setAttribute('aria-expanded', 'false');
        fetch('/range?r=' + encodeURIComponent(li.textContent));
      });
    </script>`),
  '/range': () => text('ok'),

  // A data grid sorted by age: it moves rows on screen (absolute positions) and says their
  // order with aria-rowindex; the DOM keeps the order the rows were loaded in.
  '/people': page('People', `<style>.g{position:relative;height:130px;width:300px}.r{position:absolute;left:0;height:30px;display:flex;gap:8px}.c{width:100px}</style>
    <h1>People, youngest first</h1>
    <div role="grid" aria-label="People" aria-rowcount="4" class="g">
      <div role="row" aria-rowindex="1" class="r" style="top:0"><span role="columnheader" class="c">Name</span> <span role="columnheader" class="c">Age</span></div>
      <div role="row" aria-rowindex="4" class="r" style="top:90px"><span role="gridcell" class="c">Bob</span> <span role="gridcell" class="c">41</span></div>
      <div role="row" aria-rowindex="2" class="r" style="top:30px"><span role="gridcell" class="c">Ann</span> <span role="gridcell" class="c">23</span></div>
      <div role="row" aria-rowindex="3" class="r" style="top:60px"><span role="gridcell" class="c">Cleo</span> <span role="gridcell" class="c">35</span></div>
    </div>
    <script>
      document.querySelector('[role=grid]').addEventListener('click', (e) => {
        const cell = e.target.closest('[role=gridcell]');
        if (cell) fetch('/person?name=' + encodeURIComponent(cell.closest('[role=row]').firstElementChild.textContent));
      });
    </script>`),
  '/person': () => text('ok'),

  // A document list: a toolbar of three view-mode radios drawn as icons (the inputs hidden,
  // two with a tooltip, one with nothing), and rows with a "Pin" switch and a selection
  // checkbox a table library marked role="presentation".
  '/docs': page('Documents', `<style>.vh{position:absolute;opacity:0;width:0;height:0}.mode{display:inline-block;width:22px;height:22px;border:1px solid #999;margin:0 2px;cursor:pointer}
      .switch{display:inline-block;width:34px;height:18px;background:#ccc;border-radius:9px;cursor:pointer}td{padding:4px 10px}</style>
    <h1>Documents</h1>
    <div role="toolbar" class="toolbar">View:
      <label class="mode" title="List view"><input type="radio" name="view" value="list" class="vh" checked><span></span></label>
      <label class="mode" title="Grid view"><input type="radio" name="view" value="grid" class="vh"><span></span></label>
      <label class="mode"><input type="radio" name="view" value="columns" class="vh"><span></span></label>
      Sorted by name, 2 documents</div>
    <table><tbody>
      <tr><td role="presentation"><input type="checkbox" role="presentation" aria-label="Select Budget 2027" data-doc="budget"></td><td>Budget 2027</td><td><label class="switch" title="Pin"><input type="checkbox" class="vh" data-pin="budget"></label></td></tr>
      <tr><td role="presentation"><input type="checkbox" role="presentation" aria-label="Select Minutes" data-doc="minutes"></td><td>Minutes</td><td><label class="switch" title="Pin"><input type="checkbox" class="vh" data-pin="minutes"></label></td></tr>
    </tbody></table>
    <script>
      document.addEventListener('change', (e) => {
        const t = e.target;
        if (t.name === 'view') fetch('/view?mode=' + t.value);
        else if (t.dataset.pin) fetch('/pin?doc=' + t.dataset.pin + '&on=' + t.checked);
        else if (t.dataset.doc) fetch('/select-doc?doc=' + t.dataset.doc + '&on=' + t.checked);
      });
    </script>`),
  '/view': () => text('ok'),
  '/pin': () => text('ok'),
  '/select-doc': () => text('ok'),

  // A file manager whose context menu only a real right click opens (its handler checks
  // event.isTrusted, as apps that tell a person's input from a script's do).
  '/drive': page('Drive', `<style>#menu{position:fixed;background:#fff;border:1px solid #999}#menu div{padding:4px 12px}.file{padding:6px;cursor:default}</style>
    <h1>My drive</h1>
    <div class="file" id="budget">budget.xlsx</div>
    <div class="file" id="plan">plan.docx</div>
    <div id="menu" role="menu" hidden><div role="menuitem" id="download">Download</div><div role="menuitem" id="rename">Rename</div></div>
    <p id="status"></p>
    <script>
      let on = null;
      for (const f of document.querySelectorAll('.file')) f.addEventListener('click', () => { document.getElementById('status').textContent = f.textContent + ' selected'; });
      document.addEventListener('contextmenu', (e) => {
        const f = e.target.closest && e.target.closest('.file');
        if (!f || !e.isTrusted) return;
        e.preventDefault();
        on = f;
        const menu = document.getElementById('menu');
        menu.style.left = e.clientX + 'px';
        menu.style.top = e.clientY + 'px';
        menu.hidden = false;
      });
      document.getElementById('download').addEventListener('click', () => {
        document.getElementById('menu').hidden = true;
        document.getElementById('status').textContent = 'Downloading ' + on.textContent;
        fetch('/download?file=' + encodeURIComponent(on.textContent));
      });
    </script>`),
  '/download': () => text('ok'),

  // A web terminal in the manner of xterm.js: the visible box passes focus to a hidden
  // textarea, which receives the keys.
  '/term': page('Terminal', `<style>#term{background:#111;color:#0f0;font:14px monospace;height:120px;padding:6px}#helper{position:absolute;left:-9999px;top:0;width:1px;height:1px;opacity:0}</style>
    <h1>Terminal</h1>
    <div id="term" tabindex="0" aria-label="Terminal">$ <span id="line"></span><pre id="out"></pre></div>
    <textarea id="helper" aria-label="Terminal input"></textarea>
    <script>
      const helper = document.getElementById('helper');
      const line = document.getElementById('line');
      document.getElementById('term').addEventListener('focus', () => helper.focus());
      helper.addEventListener('keydown', (e) => {
        e.preventDefault();
        if (e.key === 'Enter') {
          document.getElementById('out').textContent += line.textContent + ': done\\n';
          fetch('/ran?cmd=' + encodeURIComponent(line.textContent));
          line.textContent = '';
        } else if (e.key.length === 1) line.textContent += e.key;
      });
    </script>`),
  '/ran': () => text('ok'),
  // A notebook IDE's menubar in the manner of Lumino: "Run" opens a menu; its items run
  // their command only for a real pointer's click (the handler checks event.isTrusted) and
  // close the menu on any click. "Clear Outputs" runs nothing at all (a broken command).
  '/notebook': page('Notebook', `<style>#menu{position:absolute;top:30px;left:8px;background:#fff;border:1px solid #999}#menu div{padding:4px 12px}</style>
    <div role="menubar"><div role="menuitem" id="run" aria-haspopup="true" aria-expanded="false" aria-controls="menu" style="display:inline-block;padding:4px 8px">Run</div></div>
    <div id="menu" role="menu" hidden><div role="menuitem" id="all">Run All Cells</div><div role="menuitem" id="clear">Clear Outputs</div></div>
    <pre id="cells">[ ]: print(1)</pre>
    <script>
      const run = document.getElementById('run');
      const menu = document.getElementById('menu');
      const close = () => { menu.hidden = true; run.setAttribute('aria-expanded', 'false'); };
      run.addEventListener('click', () => { menu.hidden = !menu.hidden; run.setAttribute('aria-expanded', String(!menu.hidden)); });
      document.getElementById('all').addEventListener('click', (e) => {
        close();
        if (!e.isTrusted) return;
        document.getElementById('cells').textContent = '[1]: print(1)\\n1';
        fetch('/ran-all');
      });
      document.getElementById('clear').addEventListener('click', close);
    </script>`),
  '/ran-all': () => text('ok'),
};

let navigator = () => ({ action: 'done', success: false, answer: 'no script' });
const { navigatorTurns, paths } = navigatorSuite({ routes, key: KEY, navigator: (turn) => navigator(turn), ready: (env) => ({ site, tab, ui } = env) });
const all = () => navigatorTurns().join('\n---\n');

test('a table form: each cell is named by its column, the new row is filled; hidden labels name a select and a search box', async () => {
  const plan = [['Title', 'The Word for World Is Forest'], ['Publication date', '1972-03-01'], ['Pages', '189']];
  let step = 0;
  navigator = (turn) => {
    const ls = lines(turn);
    if (step < plan.length) {
      const [column, value] = plan[step];
      // The new row's field: the one of its column without a value.
      const line = ls.filter((l) => new RegExp(`^\\[\\d+\\]\\*? (textbox|spinbutton) "${column}"`).test(l)).find((l) => !/value=/.test(l));
      if (!line) return { action: 'done', success: false, answer: `no empty ${column} field` };
      step++;
      return { action: 'type', element: idOf(line), text: value };
    }
    if (step === plan.length) {
      const language = ls.find((l) => /^\[\d+\]\*? combobox "Language"/.test(l));
      if (!language) return { action: 'done', success: false, answer: 'no Language select' };
      step++;
      return { action: 'select_option', element: idOf(language), option: 'Français' };
    }
    if (paths('/author-saved').length) return { action: 'done', success: true, answer: 'Saved.' };
    const save = elements(turn).find((e) => e.name === 'Save');
    return { action: 'click', element: save.id };
  };
  await ui.startTask(tab, 'Add the book "The Word for World Is Forest" (1972-03-01, 189 pages), set the language to French and save', site.url + '/author');
  await ui.waitStatus(/^(Done|Failed)/);
  const saved = paths('/author-saved');
  assert.equal(saved.length, 1, all());
  assert.equal(saved[0].query['books-2-title'], 'The Word for World Is Forest');
  assert.equal(saved[0].query['books-2-date'], '1972-03-01');
  assert.equal(saved[0].query['books-2-pages'], '189');
  assert.equal(saved[0].query['books-0-title'], 'The Dispossessed', 'the first book untouched');
  assert.equal(saved[0].query.language, 'fr');
  const first = navigatorTurns()[0];
  assert.equal(lines(first).filter((l) => /^\[\d+\] textbox "Title"/.test(l)).length, 3, first);
  assert.match(first, /^\[\d+\] textbox "Search books"/m, first);
  // Rows that have names name their cells too.
  assert.match(first, /^\[\d+\] textbox "Price \(Hardcover\)" value="25"/m, first);
  assert.doesNotMatch(first, /combobox "English/, 'a select is not named by its options');
  assert.doesNotMatch(first, /text field in "Books"/, first);
  assert.match(await ui.status().textContent(), /^Done/);
});

test('a file browser with a roving tab stop: every row is listed, and the third is selected', async () => {
  navigator = (turn) => {
    if (paths('/selected').length) return { action: 'done', success: true, answer: 'Selected.' };
    const row = elements(turn).find((e) => e.name === 'notes.txt');
    return row ? { action: 'click', element: row.id } : { action: 'done', success: false, answer: 'no notes.txt row' };
  };
  await ui.startTask(tab, 'Select notes.txt', site.url + '/files');
  await ui.waitStatus(/^(Done|Failed)/);
  assert.deepEqual(paths('/selected').map((r) => r.query.file), ['notes.txt'], all());
  assert.equal(await tab.evaluate(() => document.getElementById('opened').textContent), 'Selected notes.txt');
  const first = navigatorTurns()[0];
  for (const f of ['analysis.ipynb', 'data.csv', 'notes.txt', 'README.md']) assert.match(first, new RegExp(`^\\[\\d+\\] listitem "${f.replace('.', '\\.')}"`, 'm'), first);
});

test('rich-text editors are named by their region and their placeholder, and the intro is written', async () => {
  navigator = (turn) => {
    if (paths('/draft').length) return { action: 'done', success: true, answer: 'Saved.' };
    const els = elements(turn);
    const intro = els.find((e) => e.role === 'textbox' && e.name === 'Intro');
    if (!/Result of the previous step/.test(turn)) return intro ? { action: 'type', element: intro.id, text: 'Hello readers' } : { action: 'done', success: false, answer: 'no Intro editor' };
    return { action: 'click', element: els.find((e) => e.name === 'Save draft').id };
  };
  await ui.startTask(tab, 'Write "Hello readers" as the intro and save the draft', site.url + '/edit');
  await ui.waitStatus(/^(Done|Failed)/);
  assert.deepEqual(paths('/draft').map((r) => [r.query.intro, r.query.body]), [['Hello readers', '']], all());
  const first = navigatorTurns()[0];
  assert.match(first, /^\[\d+\] \S+ "Body text"/m, first);
  assert.doesNotMatch(first, /^\[\d+\] textbox$/m, 'no bare unnamed editor');
});

test('a dropdown opened over a 300-row grid: its five options come first in the cut list, and one is chosen', async () => {
  navigator = (turn) => {
    if (paths('/range').length) return { action: 'done', success: true, answer: 'Showing the last 7 days.' };
    const els = elements(turn);
    const option = els.find((e) => e.role === 'option' && e.name === 'Last 7 days');
    if (option) return { action: 'click', element: option.id };
    if (/Result of the previous step/.test(turn)) return { action: 'done', success: false, answer: 'the options are not listed' };
    return { action: 'click', element: els.find((e) => e.name === 'Last 24 hours').id };
  };
  await ui.startTask(tab, 'Show the requests of the last 7 days', site.url + '/requests');
  await ui.waitStatus(/^(Done|Failed)/);
  assert.deepEqual(paths('/range').map((r) => r.query.r), ['Last 7 days'], all());
  const opened = navigatorTurns()[1];
  assert.match(opened, /… \d+ more (in the viewport, not listed|elements not shown)/, 'the list was cut');
  for (const r of ['Last hour', 'Last 24 hours', 'Last 7 days', 'Last 30 days', 'All time']) assert.match(opened, new RegExp(`option "${r}"`), opened);
});

test('a grid sorted on screen by aria-rowindex is read in the order a person sees, and its first row is clicked', async () => {
  let read = false;
  navigator = (turn) => {
    if (paths('/person').length) return { action: 'done', success: true, answer: 'Done.' };
    if (!read) {
      read = true;
      return { action: 'extract_text' };
    }
    // The first person listed.
    const cell = lines(turn).find((l) => /gridcell "(Ann|Bob|Cleo)"/.test(l));
    return { action: 'click', element: idOf(cell) };
  };
  await ui.startTask(tab, 'Click the first person in the list', site.url + '/people');
  await ui.waitStatus(/^(Done|Failed)/);
  assert.deepEqual(paths('/person').map((r) => r.query.name), ['Ann'], all());
  const first = navigatorTurns()[0];
  const at = (n) => first.indexOf(`gridcell "${n}"`);
  assert.ok(at('Ann') > 0 && at('Ann') < at('Cleo') && at('Cleo') < at('Bob'), first);
  const pageText = navigatorTurns()[1].match(/⟦untrusted data: page text⟧\n([\s\S]*?)⟦\/untrusted data⟧/);
  assert.ok(pageText, navigatorTurns()[1]);
  const t = pageText[1];
  assert.ok(t.indexOf('Ann') < t.indexOf('Cleo') && t.indexOf('Cleo') < t.indexOf('Bob'), t);
});

test('a control has its own name: three icon radios, a row\'s Pin switch, a row checkbox marked presentation', async () => {
  let step = 0;
  navigator = (turn) => {
    const ls = lines(turn);
    const line = (re) => ls.find((l) => re.test(l));
    const todo = [
      () => line(/^\[\d+\]\*? radio "Grid view"/),
      // The second row's: told apart by what is near it.
      () => line(/^\[\d+\]\*? switch "Pin".*Minutes/),
      () => line(/^\[\d+\]\*? checkbox "Select Minutes"/),
    ];
    if (step === todo.length) return { action: 'done', success: true, answer: 'Done.' };
    const target = todo[step++]();
    return target ? { action: 'click', element: idOf(target) } : { action: 'done', success: false, answer: `step ${step} not found` };
  };
  await ui.startTask(tab, 'Switch to the grid view, pin the minutes and select them', site.url + '/docs');
  await ui.waitStatus(/^(Done|Failed)/);
  assert.deepEqual(paths('/view').map((r) => r.query.mode), ['grid'], all());
  assert.deepEqual(paths('/pin').map((r) => [r.query.doc, r.query.on]), [['minutes', 'true']]);
  assert.deepEqual(paths('/select-doc').map((r) => [r.query.doc, r.query.on]), [['minutes', 'true']]);
  const first = navigatorTurns()[0];
  const radios = lines(first).filter((l) => /^\[\d+\] radio/.test(l));
  assert.equal(radios.length, 3, first);
  assert.ok(radios.every((l) => !/Sorted by name/.test(l.split(' near ')[0])), 'no radio is named after the toolbar');
  assert.doesNotMatch(first, /presentation/, first);
  assert.doesNotMatch(first, /switch "[^"]*Budget/, 'a switch is not named after its row');
});

test('context_click opens a menu only a real right click opens; the file is downloaded from it', async () => {
  navigator = (turn) => {
    if (paths('/download').length) return { action: 'done', success: true, answer: 'Downloading.' };
    const els = elements(turn);
    const download = els.find((e) => e.name === 'Download');
    if (download) return { action: 'click', element: download.id };
    if (/Result of the previous step/.test(turn)) return { action: 'done', success: false, answer: 'no menu' };
    return { action: 'context_click', element: els.find((e) => e.name === 'budget.xlsx').id };
  };
  await ui.startTask(tab, 'Download budget.xlsx from its context menu', site.url + '/drive');
  await ui.waitStatus(/^(Done|Failed)/);
  assert.deepEqual(paths('/download').map((r) => r.query.file), ['budget.xlsx'], all());
  assert.equal(await tab.evaluate(() => document.getElementById('status').textContent), 'Downloading budget.xlsx');
  const s = await ui.steps();
  assert.ok(s.some((x) => /Right-clicked/.test(x) && /real input/.test(x)), s.join('\n'));
  assert.match(await ui.status().textContent(), /^Done/);
});

test('keys for a terminal reach the hidden textarea it passes focus to; Enter without an element goes to what has focus', async () => {
  const keys = [{ element: true, key: 'l' }, { element: true, key: 's' }, { element: false, key: 'Enter' }];
  let step = 0;
  navigator = (turn) => {
    if (step === keys.length) return { action: 'done', success: true, answer: 'Ran ls.' };
    const k = keys[step++];
    const term = elements(turn).find((e) => e.name === 'Terminal');
    return k.element ? { action: 'press', element: term.id, key: k.key } : { action: 'press', key: k.key };
  };
  await ui.startTask(tab, 'Run ls in the terminal', site.url + '/term');
  await ui.waitStatus(/^(Done|Failed)/);
  assert.deepEqual(paths('/ran').map((r) => r.query.cmd), ['ls'], all() + '\n' + (await ui.steps()).join('\n'));
  assert.equal(await tab.evaluate(() => document.getElementById('out').textContent), 'ls: done\n');
  // The keys reached the textarea as the driver sent them: no repeat through Chrome's
  // debugger (whose bar a person would see) was needed.
  const s = await ui.steps();
  assert.ok(!s.some((x) => /real input/.test(x)), s.join('\n'));
});

test('a menu item that ignores synthetic clicks is repeated as real input and runs; one that does nothing is reported as not reacting', async () => {
  let want = 'Run All Cells';
  navigator = (turn) => {
    const els = elements(turn);
    const item = els.find((e) => e.name === want);
    if (item) return { action: 'click', element: item.id };
    if (/Result of the previous step: (done|failed)[^\n]*(real input|did not react)/.test(turn)) {
      if (want === 'Run All Cells') {
        want = 'Clear Outputs';
        return { action: 'click', element: els.find((e) => e.name === 'Run').id };
      }
      return { action: 'done', success: true, answer: 'Ran all cells.' };
    }
    return { action: 'click', element: els.find((e) => e.name === 'Run').id };
  };
  await ui.startTask(tab, 'Run all cells of the notebook', site.url + '/notebook');
  await ui.waitStatus(/^(Done|Failed)/);
  // The command ran: the page shows the output and told its server.
  assert.equal(paths('/ran-all').length, 1, all());
  assert.equal(await tab.evaluate(() => document.getElementById('cells').textContent), '[1]: print(1)\n1');
  const s = await ui.steps();
  assert.ok(s.some((x) => /Run All Cells/.test(x) && /real input/.test(x)), s.join('\n'));
  // "Clear Outputs" changed nothing even as real input: not reported as done.
  assert.ok(s.some((x) => /Clear Outputs/.test(x) && /did not react/.test(x)), s.join('\n'));
});
