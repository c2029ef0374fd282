// The panel's views and modes, reached the way a person reaches them: Settings is a view of
// its own (the "Settings" button opens it, "Back to conversation" or a successful Save closes it),
// and the composer has two modes, the "Chat" and "Task" tabs. Each helper is idempotent, so a
// test can call it without knowing where the panel is.

/** The Settings view. */
export const settingsView = (panel) => panel.getByRole('region', { name: 'Settings' });

/** Opens Settings unless it is open (the first run opens it by itself). */
export async function openSettings(panel) {
  if (!(await settingsView(panel).isVisible())) await panel.getByRole('button', { name: 'Settings', exact: true }).click();
  await settingsView(panel).waitFor();
}

/** Leaves Settings with "Back to conversation" if it is open. Save closes the view by itself
 * once the settings are usable, so it may close between the look and the click: a click that
 * found no button counts only if the view is still there. */
export async function closeSettings(panel) {
  const view = settingsView(panel);
  if (await view.isVisible()) {
    await panel.getByRole('button', { name: 'Back to conversation' }).click({ timeout: 10_000 }).catch(async (e) => {
      if (await view.isVisible()) throw e;
    });
  }
  await view.waitFor({ state: 'hidden' });
}

/**
 * Clicks Save and waits for the "Saved…" toast. Usable settings close the view; with
 * `close`, the view is closed in any case (settings saved but not usable yet keep it open).
 */
export async function saveSettings(panel, { close = true } = {}) {
  await panel.getByRole('button', { name: 'Save', exact: true }).click();
  await panel.getByRole('status', { name: 'Settings status' }).filter({ hasText: 'Saved' }).waitFor();
  if (close) await closeSettings(panel);
}

/** Sets Settings' "Context window (tokens)" (`''` for the model's own), saves, and closes Settings. */
export async function setContextWindow(panel, tokens) {
  await openSettings(panel);
  await panel.getByLabel('Context window (tokens)').fill(String(tokens));
  await saveSettings(panel);
}

/** Switches the composer to Task mode (the Task box and "Start task"). */
export async function openTaskMode(panel) {
  await closeSettings(panel);
  const tab = panel.getByRole('tab', { name: 'Task', exact: true });
  if ((await tab.getAttribute('aria-selected')) !== 'true') await tab.click();
  await panel.getByRole('textbox', { name: 'Task' }).waitFor();
}

/** Switches the composer to Chat mode (the Message box). */
export async function openChatMode(panel) {
  await closeSettings(panel);
  const tab = panel.getByRole('tab', { name: 'Chat', exact: true });
  if ((await tab.getAttribute('aria-selected')) !== 'true') await tab.click();
  await panel.getByRole('textbox', { name: 'Message' }).waitFor();
}

/** Settings → Tools' list of tool providers and MCP servers (opens Settings first). */
export async function toolProviders(panel) {
  await openSettings(panel);
  return panel.getByRole('list', { name: 'Tool providers' });
}

/**
 * Answers the "Tool provider" question with Allow, as a person would, and waits until
 * Settings lists the provider's tool `policy` (the name of its policy box, `<tool> from
 * <provider>`). Settings is left open.
 */
export async function allowToolProvider(panel, policy) {
  const approval = panel.getByRole('group', { name: 'Tool provider' });
  await approval.waitFor();
  await approval.getByRole('button', { name: 'Allow' }).click();
  await (await toolProviders(panel)).getByRole('combobox', { name: policy }).waitFor();
}

/**
 * Points Settings at a provider as a person does: the provider (by its label), Base URL,
 * model, API key and, when given, the on-device mode; then Save (which closes Settings once
 * they are usable). `keepOpen`: Settings is open again afterwards.
 */
export async function useProvider(panel, { provider = 'OpenAI-compatible', baseUrl, model, key, onDevice, keepOpen = false }) {
  await openSettings(panel);
  if (onDevice) await panel.getByLabel('On-device model', { exact: true }).selectOption(onDevice);
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label: provider });
  await panel.getByLabel('Base URL').fill(baseUrl);
  await panel.getByLabel('Model', { exact: true }).fill(model);
  await panel.getByLabel('API key').fill(key);
  await saveSettings(panel, { close: !keepOpen });
  if (keepOpen) await openSettings(panel);
}

/** Sends `text` from the Message box, as Enter does (in Chat mode). */
export async function sendMessage(panel, text) {
  await openChatMode(panel);
  await panel.getByRole('textbox', { name: 'Message' }).fill(text);
  await panel.getByRole('textbox', { name: 'Message' }).press('Enter');
}

/** Waits until no answer is busy (streaming, waiting for a tool or for the user). */
export const waitIdle = (panel) => panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));

/**
 * Polls `fn(arg)` in `target` (a page or the worker) until it returns something truthy.
 * `page.waitForFunction` cannot take an async predicate: the Promise it returns is itself
 * truthy, so the wait ends at once without checking anything (measured in this Playwright).
 */
export async function waitUntil(target, fn, arg, { timeout = 10_000, interval = 100 } = {}) {
  const end = Date.now() + timeout;
  for (;;) {
    if (await target.evaluate(fn, arg)) return;
    if (Date.now() > end) throw new Error(`waitUntil: still false after ${timeout} ms: ${fn.toString().slice(0, 200)}`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** The newest answer, as the person sees it. */
export const lastAnswer = (panel) => panel.getByRole('article', { name: 'Tandem' }).last();

/**
 * Scripts the fake Prompt API in Tandem's `worker` (lib/fake-language-model.js) to reply as
 * Chrome's constrained decoding writes chat answers: `calls` maps the user's turn to a tool
 * call, a tool's result is answered with `answer`, anything else is echoed as an answer.
 */
export async function nanoReplies(worker, { calls = {}, answer }) {
  await worker.evaluate(({ calls, answer }) => {
    globalThis.__fakeLanguageModel.reply = (said) => {
      if (said.startsWith('Result of') || said.startsWith('The call of')) return JSON.stringify({ answer });
      if (calls[said]) return JSON.stringify(calls[said]);
      return JSON.stringify({ answer: `You said: ${said}` });
    };
  }, { calls, answer });
}
