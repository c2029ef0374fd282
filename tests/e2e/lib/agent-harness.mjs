// What every agent test does in the panel, found by role and name like a person would:
// point Settings at the mock provider, start a task on a tab and wait for its status.
import { launchExtension } from './browser.mjs';
import { startMockProvider } from './mock-provider.mjs';
import { routeSite } from './fixtures.mjs';
import { closeSettings, openSettings, openTaskMode, useProvider } from './panel.mjs';

/** The fixture shop's origin: https, and not a host the manifest lists. */
export const SHOP = 'https://shop.tandem.test';

/**
 * The agent tests' world: a mock provider (OpenAI wire format, instant), a fixture site
 * serving `routes` at `origin` (https, through the browser's routing: see lib/fixtures.mjs),
 * more sites from `more` (origin → routes), Chromium with the extension (`fakeLanguageModel`
 * as in launchExtension), the panel with Settings pointing at the mock, and a tab to act on.
 * `trust`: the sites start as the user's "Always allow on this site" ones, so tests about
 * something else are not stopped by Tandem's first-action question (agent-sites.test.mjs
 * tests that question with `trust: false`). `extensionId` and `others` go to launchExtension
 * (more extensions beside Tandem, a tool provider say); `onDevice` to useMockProvider.
 * `mockOptions` go to startMockProvider (Ollama's allowed origins, say). `close()` ends it all.
 */
export async function startAgentEnv({ routes, key, model, fakeLanguageModel, origin = SHOP, more = {}, trust = true, extensionId, others, onDevice, mockOptions = {}, granted }) {
  const env = { close: async () => {
    await env.browser?.close();
    await env.mock?.close();
  } };
  try {
    env.mock = await startMockProvider({ delayMs: 0, ...mockOptions });
    env.browser = await launchExtension({ fakeLanguageModel, extensionId, others, granted });
    env.site = await routeSite(env.browser.context, { origin, routes });
    env.sites = { [origin]: env.site };
    for (const [o, r] of Object.entries(more)) env.sites[o] = await routeSite(env.browser.context, { origin: o, routes: r });
    env.panel = await env.browser.openPanel();
    env.ui = taskUi(env.panel);
    if (trust) await alwaysAllow(env.panel, Object.values(env.sites).map((s) => s.host));
    await useMockProvider(env.panel, env.mock, { key, model, onDevice });
    env.tab = await env.browser.context.newPage();
  } catch (e) {
    await env.close();
    throw e;
  }
  return env;
}

/**
 * The state "Always allow on this site" leaves for `hosts` (what Settings lists). Returns once
 * the worker has registered the listener recorder for them, as it does on the change: a page
 * loaded next is then recorded from its start, like a page the person opens later.
 */
export async function alwaysAllow(panel, hosts) {
  await panel.evaluate((always) => chrome.storage.local.set({ siteGrants: { always } }), [...hosts].sort());
  await recorderRegistered(panel, hosts);
}

/** Waits until Chrome has the listener recorder registered for each of `hosts` (at most 5 s). */
export async function recorderRegistered(panel, hosts) {
  const wanted = hosts.map((h) => `*://${h}/*`);
  for (const t0 = Date.now(); ;) {
    const matches = await panel.evaluate(() => chrome.scripting.getRegisteredContentScripts({ ids: ['tandem-listeners'] })
      .then((s) => s[0]?.matches ?? []));
    if (wanted.every((m) => matches.includes(m))) return;
    if (Date.now() - t0 > 5000) throw new Error(`the listener recorder is registered for ${matches.join(', ') || 'nothing'}, not ${wanted.join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The text of the last user message of a request body: OpenAI `messages` or Gemini `contents`. */
export function lastUserText(body) {
  const turns = body?.messages ?? body?.contents ?? [];
  const last = [...turns].reverse().find((m) => m.role === 'user');
  const content = last?.content ?? last?.parts ?? '';
  return typeof content === 'string' ? content : content.map((p) => p.text ?? '').join('');
}

/**
 * A mock-provider behaviour that answers like the agent's model: `planner(turn)` for planner
 * turns and `navigator(turn)` (which may be async) for the others, as JSON. Every turn is
 * pushed to `turns` when given.
 */
export function scriptedModel({ planner, navigator, turns }) {
  return async (rec) => {
    const turn = lastUserText(rec.body);
    turns?.push(turn);
    const answer = turn.startsWith('ROLE: PLANNER') ? planner(turn) : await navigator(turn);
    return { reply: JSON.stringify(answer) };
  };
}

/** A planner that plans two steps and is complete once the navigator says it is done. */
export const doAndCheckPlanner = (turn) => ({ plan: '1. do it 2. check', complete: /navigator says the task is done/.test(turn) });

/**
 * `llm` with its answer to the second navigator turn held back 3 s, and `reached`, which
 * resolves when that turn arrives: the moment a test stops the worker in the middle of a task.
 */
export function holdSecondNavigatorTurn(llm) {
  let arrived;
  const reached = new Promise((r) => { arrived = r; });
  let navigatorTurns = 0;
  const held = async (rec) => {
    const out = await llm(rec);
    if (!lastUserText(rec.body).startsWith('ROLE: PLANNER') && ++navigatorTurns === 2) {
      arrived();
      return { ...out, latencyMs: 3000 };
    }
    return out;
  };
  return { held, reached };
}

/**
 * Saves an OpenAI-compatible provider at the mock in Settings, then closes Settings.
 * `onDevice`: the "On-device model" option to choose ('auto', 'nano' or 'cloud'), if any.
 */
export async function useMockProvider(panel, mock, { key, model = 'gpt-test', onDevice }) {
  await useProvider(panel, { baseUrl: `${mock.url}/v1`, model, key, onDevice });
}

export { openSettings, closeSettings };

/** The panel's task mode. */
export function taskUi(panel) {
  const ui = {
    task: () => panel.getByRole('textbox', { name: 'Task' }),
    start: () => panel.getByRole('button', { name: 'Start task' }),
    status: () => panel.getByRole('status', { name: 'Task status' }),
    notice: () => panel.getByRole('status', { name: 'Task notice' }),
    list: () => panel.getByRole('list', { name: 'Steps' }),
    button: (name) => panel.getByRole('button', { name, exact: true }),
    approval: () => panel.getByRole('group', { name: 'Approval needed' }),
    siteAccess: () => panel.getByRole('group', { name: 'Site access' }),
    question: () => panel.getByRole('group', { name: 'Question from Tandem' }),
    /** The timeline's lines. */
    steps: () => ui.list().getByRole('listitem').allTextContents(),
    /** The task as the coordinator stored it. */
    stored: () => panel.evaluate(() => chrome.storage.session.get('agentTask').then((x) => x.agentTask)),
    /** Waits for a status line matching `re`; a timeout says where the task was instead. */
    async waitStatus(re, timeout = 20_000) {
      try {
        await ui.status().filter({ hasText: re }).waitFor({ timeout });
      } catch (e) {
        const status = await ui.status().textContent().catch(() => '?');
        const steps = await ui.steps().catch(() => []);
        const errors = (await ui.stored().catch(() => null))?.errors ?? [];
        throw new Error(`${e.message}\nTask status: ${status}\nSteps:\n${steps.join('\n')}\nErrors: ${errors.join(' | ')}`, { cause: e });
      }
    },
    /** Opens `url` in `tab` (unless null: the page as it is), brings it to the front and starts `task` there. */
    async startTask(tab, task, url) {
      if (url) await tab.goto(url);
      await tab.bringToFront();
      await openTaskMode(panel);
      await ui.task().fill(task);
      // The previous task's final status is still on screen: wait for the new task to be
      // saved (and its broadcast to reach the panel), or waitStatus(/^Done/) would match
      // the old one.
      const previous = (await ui.stored())?.id;
      await ui.start().click();
      for (const t0 = Date.now(); (await ui.stored())?.id === previous && Date.now() - t0 < 5000;) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const id = (await ui.stored())?.id;
      await panel.locator(`#task-status[data-task="${id}"]`).waitFor();
    },
  };
  return ui;
}
