// The judge in the browser (issue 44): an admin's bulk delete as a web framework's admin does
// it — rows, an "Action" list, "Go", then its own confirmation page whose only words of the act
// are its question ("Are you sure you want to delete the selected books?") above "Yes, I'm
// sure". The model is scripted; what is deleted is judged by what the server received.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { scriptedModel, startAgentEnv } from './lib/agent-harness.mjs';
import { page } from './lib/shop-site.mjs';
import { elements, find, planner } from './lib/scripted-shopper.mjs';

const ADMIN = 'https://admin.tandem.test';
const BOOKS = [[1, 'Dune'], [2, 'Children of Dune']];
const deleted = [];

const confirmation = page('Are you sure? | Django site admin', `<h1>Are you sure?</h1>
  <p>Are you sure you want to delete the selected books? All of the following objects and their related items will be deleted:</p>
  <h2>Objects</h2><ul>${BOOKS.map(([, t]) => `<li>Book: ${t}</li>`).join('')}</ul>
  <form method="post" action="/books/"><div>
    ${BOOKS.map(([id]) => `<input type="hidden" name="_selected_action" value="${id}">`).join('')}
    <input type="hidden" name="action" value="delete_selected"><input type="hidden" name="post" value="yes">
    <input type="submit" value="Yes, I’m sure"> <a href="/books/">No, take me back</a>
  </div></form>`);

const changelist = page('Select book to change | Django site admin', `<h1>Select book to change</h1>
  <form method="post" action="/books/">
    <div class="actions"><label>Action: <select name="action">
      <option value="" selected>---------</option><option value="delete_selected">Delete selected books</option>
    </select></label> <button type="submit" name="index" value="0">Go</button></div>
    <table><tr><th></th><th>Title</th></tr>
    ${BOOKS.map(([id, t]) => `<tr><td><input type="checkbox" name="_selected_action" value="${id}" checked aria-label="Select ${t}"></td><td>${t}</td></tr>`).join('')}
    </table>
  </form>`);

const admin = {
  '/books/': (rec) => {
    if (rec.method !== 'POST') return changelist;
    const form = new URLSearchParams(rec.body);
    if (form.get('action') !== 'delete_selected') return changelist;
    if (form.get('post') !== 'yes') return confirmation;
    deleted.push(...form.getAll('_selected_action'));
    return page('Deleted', '<h1>Successfully deleted 2 books.</h1>');
  },
  '/confirm': confirmation,
};

let env, panel, tab, ui, mock;
let navigator;

before(async () => {
  env = await startAgentEnv({ origin: ADMIN, routes: admin, key: 'sk-agent-judge-12345678' });
  ({ panel, tab, ui, mock } = env);
  await panel.evaluate(() => {
    window.asked = [];
    const box = document.getElementById('task-confirm');
    new MutationObserver(() => {
      const t = document.getElementById('task-confirm-text').textContent;
      if (!box.hidden && t && window.asked.at(-1) !== t) window.asked.push(t);
    }).observe(box, { attributes: true, childList: true, subtree: true, characterData: true });
  });
});
after(async () => {
  await env?.close();
});
beforeEach(async () => {
  mock.reset();
  mock.setDefault(scriptedModel({ planner, navigator: (turn) => navigator(turn) }));
  deleted.length = 0;
  await panel.evaluate(() => { window.asked = []; });
});

const asked = () => panel.evaluate(() => window.asked);

/** Deletes the selected books the admin's way: choose the action, Go, then Yes, I'm sure. */
function bulkDeleter() {
  let chose = false;
  return (turn) => {
    const els = elements(turn);
    if (/you denied|Successfully deleted/.test(turn)) return { action: 'done', success: true, answer: 'Done.' };
    const yes = find(els, (e) => e.name === 'Yes, I’m sure');
    if (yes) return { action: 'click', element: yes.id };
    const list = find(els, (e) => e.name.startsWith('Action'));
    if (!chose && list) { chose = true; return { action: 'select_option', element: list.id, option: 'Delete selected books' }; }
    const go = find(els, (e) => e.name === 'Go');
    return go ? { action: 'click', element: go.id } : { action: 'done', success: true, answer: 'Deleted.' };
  };
}

test('a confirmation page\'s "Yes, I\'m sure" asks as a deletion, quoting the page\'s question; Deny deletes nothing', async () => {
  navigator = bulkDeleter();
  await ui.startTask(tab, 'Tidy up the library', `${ADMIN}/confirm`);
  const question = ui.approval().filter({ hasText: 'Yes, I’m sure' });
  await question.waitFor({ timeout: 20_000 });
  const text = await question.textContent();
  assert.match(text, /which deletes something/);
  assert.match(text, /the page asks: “Are you sure you want to delete the selected books\?”/);
  assert.match(text, /Your task did not ask for that/);
  assert.deepEqual(deleted, [], 'nothing deleted before the answer');
  await ui.button('Deny').click();
  await ui.waitStatus(/^Done/);
  assert.deepEqual(deleted, [], 'Deny: nothing deleted');
});

test('a bulk delete asks once, at "Go" with the chosen action, and the admin\'s own confirmation is covered by that approval', async () => {
  navigator = bulkDeleter();
  await ui.startTask(tab, 'Delete all books by Frank Herbert', `${ADMIN}/books/`);
  const question = ui.approval().filter({ hasText: 'Go' });
  await question.waitFor({ timeout: 20_000 });
  const text = await question.textContent();
  assert.match(text, /which deletes something: that may not be undoable \(it runs “Delete selected books”\)/);
  assert.doesNotMatch(text, /did not ask/, 'the task asked for deleting');
  await ui.button('Approve').click();
  await ui.waitStatus(/^Done/);
  assert.deepEqual(deleted, ['1', '2']);
  assert.equal((await asked()).length, 1, `one question: ${await asked()}`);
});
