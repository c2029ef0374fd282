// The cost ceiling a person sets: "Stop a task or answer after N tokens" in Settings. A
// model that would go on for many steps (an archive with a "Next page" link on every page)
// is paused once the tokens its provider reported reach the ceiling: the provider receives
// no request after the pause and the site sees no further page. Continue allows another
// ceiling's worth, and the task goes on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { lastUserText, startAgentEnv } from './lib/agent-harness.mjs';
import { TANDEM_ID } from './lib/browser.mjs';
import { allowToolProvider, openSettings, saveSettings, sendMessage, waitIdle } from './lib/panel.mjs';
import { page } from './lib/shop-site.mjs';
import { elements, find } from './lib/scripted-shopper.mjs';
import { wordToolsWorker, writeWordTools } from './lib/word-tools.mjs';

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


let env, dir, provider;
before(async () => {
  // A tool provider for the chat answer.
  dir = await writeWordTools({
    description: 'Looks a word up in the dictionary.',
    parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
  });
  env = await startAgentEnv({ routes, key: KEY, extensionId: TANDEM_ID, others: [dir], onDevice: 'cloud' });
  provider = await wordToolsWorker(env.browser.context);
  await allowToolProvider(env.panel, 'lookup from Word Tools');
});
after(async () => {
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
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

test('a chat answer whose tool rounds reach the ceiling stops with a sentence, before another request', async () => {
  const { panel, mock } = env;
  mock.reset();
  // The ceiling of the previous test (9,000 tokens) is still set.
  const limit = await panel.evaluate(() => chrome.storage.local.get('settings').then((x) => x.settings.agent.tokenLimit));
  assert.equal(limit, LIMIT);
  const before = await provider.evaluate(() => self.calls);
  // Every answer calls the tool again and reports 3,100 tokens.
  mock.setDefault((rec) => ((rec.tools ?? []).length
    ? { toolCall: { name: rec.tools.find((t) => t.endsWith('__lookup')), arguments: { word: 'again' } }, usage: USAGE }
    : { reply: 'Done.', usage: USAGE }));
  await sendMessage(panel, 'Look up every word you can think of.');
  await waitIdle(panel);
  await new Promise((r) => setTimeout(r, 1000));
  const sent = generations(mock).length;
  // Three requests reach 9,300 tokens: the third's tool call is not run, no fourth is sent
  // (without the ceiling the 8-round limit would allow nine).
  assert.equal(sent, 3, `requests the server received: ${sent}`);
  assert.equal(await provider.evaluate(() => self.calls) - before, 2, 'the tool ran for the first two rounds only');
  await panel.getByRole('alert').filter({ hasText: /Stopped: the token limit was reached\. This answer used 9,300 tokens, and the limit set in Settings is 9,000 tokens\./ }).waitFor();
});

test('an answer with a tool round says the tokens of both requests ("via … · 6,200 tokens")', async () => {
  const { panel, mock } = env;
  mock.reset();
  // One tool round under the ceiling: the tool call's request and the answer's, 3,100 each.
  let round = 0;
  mock.setDefault((rec) => ((rec.tools ?? []).length && round++ === 0
    ? { toolCall: { name: rec.tools.find((t) => t.endsWith('__lookup')), arguments: { word: 'cat' } }, usage: USAGE }
    : { reply: 'A cat is a small animal.', usage: USAGE }));
  await sendMessage(panel, 'Look up cat.');
  await waitIdle(panel);
  assert.equal(generations(mock).length, 2);
  const note = panel.getByRole('article', { name: 'Tandem' }).last().locator('.note.provider');
  await note.filter({ hasText: 'tokens' }).waitFor();
  assert.equal(await note.textContent(), `via OpenAI-compatible · ${(2 * PER_REQUEST).toLocaleString('en-US')} tokens`);
});
