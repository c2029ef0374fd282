// Questions that cannot be missed: a tool provider asking for approval, a tool call on Ask and
// a task's question each show where the person looks (inside the viewport even when the
// conversation was scrolled away, or named on the line pinned under the header when Settings
// is open), sit in a live region (announced), are reached by keyboard, and the toolbar badge
// says that something waits (read with chrome.action.getBadgeText from the panel page, as
// Chrome shows it). A provider extension written here registers only when the test says.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startAgentEnv, scriptedModel } from './lib/agent-harness.mjs';
import { planner } from './lib/scripted-shopper.mjs';
import { lastAnswer, openSettings, sendMessage, waitIdle } from './lib/panel.mjs';

const TANDEM_ID = 'bkkhgefimkkanagkjaoehnjcmpolnojf';
const ORIGIN = 'https://ask.tandem.test';

const PROBE = `
const TANDEM = ${JSON.stringify(TANDEM_ID)};
self.live = false;
const tools = [
  { name: 'probe_note', label: 'Write a note', description: 'Writes a note.', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
];
self.register = () => chrome.runtime.sendMessage(TANDEM, { type: 'REGISTER_TOOLS', name: 'Probe Tools', tools }).catch(() => {});
chrome.runtime.onMessageExternal.addListener((msg, sender, sendResponse) => {
  if (sender.id !== TANDEM) return false;
  if (msg.type === 'ORCHESTRATOR_READY' && self.live) { self.register(); return false; }
  if (msg.type === 'TOOL_EXECUTE') { sendResponse({ content: [{ type: 'text', text: 'Noted.' }] }); return false; }
  return false;
});
`;

let env, panel, dir, probe;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tandem-probe-'));
  await writeFile(path.join(dir, 'manifest.json'), JSON.stringify({
    manifest_version: 3, name: 'Probe Tools', version: '1.0', background: { service_worker: 'probe.js' },
  }));
  await writeFile(path.join(dir, 'probe.js'), PROBE);
  env = await startAgentEnv({
    origin: ORIGIN,
    routes: { '/': '<!doctype html><title>Ask</title><h1>Ask me</h1>' },
    key: 'sk-test-questions-12345678',
    extensionId: TANDEM_ID,
    others: [dir],
  });
  panel = env.panel;
  const isProbe = (w) => w.url().endsWith('/probe.js');
  probe = env.browser.context.serviceWorkers().find(isProbe)
    ?? await env.browser.context.waitForEvent('serviceworker', { predicate: isProbe });
  await panel.bringToFront();
});
after(async () => {
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});
beforeEach(() => env.mock.reset());

const badge = () => panel.evaluate(() => chrome.action.getBadgeText({}));
const badgeTitle = () => panel.evaluate(() => chrome.action.getTitle({}));
async function untilBadge(text, ms = 5000) {
  const end = Date.now() + ms;
  let now;
  while ((now = await badge()) !== text) {
    if (Date.now() > end) assert.fail(`the badge says ${JSON.stringify(now)}, not ${JSON.stringify(text)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether `locator`'s box lies inside the panel's viewport. */
async function inViewport(locator) {
  const box = await locator.boundingBox();
  const { height, width } = panel.viewportSize();
  return !!box && box.y >= 0 && box.y + box.height <= height && box.x >= 0 && box.x + box.width <= width;
}

/** The live region `locator` is announced through: its aria-live value (or the log role's). */
const liveRegion = (locator) => locator.evaluate((el) => {
  const region = el.closest('[aria-live], [role="log"], [role="status"], [role="alert"]');
  if (!region) return null;
  return region.getAttribute('aria-live') ?? { log: 'polite', status: 'polite', alert: 'assertive' }[region.getAttribute('role')];
});

/**
 * A long conversation: two long exchanges, the reader at the newest answer (the top of the
 * conversation is out of sight), or with `back`, scrolled back to its start as a reader does
 * (the newest answer out of sight).
 */
async function scrolledConversation({ back = false } = {}) {
  env.mock.setDefault({ reply: Array.from({ length: 60 }, (_, i) => `Line ${i + 1} of a long answer.`).join('\n\n') });
  for (const q of ['Tell me a long story.', 'And another one.']) {
    await sendMessage(panel, q);
    await waitIdle(panel);
  }
  if (!back) {
    await panel.waitForFunction(() => document.querySelector('main').scrollTop > 1000);
    return;
  }
  await panel.locator('main').hover();
  await panel.mouse.wheel(0, -100_000);
  await panel.waitForFunction(() => document.querySelector('main').scrollTop === 0);
  assert.equal(await inViewport(lastAnswer(panel)), false, 'the newest answer is out of sight');
}

test('a provider asking while the conversation is scrolled away is in sight, announced, reached by Tab, and on the badge', async () => {
  await scrolledConversation();
  assert.equal(await badge(), '', 'nothing waits yet');
  await probe.evaluate(() => { self.live = true; return self.register(); });
  const approval = panel.getByRole('group', { name: 'Tool provider' });
  await approval.waitFor();
  assert.ok(await inViewport(approval), 'the question is inside the viewport');
  assert.equal(await liveRegion(approval), 'polite');
  await untilBadge('1');
  assert.match(await badgeTitle(), /Probe Tools asks to give Tandem tools/);

  // Right after the header's controls in the Tab order: the next Tab from "Settings".
  await panel.getByRole('button', { name: 'Settings', exact: true }).focus();
  const allow = approval.getByRole('button', { name: 'Allow' });
  let reached = false;
  for (let i = 0; i < 2 && !reached; i += 1) {
    await panel.keyboard.press('Tab');
    reached = await allow.evaluate((el) => el === document.activeElement);
  }
  assert.ok(reached, 'Allow is reached by keyboard');
  await panel.keyboard.press('Enter');
  await approval.waitFor({ state: 'hidden' });
  await untilBadge('');
});

test('a tool call on Ask, asked while the reader scrolled up, is brought into sight in the live log; the badge says so until answered', async () => {
  // The provider was allowed above; its tool is on Ask (not read-only).
  env.mock.setDefault({ reply: 'ok' });
  const offered = env.mock.waitForRequest((r) => (r.tools ?? []).length > 0);
  await sendMessage(panel, 'Which tools?');
  const name = (await offered).tools.find((t) => t.endsWith('probe_note'));
  assert.ok(name);
  await waitIdle(panel);
  await scrolledConversation({ back: true });

  env.mock.reset();
  env.mock.script({ toolCall: { name, arguments: { text: 'milk' } }, latencyMs: 600 });
  env.mock.setDefault({ reply: 'Noted it.' });
  await panel.getByRole('textbox', { name: 'Message' }).fill('Note milk.');
  await panel.getByRole('textbox', { name: 'Message' }).press('Enter');
  // The reader scrolls up again while the answer comes.
  await panel.locator('main').hover();
  await panel.mouse.wheel(0, -100_000);
  const question = lastAnswer(panel).getByRole('group', { name: 'Run Write a note?' });
  await question.waitFor();
  await panel.waitForFunction(() => {
    const q = [...document.querySelectorAll('.tool-ask')].pop();
    const r = q?.getBoundingClientRect();
    return r && r.top >= 0 && r.bottom <= innerHeight;
  });
  assert.ok(await inViewport(question), 'the question is inside the viewport');
  assert.equal(await liveRegion(question), 'polite');
  await untilBadge('1');
  assert.match(await badgeTitle(), /asks before running a tool/);
  // The card reads as arguments, not JSON (which is one click further).
  const card = lastAnswer(panel).getByRole('group', { name: 'Tool call Write a note' });
  assert.equal(await card.getByLabel('Arguments').innerText(), 'text: milk');
  assert.ok(!(await card.innerText()).includes('{"text"'), await card.innerText());
  await question.getByRole('button', { name: 'Approve' }).click();
  await waitIdle(panel);
  await untilBadge('');
});

test('a task\'s question while Settings is open: the pinned line names it, "Show the question" leads to it, the badge says so', async () => {
  env.mock.setDefault(scriptedModel({
    planner,
    navigator: (turn) => (/the user answered: (\w+)/.test(turn)
      ? { action: 'done', success: true, answer: 'Thanks.' }
      : { action: 'ask_user', question: 'Which size do you wear?' }),
  }));
  await env.ui.startTask(env.tab, 'Buy me a shirt', `${ORIGIN}/`);
  await panel.bringToFront();
  await openSettings(panel);
  const line = panel.getByRole('region', { name: 'Waiting for you' });
  await line.getByText('Tandem asked you a question about the task.').waitFor({ timeout: 20_000 });
  assert.ok(await inViewport(line.getByText('Tandem asked you a question about the task.')));
  assert.equal(await liveRegion(line.getByText('Tandem asked you a question about the task.')), 'polite');
  await untilBadge('1');
  assert.match(await badgeTitle(), /question about the task/);

  await line.getByRole('button', { name: 'Show the question' }).click();
  await panel.getByRole('region', { name: 'Settings' }).waitFor({ state: 'hidden' });
  const answer = panel.getByRole('textbox', { name: 'Answer', exact: true });
  assert.ok(await answer.evaluate((el) => el === document.activeElement), 'the Answer box has the focus');
  assert.ok(await inViewport(env.ui.question()));
  assert.equal(await liveRegion(env.ui.question()), 'polite');
  await line.getByText('Tandem asked you a question about the task.').waitFor({ state: 'hidden' });
  await answer.fill('M');
  await env.ui.button('Send answer').click();
  await env.ui.waitStatus(/^Done/);
  await untilBadge('');
});
