// The node:test hooks test files share: one browser and one mock provider for the whole file,
// started before its tests and closed after them, and what each test starts from. (Kept apart
// from the other helpers, which scripts/bench-* import outside the test runner.)
import { after, before, beforeEach } from 'node:test';
import { doAndCheckPlanner, scriptedModel, startAgentEnv } from './agent-harness.mjs';
import { collectConsole, launchExtension } from './browser.mjs';
import { startMockProvider } from './mock-provider.mjs';
import { useProvider } from './panel.mjs';

/**
 * Registers the file's hooks. Before the tests: a mock provider started with `mock` (its
 * delay, key, Ollama origins), Chromium with the extension (`launch` goes to
 * launchExtension), with `consoles` the worker's console collected from launch on, the panel
 * (with `consoles` its console too), with `provider` Settings pointed at the mock
 * (`useProvider` with the mock's URL, model "gpt-test" and `provider`'s key, onDevice…), and
 * then `ready({ browser, mock, panel, workerConsole, panelConsole })` and `setUp(env)` (the
 * file's own set-up: a file-level `before` would not wait for this one, Node 20 runs them
 * side by side). After them: both closed. Before each test: the mock forgets its requests and
 * behaviours.
 */
export function panelSuite({ mock: mockOptions = {}, launch = {}, consoles = false, provider, ready, setUp = async () => {} }) {
  const env = {};
  before(async () => {
    env.mock = await startMockProvider(mockOptions);
    env.browser = await launchExtension(launch);
    if (consoles) env.workerConsole = collectConsole(env.browser.serviceWorker);
    env.panel = await env.browser.openPanel();
    if (consoles) env.panelConsole = collectConsole(env.panel);
    if (provider) await useProvider(env.panel, { baseUrl: `${env.mock.url}/v1`, model: 'gpt-test', ...provider });
    ready(env);
    await setUp(env);
  });
  after(async () => {
    await env.browser?.close();
    await env.mock?.close();
  });
  beforeEach(() => env.mock.reset());
}

/**
 * The hooks of an agent test file: one agent env (`startAgentEnv(envOptions)`) for the whole
 * file, handed to `ready(env)` once started and closed after the tests; before each test the
 * mock forgets its requests and answers with `llm`, `turns` is emptied, then `reset()` puts
 * the file's own state back.
 */
export function agentSuite({ llm, turns, ready, reset = () => {}, ...envOptions }) {
  let env;
  before(async () => {
    env = await startAgentEnv(envOptions);
    ready(env);
  });
  after(async () => {
    await env?.close();
  });
  beforeEach(() => {
    env.mock.reset();
    env.mock.setDefault(llm);
    turns.length = 0;
    reset();
  });
}

/**
 * An `agentSuite` whose tests each script the navigator (agent-clicks, -perception,
 * -widgets): the model answers as `scriptedModel` with `doAndCheckPlanner` and `navigator`,
 * and before each test the site's requests are emptied too. Returns `turns` (every turn the
 * model was given), `navigatorTurns()` and `paths(path)` (the site's requests for `path`).
 */
export function navigatorSuite({ routes, key, navigator, ready }) {
  const turns = [];
  let site;
  agentSuite({
    routes,
    key,
    turns,
    llm: scriptedModel({ planner: doAndCheckPlanner, navigator, turns }),
    ready: (env) => {
      site = env.site;
      ready(env);
    },
    reset: () => {
      site.requests.length = 0;
    },
  });
  return {
    turns,
    navigatorTurns: () => turns.filter((t) => t.startsWith('ROLE: NAVIGATOR')),
    paths: (path) => site.requests.filter((r) => r.path === path),
  };
}
