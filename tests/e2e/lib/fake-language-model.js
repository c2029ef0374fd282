// A deterministic stand-in for Chrome's built-in Prompt API (`LanguageModel`),
// because the test machines have no on-device model (availability() says
// "unavailable" there). Plain script, no imports or exports, so it can be:
//   - evaluated as a string in a page or the service worker (browser.mjs does both), or
//   - imported for its side effect first thing in a test-only background.js, which is
//     the one way that survives service-worker restarts.
// Tests steer it live through `globalThis.__fakeLanguageModel` (see `cfg` below) and
// read what the extension asked in `__fakeLanguageModel.calls` (each call of a session
// names it: `session`, its 1-based number in creation order).
//
// Images: like Chrome, a session takes image parts only when it was created with
// `expectedInputs: [{type: 'image'}]` (else the prompt rejects with NotSupportedError), and
// only a device whose model takes images says anything but "unavailable" to
// availability()/create() asked for image input (`cfg.images`, off unless a test sets it).
// A prompt's parts stay in `calls` as given (image values are the Blobs the extension sent);
// `cfg.reply` gets them as its second argument and may answer with a promise.
//
// Shape follows the current spec (contextUsage / contextWindow / measureContextUsage /
// contextoverflow) and also the deprecated names extensions still get (inputUsage /
// inputQuota / measureInputUsage / quotaoverflow), since Tandem supports both.
(() => {
  const cfg = (globalThis.__fakeLanguageModel = Object.assign({
    availability: 'available', // 'available' | 'downloadable' | 'downloading' | 'unavailable'
    delayMs: 20,               // per streamed token
    contextWindow: 4096,       // tokens
    reply: null,               // string, or function(lastUserText) → string; null = "You said: …"
    failNext: null,            // DOMException name the next prompt rejects with, once
    images: false,             // whether this device's model takes images
    calls: [],
    sessions: [],              // every session created, in order (a test may destroy() one)
  }, globalThis.__fakeLanguageModel));
  let nextSession = 1;

  const tokens = (text) => Math.ceil(String(text).length / 4);
  const wait = (ms, signal) => new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); reject(signal.reason); }, { once: true });
  });

  // LanguageModelPrompt is a string or a list of {role, content}, where content is a
  // string or a list of {type: 'text', value}.
  const messages = (input) => (typeof input === 'string' ? [{ role: 'user', content: input }] : [...input]);
  const contentText = (c) => (typeof c === 'string' ? c : (c ?? []).filter((p) => (p.type ?? 'text') === 'text').map((p) => p.value ?? p.text ?? '').join(''));
  const parts = (input) => messages(input).flatMap((m) => (typeof m.content === 'string' ? [{ type: 'text', value: m.content }] : m.content ?? []));
  const kinds = (options) => (options?.expectedInputs ?? []).map((e) => e.type);
  const wantsImages = (options) => kinds(options).includes('image');
  const flatText = (input) => messages(input).map((m) => contentText(m.content)).join('\n');

  async function replyFor(input) {
    const last = messages(input).filter((m) => (m.role ?? 'user') === 'user').at(-1);
    const said = contentText(last?.content);
    if (typeof cfg.reply === 'function') return String(await cfg.reply(said, { parts: parts(input) }));
    return cfg.reply ?? `You said: ${said}`;
  }

  class LanguageModel extends EventTarget {
    #usage = 0;
    #initial = 0;
    #destroyed = false;
    #options;
    #id = nextSession++;
    oncontextoverflow = null;
    onquotaoverflow = null;

    constructor(options, initial) {
      super();
      this.#options = options;
      this.#initial = this.#usage = initial;
    }

    static async availability(options = {}) {
      cfg.calls.push({ method: 'availability', options });
      if (wantsImages(options) && !cfg.images) return 'unavailable';
      return cfg.availability;
    }

    static async params() {
      return { defaultTopK: 3, maxTopK: 128, defaultTemperature: 1, maxTemperature: 2 };
    }

    static async create(options = {}) {
      cfg.calls.push({ method: 'create', options: { ...options, monitor: !!options.monitor, signal: !!options.signal } });
      if (options.signal?.aborted) throw options.signal.reason;
      if (cfg.availability === 'unavailable') throw new DOMException('The device is not eligible for running on-device model.', 'NotSupportedError');
      if (wantsImages(options) && !cfg.images) throw new DOMException('The model does not support the requested input types.', 'NotSupportedError');
      if (cfg.availability !== 'available') {
        // A download: progress 0 → 1 through the monitor, then the model is there.
        const monitor = new EventTarget();
        options.monitor?.(monitor);
        for (const loaded of [0, 0.5, 1]) {
          await wait(cfg.delayMs, options.signal);
          const ev = new Event('downloadprogress');
          Object.assign(ev, { loaded, total: 1 });
          monitor.dispatchEvent(ev);
        }
        cfg.availability = 'available';
      }
      const session = new LanguageModel(options, tokens(flatText(options.initialPrompts ?? [])));
      cfg.sessions.push(session);
      return session;
    }

    get contextUsage() { return this.#usage; }
    get contextWindow() { return cfg.contextWindow; }
    get inputUsage() { return this.#usage; }
    get inputQuota() { return cfg.contextWindow; }
    async measureContextUsage(input) { return tokens(flatText(input)); }
    async measureInputUsage(input) { return tokens(flatText(input)); }

    // Room is made the way Chrome does it: old turns are dropped (back to the initial
    // prompts) and the overflow event fires; an input that can never fit is refused.
    // `options`: the prompt options the extension passed (a responseConstraint and whether
    // it is left out of the input), as the test may check them; the signal is left out.
    #take(input, method, { responseConstraint, omitResponseConstraintInput } = {}) {
      if (this.#destroyed) throw new DOMException('The model execution session has been destroyed.', 'InvalidStateError');
      cfg.calls.push({ method, session: this.#id, input, options: { responseConstraint, omitResponseConstraintInput } });
      for (const p of parts(input)) {
        const type = p.type ?? 'text';
        if (type !== 'text' && !kinds(this.#options).includes(type)) {
          throw new DOMException(`Input type "${type}" was not in expectedInputs when the session was created.`, 'NotSupportedError');
        }
        if (type === 'image' && !(p.value instanceof Blob || (typeof ImageBitmap !== 'undefined' && p.value instanceof ImageBitmap) || ArrayBuffer.isView(p.value) || p.value instanceof ArrayBuffer)) {
          throw new TypeError('An image part takes a Blob, an ImageBitmap, an image source or a buffer.');
        }
      }
      const need = tokens(flatText(input));
      if (this.#initial + need > cfg.contextWindow) {
        const e = new DOMException(`The input is too large: ${need} tokens, quota ${cfg.contextWindow}.`, 'QuotaExceededError');
        Object.assign(e, { requested: this.#initial + need, quota: cfg.contextWindow });
        throw e;
      }
      if (this.#usage + need > cfg.contextWindow) {
        this.#usage = this.#initial;
        for (const type of ['contextoverflow', 'quotaoverflow']) {
          const ev = new Event(type);
          this.dispatchEvent(ev);
          this[`on${type}`]?.(ev);
        }
      }
      this.#usage += need;
      if (cfg.failNext) {
        const name = cfg.failNext;
        cfg.failNext = null;
        throw new DOMException(`Fake ${name} requested by the test.`, name);
      }
    }

    async append(input) { this.#take(input, 'append'); }

    async prompt(input, options = {}) {
      const { signal } = options;
      this.#take(input, 'prompt', options);
      const text = await replyFor(input);
      await wait(cfg.delayMs, signal);
      this.#usage += tokens(text);
      return text;
    }

    promptStreaming(input, options = {}) {
      const { signal } = options;
      let pieces;
      return new ReadableStream({
        start: async () => {
          this.#take(input, 'promptStreaming', options);
          pieces = (await replyFor(input)).match(/\s*\S+/g) ?? [];
          this.#usage += pieces.length;
        },
        // Chrome streams deltas (not the growing text), one chunk per token.
        pull: async (controller) => {
          if (this.#destroyed) return controller.error(new DOMException('The model execution session has been destroyed.', 'AbortError'));
          if (!pieces.length) return controller.close();
          await wait(cfg.delayMs, signal);
          controller.enqueue(pieces.shift());
        },
      });
    }

    async clone() {
      const copy = new LanguageModel(this.#options, this.#initial);
      copy.#usage = this.#usage;
      cfg.sessions.push(copy);
      return copy;
    }

    destroy() { this.#destroyed = true; cfg.calls.push({ method: 'destroy', session: this.#id }); }
  }

  globalThis.LanguageModel = LanguageModel;
})();
