import { useState } from 'preact/hooks';
import { ApiError } from '@crawlgate/publisher';
import { fieldErrors, NO_FIELD_ERRORS, type FieldErrors } from './field-errors';

export interface FormSubmit {
  /** A 422's messages by field, to show next to each input. */
  fields: FieldErrors;
  /** Any other failure (401, 409, network). */
  error: unknown;
  busy: boolean;
  run(action: () => Promise<void>): Promise<void>;
  clear(): void;
}

/** One form's round trip to the API: clears the last errors, runs, and sorts the failure. */
export function useFormSubmit(): FormSubmit {
  const [fields, setFields] = useState<FieldErrors>(NO_FIELD_ERRORS);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<void>) => {
    setFields(NO_FIELD_ERRORS);
    setError(undefined);
    setBusy(true);
    try {
      await action();
    } catch (failure) {
      if (failure instanceof ApiError && failure.items) setFields(fieldErrors(failure.items));
      else setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const clear = () => {
    setFields(NO_FIELD_ERRORS);
    setError(undefined);
  };
  return { fields, error, busy, run, clear };
}
