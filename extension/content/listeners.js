// Which elements a page made clickable from script. Many controls have no role, no href and
// no pointer cursor: a date picker's Prev anchor, a mail row's icon span, a custom dropdown's
// options work only through listeners added with addEventListener, which the isolated-world
// driver (content/driver.js) cannot see. This file runs in the page's MAIN world at
// document_start in every frame (manifest.json `content_scripts`), before the page's own
// scripts, and marks each element that gets a pointer or key listener with the attribute
// `data-tandem-on`, which the driver reads.
//
// It only marks: it defines no global, hands the page no function or value it did not have,
// and calls the original methods with the page's own arguments and return values, so a page
// behaves as without it. The methods it keeps are taken before any page script runs, so a page
// that later replaces setAttribute cannot make it run page code. A page can set the attribute
// itself, which only gets an element listed, as a `role="button"` already does.
(() => {
  'use strict';

  const MARK = 'data-tandem-on';
  const TYPES = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'keydown', 'touchstart']);
  const proto = EventTarget.prototype;
  const add = proto.addEventListener;
  const setAttribute = Element.prototype.setAttribute;
  const hasAttribute = Element.prototype.hasAttribute;
  const apply = Reflect.apply;
  const ElementClass = Element;
  const tagGetter = Object.getOwnPropertyDescriptor(Element.prototype, 'tagName').get;

  const mark = (target, type) => {
    try {
      if (!(target instanceof ElementClass) || !TYPES.has(String(type))) return;
      // The whole document listening (delegation at the root) says nothing about one control.
      const tag = apply(tagGetter, target, []);
      if (tag === 'HTML' || tag === 'BODY') return;
      if (!apply(hasAttribute, target, [MARK])) apply(setAttribute, target, [MARK, '']);
    } catch (_) { /* never let marking change what the page's call does */ }
  };

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
  for (const name of ['onclick', 'onmousedown', 'onpointerdown']) {
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
