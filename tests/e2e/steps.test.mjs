// The task's timeline as a person reads it: one sentence per step ("Clicked ONE", "Typed
// Sergio into the text field", "Finished: …"), never the action's JSON, with the details
// (the action as the model wrote it, who answered, the tokens) one click away. A scripted
// model walks through every action kind on a small https page the manifest does not list;
// what is checked is the text the panel shows (innerText: a closed disclosure's contents are
// not shown, so they are not in it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { elements, find, planner } from './lib/scripted-shopper.mjs';
import { scriptedModel, startAgentEnv } from './lib/agent-harness.mjs';

const ORIGIN = 'https://plain.tandem.test';
const PAGE = `<!doctype html><title>Plain form</title>
<h1>Plain form</h1>
<button type="button" onclick="document.getElementById('out').textContent = 'One was pressed'">ONE</button>
<p id="out"></p>
<input type="text">
<label>Size <select><option>S</option><option>M</option><option>L</option></select></label>
<p>Opening hours: 9 to 17.</p>
<div style="height: 2000px"></div>
<p>The end.</p>`;
const TWO = '<!doctype html><title>Page two</title><h1>Page two</h1><p>Nothing else.</p>';

let env, panel, ui;

before(async () => {
  env = await startAgentEnv({ origin: ORIGIN, routes: { '/': PAGE, '/two': TWO }, key: 'sk-test-steps-12345678' });
  ({ panel, ui } = env);
});
after(async () => {
  await env?.close();
});

test('every action kind reads as a sentence; the JSON, model and tokens are one click away', async () => {
  // One step of each kind, in order, whatever the page shows (the elements are picked by
  // what a person sees: the button's text, the unlabelled field, the "Size" list).
  const script = [
    (els) => ({ action: 'click', element: find(els, (e) => e.name === 'ONE').id }),
    (els, turn) => ({ action: 'type', element: Number(turn.match(/^\[(\d+)\]\*? textbox\b/m)?.[1]), text: 'Sergio' }),
    (els) => ({ action: 'select_option', element: find(els, (e) => e.name === 'Size').id, option: 'M' }),
    () => ({ action: 'scroll', direction: 'down' }),
    () => ({ action: 'extract_text' }),
    () => ({ action: 'wait', ms: 500 }),
    () => ({ action: 'navigate', url: `${ORIGIN}/two` }),
    () => ({ action: 'back' }),
    () => ({ action: 'open_tab', url: `${ORIGIN}/two` }),
    () => ({ action: 'switch_tab', tab: 0 }),
    () => ({ action: 'switch_tab', tab: 1 }),
    () => ({ action: 'close_tab' }),
    () => ({ action: 'ask_user', question: 'Which colour?' }),
  ];
  let n = 0;
  env.mock.setDefault(scriptedModel({
    planner,
    navigator: (turn) => {
      const next = script[n];
      if (!next) return { action: 'done', success: true, answer: 'All done: the form is filled.' };
      n += 1;
      return next(elements(turn), turn);
    },
  }));
  await ui.startTask(env.tab, 'Fill in the plain form', `${ORIGIN}/`);
  await ui.question().waitFor({ timeout: 30_000 });
  await panel.bringToFront();
  // One click on a step shows what a developer wants; it stays open while later steps are
  // drawn (the timeline is drawn again at each).
  const clicked = ui.list().getByRole('listitem').filter({ hasText: /^Clicked ONE/ });
  await clicked.locator('summary').click();
  await panel.getByRole('textbox', { name: 'Answer', exact: true }).fill('green');
  await ui.button('Send answer').click();
  await ui.waitStatus(/^Done/, 30_000);
  await ui.list().getByText(/^Finished/).waitFor();

  // The step opened above stayed open: the action as written, who answered, the cost.
  assert.equal(await clicked.locator('details').getAttribute('open'), '');
  const details = await clicked.innerText();
  assert.match(details, /\{"action":"click","element":\d+\} on \[\d+\] button "ONE"/, details);
  assert.match(details, /✓ clicked.* · OpenAI-compatible · \d+ tokens/, details);
  await clicked.locator('summary').click();
  await clicked.getByText(/OpenAI-compatible/).waitFor({ state: 'hidden' });

  const shown = await ui.list().innerText();
  for (const line of [
    /^Plan: 1\. find the item/m,
    /^Clicked ONE$/m,
    /^Typed Sergio into the text field$/m,
    /^Chose M in Size$/m,
    /^Scrolled down$/m,
    /^Read the page$/m,
    /^Waited 0\.5 seconds$/m,
    /^Went to plain\.tandem\.test\/two$/m,
    /^Went back a page$/m,
    /^Opened plain\.tandem\.test\/two in a new tab$/m,
    /^Switched to tab 0$/m,
    /^Switched to tab 1$/m,
    /^Closed the tab$/m,
    /^Asked you Which colour\?; you answered green$/m,
    /^Finished: All done: the form is filled\.$/m,
  ]) assert.match(shown, line, shown);
  for (const raw of ['{"action"', '"element"', 'tokens', 'OpenAI-compatible', '✓', '[1]']) {
    assert.ok(!shown.includes(raw), `the timeline shows no ${raw}:\n${shown}`);
  }
  // The control acted on is emphasised, what was typed too.
  assert.equal(await clicked.locator('strong').innerText(), 'ONE');
  const typed = ui.list().getByRole('listitem').filter({ hasText: /^Typed Sergio/ });
  assert.equal(await typed.locator('em').innerText(), 'Sergio');
  assert.equal(await typed.locator('strong').innerText(), 'the text field');
});
