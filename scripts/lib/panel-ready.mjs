// When the side panel is ready, as the benches measure it: its on-device status line is
// filled (it is only after the panel read its settings and heard from the worker).

/** Installs, before the panel's own scripts run, `window.__ready`: resolves with that time. */
export function watchPanelReady(page) {
  return page.addInitScript(() => {
    const filled = () => {
      const line = document.getElementById('nano-status');
      return line && !line.textContent.includes('checking');
    };
    window.__ready = new Promise((resolve) => {
      new MutationObserver((_, observer) => {
        if (filled()) { observer.disconnect(); resolve(performance.now()); }
      }).observe(document, { subtree: true, childList: true, characterData: true });
    });
  });
}
