type Listener<T> = (value: T, previous: T) => void;

export interface Store<T> {
  get(): T;
  set(next: T | ((prev: T) => T)): void;
  subscribe(listener: Listener<T>): () => void;
}

/** A minimal observable store with shallow equality to skip redundant notifications. */
export function createStore<T extends object>(initial: T): Store<T> {
  let value = initial;
  const listeners = new Set<Listener<T>>();

  const shallowEqual = (a: T, b: T): boolean => {
    const ka = Object.keys(a) as (keyof T)[];
    const kb = Object.keys(b) as (keyof T)[];
    return ka.length === kb.length && ka.every((k) => Object.is(a[k], b[k]));
  };

  return {
    get: () => value,
    set(next) {
      const resolved = typeof next === 'function' ? (next as (prev: T) => T)(value) : next;
      if (shallowEqual(resolved, value)) return;
      const previous = value;
      value = resolved;
      for (const listener of [...listeners]) {
        try {
          listener(value, previous);
        } catch (error) {
          console.error('store listener failed', error);
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

// --- usage -----------------------------------------------------------------

interface CartItem {
  id: string;
  title: string;
  unitPriceCents: number;
  quantity: number;
}

interface CartState {
  items: CartItem[];
  couponCode?: string;
  updatedAt: number;
}

export const cart = createStore<CartState>({ items: [], updatedAt: Date.now() });

export function addToCart(item: Omit<CartItem, 'quantity'>, quantity = 1): void {
  cart.set((prev) => {
    const existing = prev.items.find((i) => i.id === item.id);
    const items = existing
      ? prev.items.map((i) => (i.id === item.id ? { ...i, quantity: i.quantity + quantity } : i))
      : [...prev.items, { ...item, quantity }];
    return { ...prev, items, updatedAt: Date.now() };
  });
}

export function totalCents({ items, couponCode }: CartState): number {
  const subtotal = items.reduce((sum, i) => sum + i.unitPriceCents * i.quantity, 0);
  const discount = couponCode === 'SPRING10' ? Math.round(subtotal * 0.1) : 0;
  return Math.max(0, subtotal - discount);
}

const unsubscribe = cart.subscribe((state, prev) => {
  if (state.items.length !== prev.items.length) {
    document.title = `Cart (${state.items.length}) — ${(totalCents(state) / 100).toFixed(2)} €`;
  }
});

window.addEventListener('beforeunload', unsubscribe);
