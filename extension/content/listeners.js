// Which elements a page made clickable from script. Many controls have no role, no href and
// no pointer cursor: a date picker's Prev anchor, a mail row's icon span, a custom dropdown's
// options work only through listeners added with addEventListener, which the isolated-world
// driver (content/driver.js) cannot see. This file runs in the page's MAIN world and marks each
// element that gets a pointer or key listener with the attribute `data-tandem-on`, which the
// driver reads. It patches what a page can see, so it runs only where the agent acts
// (crates/background/src/agent/recorder.rs): from document_start in every frame, before the
// page's own scripts, on the sites allowed always and the running task's hosts (Chrome's
// dynamic content scripts); injected late into a task's page that had none, where the
// listeners the page added before are missed. Never on a site the user did not allow with no
// task on it.
//
// Frameworks that delegate (React 17+ listens once at its root container, React 16 and Solid at
// the document, Svelte 5 at its mount target) add no listener to the control itself: they keep
// its handlers in properties of the element (`__reactProps$<key>.onClick`, `$$click`,
// `__click`), which only this world sees. When the driver is about to look at a document it
// dispatches the event `tandem-scan` on it, and this script marks each element holding such a
// handler the same way (`scan`), synchronously, before the driver's walk reads the marks.
//
// It only marks: it defines no global, hands the page no function or value it did not have,
// and calls the original methods with the page's own arguments and return values, so a page
// behaves as without it. The methods it keeps are taken before any page script runs, so a page
// that later replaces setAttribute cannot make it run page code. A page can set the attribute
// itself, which only gets an element listed, as a `role="button"` already does.
(() => {
  'use strict';

  const MARK = 'data-tandem-on';
  const TYPES = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'keydown', 'touchstart', 'drop']);
  // What reacts to the pointer passing over it only (a menu that opens, a card that turns):
  // marked `hover`, which a pointer or key listener added later overwrites with ''.
  const HOVER = new Set(['mouseenter', 'mouseover', 'pointerenter', 'pointerover']);
  const proto = EventTarget.prototype;
  const add = proto.addEventListener;
  const setAttribute = Element.prototype.setAttribute;
  const hasAttribute = Element.prototype.hasAttribute;
  const getAttribute = Element.prototype.getAttribute;
  const apply = Reflect.apply;
  const ElementClass = Element;
  const tagGetter = Object.getOwnPropertyDescriptor(Element.prototype, 'tagName').get;
  const removeAttribute = Element.prototype.removeAttribute;
  const keysOf = Object.keys;
  const ownDescriptor = Object.getOwnPropertyDescriptor;
  const startsWith = String.prototype.startsWith;
  const createTreeWalker = Document.prototype.createTreeWalker;
  const nextNode = TreeWalker.prototype.nextNode;
  const shadowRootGetter = Object.getOwnPropertyDescriptor(Element.prototype, 'shadowRoot').get;
  const ownerDocumentGetter = Object.getOwnPropertyDescriptor(Node.prototype, 'ownerDocument').get;
  const SHOW_ELEMENT = NodeFilter.SHOW_ELEMENT;
  // Elements marked for a listener added to them: a delegated handler's mark comes and goes
  // with the handler, theirs stays.
  const listened = new WeakSet();
  // Elements marked by `scan` alone, whose mark a later scan takes back once the handler is gone.
  const delegated = new WeakSet();

  // React 17+ marks its root container (`__reactContainer$<key>`) before it listens there for
  // every event of the app it renders: those listeners are delegation, like the document's.
  const isReactRoot = (el) => {
    const keys = apply(keysOf, null, [el]);
    for (let i = 0; i < keys.length; i++) if (apply(startsWith, keys[i], ['__reactContainer$'])) return true;
    return false;
  };

  const mark = (target, type) => {
    try {
      const hover = HOVER.has(String(type));
      if (!(target instanceof ElementClass) || (!hover && !TYPES.has(String(type)))) return;
      // The whole document listening (delegation at the root) says nothing about one control.
      const tag = apply(tagGetter, target, []);
      if (tag === 'HTML' || tag === 'BODY' || isReactRoot(target)) return;
      listened.add(target);
      delegated.delete(target);
      if (hover) {
        if (!apply(hasAttribute, target, [MARK])) apply(setAttribute, target, [MARK, 'hover']);
      } else if (apply(getAttribute, target, [MARK]) !== '') {
        apply(setAttribute, target, [MARK, '']);
      }
    } catch (_) { /* never let marking change what the page's call does */ }
  };

  // The handlers a delegating framework keeps on an element, by the property it keeps them in:
  // React's props object (`__reactProps$<key>`, `__reactEventHandlers$<key>` before React 17)
  // holds onClick…; Solid (`$$click`) and Svelte 5 (`__click`) keep one property per event.
  const REACT_PROPS = ['__reactProps$', '__reactEventHandlers$'];
  const REACT_HANDLERS = [
    'onClick', 'onClickCapture', 'onMouseDown', 'onMouseDownCapture', 'onMouseUp', 'onPointerDown',
    'onPointerDownCapture', 'onPointerUp', 'onKeyDown', 'onKeyDownCapture', 'onTouchStart',
    'onMouseEnter', 'onMouseOver', 'onPointerEnter', 'onDrop',
  ];
  const EVENT_PROPS = new Set();
  for (const type of TYPES) {
    EVENT_PROPS.add('$$' + type);
    EVENT_PROPS.add('__' + type);
  }
  // Only data properties are read, never a getter: reading must not run page code, and a
  // framework stores plain values.
  const value = (object, key) => {
    const d = apply(ownDescriptor, null, [object, key]);
    return d && 'value' in d ? d.value : undefined;
  };
  const hasDelegated = (el) => {
    const keys = apply(keysOf, null, [el]);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (EVENT_PROPS.has(key)) {
        if (typeof value(el, key) === 'function') return true;
        continue;
      }
      if (!apply(startsWith, key, [REACT_PROPS[0]]) && !apply(startsWith, key, [REACT_PROPS[1]])) continue;
      const props = value(el, key);
      if (!props || typeof props !== 'object') continue;
      for (let j = 0; j < REACT_HANDLERS.length; j++) {
        if (typeof value(props, REACT_HANDLERS[j]) === 'function') return true;
      }
    }
    return false;
  };
  // Marks what holds a delegated handler in `root` and the open shadow roots inside it, and
  // takes back the marks of handlers since removed. Most elements have no own property at
  // all, so this costs a walk and an empty key list per element.
  const scan = (root) => {
    const doc = apply(ownerDocumentGetter, root, []) || root;
    const walker = apply(createTreeWalker, doc, [root, SHOW_ELEMENT]);
    for (let el = apply(nextNode, walker, []); el; el = apply(nextNode, walker, [])) {
      const on = hasDelegated(el);
      if (on && !apply(hasAttribute, el, [MARK])) {
        apply(setAttribute, el, [MARK, '']);
        delegated.add(el);
      } else if (!on && delegated.has(el) && !listened.has(el)) {
        apply(removeAttribute, el, [MARK]);
        delegated.delete(el);
      }
      const shadow = apply(shadowRootGetter, el, []);
      if (shadow) scan(shadow);
    }
  };
  // A cancelable `tandem-scan` is the worker asking whether this document has the recorder
  // already (before injecting it late): cancelling it says yes, with no global to look for.
  const preventDefault = Event.prototype.preventDefault;
  apply(add, document, ['tandem-scan', (event) => {
    try {
      if (event.target !== document) return;
      if (event.cancelable) apply(preventDefault, event, []);
      scan(document);
    } catch (_) { /* an odd page leaves some controls unmarked, nothing more */ }
  }]);

  const patched = {
    addEventListener(type, listener, options) {
      mark(this, type);
      return apply(add, this, [type, listener, options]);
    },
  }.addEventListener;
  // The same property as before (writable, enumerable, configurable), another function.
  Object.defineProperty(proto, 'addEventListener', {
    ...Object.getOwnPropertyDescriptor(proto, 'addEventListener'),
    value: patched,
  });

  // `el.onclick = fn` registers a listener without addEventListener.
  for (const name of ['onclick', 'onmousedown', 'onpointerdown', 'onmouseover', 'onmouseenter']) {
    const desc = Object.getOwnPropertyDescriptor(HTMLElement.prototype, name);
    if (!desc || !desc.set) continue;
    const set = desc.set;
    Object.defineProperty(HTMLElement.prototype, name, {
      ...desc,
      set: {
        [name](value) {
          if (typeof value === 'function') mark(this, name.slice(2));
          return apply(set, this, [value]);
        },
      }[name],
    });
  }
})();
