// The agent on Gemini Nano with the cloud as fallback (issue 4, proof 2): the task's ONE
// session starts on the device; Nano's session is destroyed after step 2, so step 3 and the
// rest are answered by the cloud mock, which gets the transcript of the earlier steps (the
// session is rebuilt, not restarted), and the panel's timeline shows the switch.
// The machines have no model: a faithful fake LanguageModel is loaded into a test-only copy
// of dist/ (lib/browser.mjs). Both the fake and the cloud mock answer like the scripted
// shopper of agent.test.mjs: they pick elements BY VISIBLE TEXT from the list in the prompt.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { scriptedModel, startAgentEnv } from './lib/agent-harness.mjs';
import { shopRoutes } from './lib/shop-site.mjs';
import { planner, shopper, shopperSource } from './lib/scripted-shopper.mjs';
import { openTaskMode } from './lib/panel.mjs';

let browser, mock, site, panel, tab, ui;
const cart = [];

const routes = shopRoutes({ cart });

const text = (c) => (typeof c === 'string' ? c : (c ?? []).map((p) => p.text ?? '').join(''));

// The cloud mock (OpenAI wire format).
const cloud = scriptedModel({ planner, navigator: shopper });

let env;
before(async () => {
  env = await startAgentEnv({ routes, key: 'sk-cloud-agent-123456', model: 'cloud-model', fakeLanguageModel: { availability: 'available', delayMs: 5 } });
  ({ browser, mock, site, panel, tab, ui } = env);
  mock.setDefault(cloud);
});
after(async () => { await env?.close(); });

test('Nano answers steps 1–2, is destroyed, and the cloud answers step 3 and the rest from the transcript', async () => {
  // The fake answers like the shopper; while answering step 2 it arms the failure, so the
  // next prompt (step 3) rejects with InvalidStateError (a destroyed session).
  await browser.serviceWorker.evaluate(`(() => {
    ${shopperSource}
    const cfg = globalThis.__fakeLanguageModel;
    cfg.answered = 0;
    cfg.reply = (turn) => {
      cfg.answered += 1;
      if (cfg.answered === 2) cfg.failNext = 'InvalidStateError';
      return JSON.stringify(turn.startsWith('ROLE: PLANNER') ? planner(turn) : shopper(turn));
    };
  })()`);

  cart.length = 0;
  await tab.goto(site.url + '/');
  await tab.bringToFront();
  await openTaskMode(panel);
  await panel.getByRole('textbox', { name: 'Task' }).fill('Add the blue backpack to the cart');
  await panel.getByRole('button', { name: 'Start task' }).click();
  await panel.getByRole('status', { name: 'Task status' }).filter({ hasText: /^(Done|Failed)/ }).waitFor({ timeout: 30_000 });
  assert.match(await panel.getByRole('status', { name: 'Task status' }).textContent(), /^Done/);
  assert.deepEqual(cart, ['blue-backpack'], 'exactly the right item was added');

  // The timeline: steps 1–2 on Gemini Nano, then the switch, then the cloud.
  const items = await panel.getByRole('list', { name: 'Steps' }).getByRole('listitem').allTextContents();
  const all = items.join('\n');
  assert.match(items[0], /^Plan:.*· Gemini Nano/, all);
  assert.match(items[1], /"type".*searchbox "Search".*✓ typed; a new page is loading · Gemini Nano/, all);
  assert.match(items[2], /^Switched from Gemini Nano to OpenAI-compatible: the Gemini Nano session was closed/, all);
  assert.ok(items.length > 4, all);
  for (const s of items.slice(3)) assert.match(s, /· OpenAI-compatible/, all);
  assert.ok(items.some((s) => /"click".*button "Add to cart".*✓ clicked; a new page is loading · OpenAI-compatible/.test(s)), all);

  const state = await panel.evaluate(() => chrome.storage.session.get('agentTask').then((x) => x.agentTask));
  assert.deepEqual(state.steps.map((s) => s.kind === 'switch' ? 'switch' : s.provider).slice(0, 4),
    ['Gemini Nano', 'Gemini Nano', 'switch', 'OpenAI-compatible']);

  // One Nano session; two answered prompts and the failed third.
  const calls = await browser.serviceWorker.evaluate(() => globalThis.__fakeLanguageModel.calls);
  assert.equal(calls.filter((c) => c.method === 'create').length, 1, 'one on-device session for the task');
  const prompts = calls.filter((c) => c.method.startsWith('prompt')).map((c) => (typeof c.input === 'string' ? c.input : JSON.stringify(c.input)));
  assert.equal(prompts.length, 3, 'two answered on the device, the third failed there');
  // Each prompt is constrained to its answer's JSON Schema, which the initial prompts already
  // describe (so it is not added to the input again).
  const constraints = calls.filter((c) => c.method.startsWith('prompt')).map((c) => c.options);
  assert.deepEqual(Object.keys(constraints[0].responseConstraint.properties).sort(), ['complete', 'plan'], 'the planner\'s shape');
  for (const o of constraints.slice(1)) {
    assert.ok(o.responseConstraint.properties.action.enum.includes('click'), 'the navigator\'s flat action');
    assert.deepEqual(o.responseConstraint.required, ['action']);
  }
  assert.ok(constraints.every((o) => o.omitResponseConstraintInput === true));
  assert.ok(calls.some((c) => c.method === 'destroy'), 'the Nano session was destroyed');

  // The cloud's first request carries the transcript in the cloud view: the system prompt,
  // steps 1–2 compacted (their page state is stale) with Nano's answers whole, then step 3
  // whole — the same step Nano failed, not a fresh start. Nano itself got every step whole.
  const first = mock.requests.find((r) => r.provider === 'openai');
  assert.ok(first, 'the cloud was asked');
  const msgs = first.body.messages.map((m) => ({ role: m.role, content: text(m.content) }));
  assert.equal(msgs[0].role, 'system');
  const rest = msgs.slice(1);
  assert.deepEqual(rest.map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'user'], JSON.stringify(rest.map((m) => m.role)));
  for (const [sent, whole, role, short] of [[rest[0].content, prompts[0], 'ROLE: PLANNER', 'PLANNER after 0 actions.\n'], [rest[2].content, prompts[1], 'ROLE: NAVIGATOR', 'Same page.']]) {
    assert.ok(whole.startsWith(role) && whole.includes('⟦untrusted data: element list⟧'), whole);
    assert.ok(sent.startsWith(short), sent);
    assert.ok(!sent.includes('element list⟧') && sent.length * 2 < whole.length, sent);
  }
  // https:// is left out of compact turns; the page is named once, by the planner's turn,
  // not again by the navigator's turn on the same page state.
  assert.ok(rest[0].content.includes(`\n${site.url.replace(/^https:\/\//, '')}/`), `the compact turn names the page: ${rest[0].content}`);
  assert.equal(rest[2].content, 'Same page.');
  // The planner's earlier answer goes without its plan: the newest turn carries the plan in force.
  const plan = JSON.parse(rest[1].content);
  assert.equal(plan.plan, '…', rest[1].content);
  assert.match(rest[4].content, /\nPlan: \S/, 'the newest turn has the plan');
  assert.equal(JSON.parse(rest[3].content).action, 'type');
  assert.equal(rest[4].content, prompts[2], 'the cloud re-runs the very step Nano failed');
  await browser.screenshot(panel, 'agent-nano-failover');
});

test('Nano answering without the JSON asked for, twice, hands the step to the cloud', async () => {
  // The fake plans, then answers the navigator in prose (a real model held to the
  // responseConstraint rarely does, but one cut off by its output limit does).
  await browser.serviceWorker.evaluate(`(() => {
    ${shopperSource}
    const cfg = globalThis.__fakeLanguageModel;
    cfg.calls.length = 0;
    cfg.reply = (turn) => turn.startsWith('ROLE: PLANNER') ? JSON.stringify(planner(turn)) : 'I would type into the search box.';
  })()`);
  mock.reset();
  mock.setDefault(cloud);
  cart.length = 0;
  // The first test's "Done" is still on screen: startTask waits for this task's own line.
  await ui.startTask(tab, 'Add the blue backpack to the cart', site.url + '/');
  await ui.waitStatus(/^Done/, 30_000);
  assert.deepEqual(cart, ['blue-backpack']);
  const items = await panel.getByRole('list', { name: 'Steps' }).getByRole('listitem').allTextContents();
  const all = items.join('\n');
  assert.match(items[0], /^Plan:.*· Gemini Nano/, all);
  assert.match(items[1], /^Switched from Gemini Nano to OpenAI-compatible: Gemini Nano twice answered without the JSON asked for/, all);
  assert.match(items[2], /"type".*searchbox "Search".*✓ typed; a new page is loading · OpenAI-compatible/, all);
  const calls = await browser.serviceWorker.evaluate(() => globalThis.__fakeLanguageModel.calls);
  assert.equal(calls.filter((c) => c.method.startsWith('prompt')).length, 3, 'the plan, then the navigator step tried twice on the device');
  // The cloud got the step Nano could not answer, after the plan Nano made.
  const first = mock.requests.find((r) => r.provider === 'openai');
  assert.match(text(first.body.messages.at(-1).content), /^ROLE: NAVIGATOR/);
  assert.match(text(first.body.messages.at(-2).content), /"plan"/);
});
