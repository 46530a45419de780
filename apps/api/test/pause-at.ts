/**
 * Runs `act`, pausing the first call of `service[method]` made meanwhile to run `during` (another
 * request, a publisher's change) before it goes on as it would have; returns what `act` returned.
 * A race made to happen at one chosen point of a request, rather than hoped for.
 */
export async function pausedAt<T>(
  service: object,
  method: string,
  during: () => Promise<void>,
  act: () => Promise<T>,
): Promise<T> {
  const target = service as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = target[method];
  const spy = jest.spyOn(target, method).mockImplementationOnce(async (...args) => {
    await during();
    return original.apply(service, args);
  });
  try {
    return await act();
  } finally {
    spy.mockRestore();
  }
}
