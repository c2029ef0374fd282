// The cost ceiling a person sets: "Stop a task or answer after N tokens" in Settings. A
// model that would go on for many steps (an archive with a "Next page" link on every page)
// is paused once the tokens its provider reported reach the ceiling: the provider receives
// no request after the pause and the site sees no further page. Continue allows another
// ceiling's worth, and the task goes on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { lastUserText, startAgentEnv } from './lib/agent-harness.mjs';
import { openSettings, saveSettings } from './lib/panel.mjs';
import { page } from './lib/shop-site.mjs';
import { elements, find } from './lib/scripted-shopper.mjs';

const KEY = 'sk-test-cost-12345678';
/** The archive pages the site served, in order (what the site saw of the agent). */
const served = [];
const routes = {
  '/archive': (rec) => {
    const n = Number(rec.query.p ?? 1) || 1;
    served.push(n);
    return page(`Archive page ${n}`, `<h1>Archive, page ${n}</h1>
      <p>Old notices, page ${n} of many. The notice you look for is on a later page.</p>
      <a href="/archive?p=${n + 1}">Next page</a>`);
  },
};

/** Every request reports this much usage: 3,000 sent and 100 received. */
const USAGE = { input: 3000, output: 100 };
const PER_REQUEST = USAGE.input + USAGE.output;
/** The ceiling set in Settings: three requests reach it (9,300 tokens), the fourth passes it. */
const LIMIT = 9000;

/** A model that never finds what it looks for: it plans, then always follows "Next page". */
function endlessReader(rec) {
  const turn = lastUserText(rec.body);
  if (turn.startsWith('ROLE: PLANNER')) {
    return { reply: JSON.stringify({ plan: '1. read each archive page 2. find the notice', complete: false }), usage: USAGE };
  }
  const next = find(elements(turn), (e) => e.role === 'link' && e.name === 'Next page');
  const answer = next ? { action: 'click', element: next.id } : { action: 'scroll', direction: 'down' };
  return { reply: JSON.stringify(answer), usage: USAGE };
}

const generations = (mock) => mock.requests.filter((r) => r.method === 'POST' && /chat\/completions/.test(r.path));

let env;
before(async () => {
  env = await startAgentEnv({ routes, key: KEY });
});
after(async () => {
  await env?.close();
});

test('the token ceiling set in Settings pauses a long task with a sentence, and Continue goes on', async () => {
  const { panel, mock, tab, ui, site } = env;
  mock.reset();
  mock.setDefault(endlessReader);

  // The person sets the ceiling in Settings.
  await openSettings(panel);
  const field = panel.getByRole('spinbutton', { name: 'Stop a task or answer after N tokens' });
  assert.equal(await field.inputValue(), '', 'the default shows as the placeholder');
  assert.equal(await field.getAttribute('placeholder'), '200000');
  await field.fill(String(LIMIT));
  await saveSettings(panel);
  const saved = await panel.evaluate(() => chrome.storage.local.get('settings').then((x) => x.settings.agent.tokenLimit));
  assert.equal(saved, LIMIT);

  await ui.startTask(tab, 'Find the notice about the old library in the archive', site.url + '/archive?p=1');
  await ui.waitStatus(/^Paused: The token limit was reached/, 30_000);
  const status = await ui.status().textContent();
  const atPause = generations(mock).length;
  // Three requests reach the ceiling; none is sent after it.
  assert.equal(atPause, Math.ceil(LIMIT / PER_REQUEST), `requests before the pause: ${atPause}`);
  const used = atPause * PER_REQUEST;
  assert.match(status, new RegExp(`this task used ${used.toLocaleString('en-US')} tokens`), status);
  assert.match(status, /limit set in Settings is 9,000 tokens\. Press Continue/, status);
  const pagesAtPause = served.length;
  assert.ok(pagesAtPause >= 2 && pagesAtPause < 8, `the agent turned some pages before the pause: ${served.join(',')}`);

  // Paused means paused: no request reaches the provider and no page the site, for a while.
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal(generations(mock).length, atPause, 'no request after the pause');
  assert.equal(served.length, pagesAtPause, 'no page after the pause');
  assert.equal(await ui.button('Resume').isVisible(), false, 'the card offers Continue, not Resume');

  // Continue: another ceiling's worth, and more steps run.
  await ui.button('Continue').click();
  // The Steps meter carries the task's running total.
  await ui.waitStatus(/^Running: step \d+ of at most \d+ · [\d,]+ tokens$/, 10_000);
  await ui.waitStatus(/^Paused: The token limit was reached/, 30_000);
  const afterContinue = generations(mock).length;
  assert.ok(afterContinue > atPause, `more requests after Continue: ${afterContinue}`);
  assert.ok(served.length > pagesAtPause, `the agent went on reading: ${served.join(',')}`);
  assert.ok(afterContinue * PER_REQUEST - used >= LIMIT, 'Continue allowed another ceiling');
  assert.ok(afterContinue <= atPause + Math.ceil(LIMIT / PER_REQUEST), `and not more: ${afterContinue}`);
  await ui.button('Cancel').click();
  await ui.waitStatus(/^Cancelled/);
});
