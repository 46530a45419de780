import { useLayoutEffect, useRef } from 'preact/hooks';

const FOCUSABLE = 'input, select, textarea, button:not([disabled]), a[href], [tabindex]:not([tabindex="-1"])';

/**
 * Keyboard basics for an inline dialog or panel that appears after a click: focus moves into it
 * (so keyboard and screen-reader users land on what just appeared), Escape cancels it when it can
 * be cancelled, and focus goes back to where it was once it closes. A layout effect, so focus
 * moves in the same frame the dialog appears and returns before the dialog's nodes are removed.
 */
export function useDialogFocus<T extends HTMLElement>(onEscape?: () => void) {
  const box = useRef<T>(null);
  const escape = useRef(onEscape);
  escape.current = onEscape;

  useLayoutEffect(() => {
    const element = box.current;
    if (!element) return;
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    // A dialog can name where focus lands (data-autofocus), say Cancel ahead of its options.
    (
      element.querySelector<HTMLElement>('[data-autofocus]') ??
      element.querySelector<HTMLElement>(FOCUSABLE) ??
      element
    ).focus();
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || !escape.current) return;
      event.preventDefault();
      escape.current();
    };
    element.addEventListener('keydown', onKey);
    return () => {
      element.removeEventListener('keydown', onKey);
      if (before?.isConnected && before !== document.body) before.focus();
    };
  }, []);

  return box;
}
