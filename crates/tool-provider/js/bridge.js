// The SDK's listeners, registered when this module is evaluated.
//
// Chrome delivers the event that wakes a stopped MV3 worker only to listeners added
// synchronously during the worker script's first evaluation, and the wasm is not loaded yet
// then. wasm-bindgen's glue imports this file statically, so it is evaluated as part of the
// worker's module graph, before the bootstrap calls init(): the listeners exist in time.
// Events are queued until the wasm attaches (ToolProvider::start), then handed over in
// arrival order.

const queue = [];
let sink = null;

function deliver(kind, message, senderId, respond) {
  if (sink) sink(kind, message, senderId, respond);
  else queue.push([kind, message, senderId, respond]);
}

const runtime = globalThis.chrome?.runtime;
// Absent outside an extension (a test page, say): then there is nothing to listen to.
if (runtime?.onMessageExternal) {
  runtime.onMessageExternal.addListener((message, sender, sendResponse) => {
    deliver('message', message, sender?.id ?? null, sendResponse);
    // Every message is answered, possibly later (a tool call is async, and the sender check
    // is made in Rust): keep the channel open.
    return true;
  });
  runtime.onInstalled?.addListener(() => deliver('installed', null, null, null));
  runtime.onStartup?.addListener(() => deliver('startup', null, null, null));
}

/** Called once by ToolProvider::start: replays what arrived before and forwards the rest. */
export function attach(handler) {
  sink = handler;
  for (const event of queue.splice(0)) handler(...event);
}
