// The agent's saved task state: damaged or old-format state is reset with a notice the user
// can read, never a crash, and the agent stays usable.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { closeSettings, openTaskMode, settingsView } from './lib/panel.mjs';

let browser, panel;
before(async () => {
  browser = await launchExtension();
  panel = await browser.openPanel();
});
after(async () => { await browser?.close(); });

const stored = () => panel.evaluate(() => chrome.storage.session.get('agentTask').then((x) => x.agentTask));

for (const [what, value, notice] of [
  ['damaged', { version: 2, status: 42, steps: 'not a list' }, /could not be read .* discarded/],
  ['old-format', { version: 999, task: 'from the future' }, /another version of Tandem .* discarded/],
]) {
  test(`${what} saved task state is reset with a notice`, async () => {
    await panel.evaluate((v) => chrome.storage.session.set({ agentTask: v }), value);
    // A fresh worker reads the state first thing, as after a browser restart.
    await browser.stopServiceWorker();
    await panel.reload();
    // No provider yet, so the panel opens on Settings (once it has read them: wait for it,
    // or Back is looked for before the view opens); the notice waits in the conversation view.
    await settingsView(panel).waitFor();
    await closeSettings(panel);
    await panel.getByRole('status', { name: 'Task notice' }).filter({ hasText: notice }).waitFor();
    assert.equal(await stored(), undefined, 'the unreadable state is gone');
    await openTaskMode(panel);
    assert.equal(await panel.getByRole('button', { name: 'Start task' }).isEnabled(), true);
    assert.equal(await panel.getByRole('alert').isVisible(), false, 'no error, the panel works');
  });
}
