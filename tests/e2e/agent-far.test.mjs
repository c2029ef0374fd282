// Long pages: the driver describes elements far from the viewport briefly (handle, tag, role,
// box), since the model is shown only the viewport and the nearest elements around it. These
// tests hold the guards to what the page really has even then: an element the model knows by
// its number from an earlier list, now far above, is described in full before the action
// (its approval question names it), and a form is always described whole (a password field
// far above its submit button still makes the submission ask), a workflow's replay finds its
// element by content wherever it now is, and the end of a page with more controls than the
// driver reports is seen once scrolled to. Each asserts what the page received, and what
// the model was and was not shown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { navigatorSuite } from './lib/suites.mjs';
import { SHOP } from './lib/agent-harness.mjs';
import { page } from './lib/fixtures.mjs';
import { elements } from './lib/scripted-shopper.mjs';

const KEY = 'sk-test-agent-far-12345678';
let tab, ui, panel;

// A catalogue: a toolbar whose "Delete all items" button (no form, a listener) sits above 300
// rows of links and buttons, and a footer link at the very end.
const rows = Array.from({ length: 300 }, (_, i) =>
  `<tr><td><a href="/item/${i}">Item ${i}</a></td><td><button type="button" class="add">Add ${i}</button></td></tr>`).join('');
// A sign-up form: the password first, then 70 preferences, the Continue button last, so that
// more than a screenful of the form's own controls lies between the button and the password.
const prefs = Array.from({ length: 70 }, (_, i) => `<p><label><input type="checkbox" name="pref${i}"> Topic ${i}</label></p>`).join('');

const routes = {
  '/catalogue': page('Catalogue', `<h1>Catalogue</h1>
    <div role="toolbar" aria-label="Catalogue tools"><button type="button" id="wipe">Delete all items</button></div>
    <table>${rows}</table><footer><a href="/contact">Contact us</a></footer>
    <script>document.getElementById('wipe').addEventListener('click', () => fetch('/wiped', { method: 'POST' }));</script>`),
  '/wiped': page('Wiped', '<p>ok</p>'),
  '/signup': page('Sign up', `<h1>Create your account</h1>
    <form action="/created" method="post"><p><label>Password <input type="password" name="password"></label></p>
    ${prefs}<button>Continue</button></form>`),
  '/created': page('Created', '<h1>Welcome</h1>'),
  // A mailbox whose "Archive all read" button comes after the messages: with 200 of them it
  // is far below the first screen.
  '/inbox': page('Inbox', `<h1>Inbox</h1>
    ${Array.from({ length: 200 }, (_, i) => `<p><a href="/mail/${i}">Message ${i}</a> <button type="button">Star</button></p>`).join('')}
    <p><span>Mailbox tools</span> <button type="button" id="archive">Archive all read</button></p>
    <script>document.getElementById('archive').addEventListener('click', () => fetch('/archived', { method: 'POST' }));</script>`),
  '/archived': page('Archived', '<p>ok</p>'),
  // More controls than the driver reports (1,500): the page's end, scrolled to, must still be
  // seen.
  '/huge': page('Every item', `<h1>Every item</h1><table>${Array.from({ length: 1000 }, (_, i) =>
    `<tr><td><a href="/item/${i}">Item ${i}</a></td><td><button type="button">Add ${i}</button></td></tr>`).join('')}</table>
    <footer><a href="/contact">Contact us</a></footer>`),
  '/contact': page('Contact', '<h1>Write to us</h1>'),
};

let navigator = () => ({ action: 'done', success: true, answer: 'nothing to do' });
const { navigatorTurns, paths } = navigatorSuite({
  routes,
  key: KEY,
  navigator: (turn) => navigator(turn),
  ready: (env) => ({ tab, ui, panel } = env),
});

/** The element list of `turn`: its listed lines and its summary lines. */
const listOf = (turn) => (turn.match(/⟦untrusted data: element list⟧[\s\S]*?⟦\/untrusted data⟧/) ?? [''])[0];

test('a far element known by its number from an earlier list: its action asks by its real name, and Approve clicks it', async () => {
  let wipe = null;
  let step = 0;
  navigator = (turn) => {
    step++;
    if (/Result of the previous step: done: clicked/.test(turn)) return { action: 'done', success: true, answer: 'Deleted.' };
    if (step === 1) {
      wipe = elements(turn).find((e) => e.name === 'Delete all items');
      return { action: 'scroll', direction: 'end' };
    }
    // At the end of the page the toolbar is far above: not listed, but its number still holds.
    return { action: 'click', element: wipe ? wipe.id : 0 };
  };
  await ui.startTask(tab, 'Empty my catalogue', `${SHOP}/catalogue`);
  await ui.approval().waitFor({ timeout: 20_000 });
  assert.match(await ui.approval().textContent(), /Delete all items/);
  assert.equal(paths('/wiped').length, 0, 'nothing was deleted before the person answered');
  await ui.button('Approve').click();
  await ui.waitStatus(/^Done/);
  assert.equal(paths('/wiped').length, 1, 'the page received the click');
  const turns = navigatorTurns();
  assert.ok(wipe, 'the first list named the toolbar button');
  const atEnd = listOf(turns[1]);
  assert.match(atEnd, /"Contact us"/, 'the second list is the end of the page');
  assert.doesNotMatch(atEnd, /Delete all items/, 'the toolbar button was far above, not listed');
  assert.match(atEnd, /more above the viewport, not listed: \d+ links?, \d+ buttons/, atEnd);
});

test('a form is described whole: Continue far below the password field still asks before submitting a password', async () => {
  navigator = (turn) => {
    if (/you denied/.test(turn)) return { action: 'done', success: true, answer: 'I did not submit the form.' };
    const go = elements(turn).find((e) => e.name === 'Continue');
    return go ? { action: 'click', element: go.id } : { action: 'scroll', direction: 'end' };
  };
  await ui.startTask(tab, 'Finish signing up', `${SHOP}/signup`);
  await ui.approval().waitFor({ timeout: 20_000 });
  assert.match(await ui.approval().textContent(), /password/i);
  await ui.button('Deny').click();
  await ui.waitStatus(/^Done/);
  assert.equal(paths('/created').length, 0, 'the form was not submitted');
  const clicked = navigatorTurns().at(-2) ?? '';
  assert.doesNotMatch(listOf(clicked), /"Password"/, 'the password field was out of the list when Continue was clicked');
});

test('a replay finds its element by content even far below the first screen, with no model request', async () => {
  // Recorded when the mailbox was short; imported as a person would.
  const flow = {
    id: 'far', name: 'Archive read mail', goal: 'Archive read mail', startUrl: `${SHOP}/inbox`, params: [],
    steps: [{ action: 'click', page: 'shop.tandem.test/inbox', target: { role: 'button', tag: 'button', name: 'Archive all read', text: 'Archive all read', context: 'Mailbox tools' } }],
  };
  await panel.evaluate(() => chrome.storage.local.remove('workflows'));
  const view = panel.getByRole('region', { name: 'Workflows' });
  await panel.getByRole('button', { name: 'Workflows', exact: true }).click();
  await panel.getByLabel('Import workflows').setInputFiles({ name: 'far.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify([flow])) });
  await panel.getByRole('status', { name: 'Workflows status' }).filter({ hasText: 'Imported 1 workflow.' }).waitFor();
  await view.getByRole('button', { name: 'Back to conversation' }).click();
  navigator = () => ({ action: 'done', success: false, answer: 'the replay handed over' });
  await ui.startTask(tab, '/run Archive read mail', null);
  await ui.waitStatus(/^Done: Workflow .* replayed/, 30_000);
  assert.equal(paths('/archived').length, 1, 'the page received the click');
  assert.equal(navigatorTurns().length, 0, 'no model request');
});

test('a page with more controls than the driver reports: scrolled to its end, the footer link is listed and clicked', async () => {
  navigator = (turn) => {
    if (/Write to us|\/contact/.test(turn)) return { action: 'done', success: true, answer: 'Opened the contact page.' };
    const contact = elements(turn).find((e) => e.name === 'Contact us');
    return contact ? { action: 'click', element: contact.id } : { action: 'scroll', direction: 'end' };
  };
  await ui.startTask(tab, 'Open the contact page', `${SHOP}/huge`);
  await ui.waitStatus(/^Done/, 30_000);
  assert.equal(paths('/contact').length, 1, 'the contact page was opened');
  const atEnd = listOf(navigatorTurns()[1]);
  assert.match(atEnd, /"Item 999"/, atEnd);
  assert.match(atEnd, /more elements than the driver reports/, atEnd);
});
