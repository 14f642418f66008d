// A few lines of DOM building, so the page needs no framework.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// Replace an element's children, keeping keyboard focus on the element with the same data-key.
export function fill(parent, ...children) {
  const active = document.activeElement;
  const key = active && parent.contains(active) ? active.dataset.key : undefined;
  parent.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  if (key !== undefined) {
    const again = parent.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (again && !again.disabled) again.focus({ preventScroll: true });
  }
}

export function $(id) {
  return document.getElementById(id);
}

// Keep a list of children in step with `items` ([{ key, create(), update(el) }]), reusing each
// element by its key: a press or a click that spans a redraw still lands on the same element, and
// the keyboard focus stays where it was.
export function reconcile(parent, items) {
  const wanted = new Set(items.map((item) => item.key));
  const existing = new Map();
  for (const el of [...parent.children]) {
    if (wanted.has(el.dataset.key)) existing.set(el.dataset.key, el);
    else el.remove();
  }
  items.forEach((item, index) => {
    let el = existing.get(item.key);
    if (!el) {
      el = item.create();
      el.dataset.key = item.key;
    }
    item.update(el);
    const at = parent.children[index];
    if (at !== el) parent.insertBefore(el, at || null);
  });
}
