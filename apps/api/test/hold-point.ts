import type { Tap } from './proxied-test-app';

/** A point a request reaches (`reached`) and is held at (what `reach` returns) until the test opens it. */
export function holdPoint() {
  let reach!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { reached, open, reach: () => (reach(), opened) };
}

/**
 * A holdPoint at the first chunk `matches` finds through `tap` (a ProxiedTestApp's onRpc or
 * onStatement); every other chunk passes.
 */
export function holdFirst(tap: (tap: Tap | undefined) => void, matches: (text: string) => boolean) {
  const held = holdPoint();
  let holding = true;
  tap((text) => {
    if (!holding || !matches(text)) return;
    holding = false;
    return held.reach();
  });
  return held;
}
