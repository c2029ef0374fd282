// What the MCP test files do in the panel, written once: fill Settings' "New MCP server"
// form, add a server (and wait for its tools), ask which tools the model is offered, and have the model call one.
// Each takes the panel page (and the mock provider where the model is involved).
import assert from 'node:assert/strict';
import { openSettings, sendMessage, waitIdle } from './panel.mjs';

/** The status line of Settings' MCP form. */
export const mcpStatus = (panel) => panel.getByRole('status', { name: 'MCP server status' });

/** The "New MCP server" form, opened. */
export async function mcpForm(panel) {
  await openSettings(panel);
  const form = panel.getByRole('group', { name: 'New MCP server' });
  if (!(await form.isVisible())) await panel.getByRole('button', { name: 'Add MCP server' }).click();
  return form;
}

/** Fills the form with `name`, `url` and (unless `token` is null) the token field. */
export async function fillMcpServer(panel, { name, url, token = '' }) {
  const form = await mcpForm(panel);
  await form.getByLabel('Server name').fill(name);
  await form.getByLabel('Server URL').fill(url);
  if (token !== null) await form.getByLabel('Bearer token (optional)').fill(token);
  return form;
}

/** Adds the server and waits for the form to say so. */
export async function addMcpServer(panel, options) {
  const form = await fillMcpServer(panel, options);
  await form.getByRole('button', { name: 'Add server' }).click();
  await mcpStatus(panel).filter({ hasText: 'Added. Connected to' }).waitFor({ timeout: 15000 });
  return form;
}

/**
 * Adds the server (the options of `fillMcpServer`) and waits until Settings lists its `tool`
 * for a policy (`<tool> from <name>`). Settings stays open; resolves to its list of tool
 * providers.
 */
export async function addMcpServerWithTool(panel, options, tool) {
  const form = await fillMcpServer(panel, options);
  await form.getByRole('button', { name: 'Add server' }).click();
  const providers = panel.getByRole('list', { name: 'Tool providers' });
  await providers.getByRole('combobox', { name: new RegExp(`^${tool} from ${options.name}`) }).waitFor({ timeout: 15_000 });
  return providers;
}

/** The tool names the model is offered on the next chat turn. */
export async function offeredTools(panel, mock) {
  mock.setDefault({ reply: 'Fine.' });
  const request = mock.waitForRequest(() => true, 10000);
  await sendMessage(panel, 'What tools do you have?');
  const req = await request;
  await waitIdle(panel);
  mock.reset();
  return req.tools ?? [];
}

/**
 * Has the model call the tool offered as `…suffix` with `args`, then answer `reply`.
 * Resolves with the model-facing `name` and `next`, the request that carries the result.
 */
export async function callMcpTool(panel, mock, suffix, args, reply = 'Done.') {
  const name = (await offeredTools(panel, mock)).find((t) => t.endsWith(suffix));
  assert.ok(name, `the tool …${suffix} is offered`);
  mock.script({ toolCall: { name, arguments: args } });
  mock.setDefault({ reply });
  const next = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 20000);
  await sendMessage(panel, `Use ${suffix}.`);
  return { name, next };
}
