import { ApiError } from '@crawlgate/publisher';

/** One line for any failure: the API's `detail`, or what went wrong on the way there. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.status === 0 ? `The API did not answer: ${error.message}` : error.message;
  return error instanceof Error ? error.message : String(error);
}

export function ErrorNote({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p class="error" role="alert">
      {errorMessage(error)}
    </p>
  );
}
