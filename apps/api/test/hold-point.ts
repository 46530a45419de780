/** A point a request reaches (`reached`) and is held at (what `reach` returns) until the test opens it. */
export function holdPoint() {
  let reach!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { reached, open, reach: () => (reach(), opened) };
}
