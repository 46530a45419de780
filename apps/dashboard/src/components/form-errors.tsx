import type { FormSubmit } from '../use-form-submit';
import { ErrorNote } from './error-note';

/** A field's own message, from the API's 422. */
export function FieldError({ form, field }: { form: FormSubmit; field: string }) {
  const message = form.fields.byField[field];
  return message ? (
    <span class="field-error" data-field={field}>
      {message}
    </span>
  ) : null;
}

/** What belongs to no single field: body-wide 422 items, then any other failure. */
export function FormErrors({ form }: { form: FormSubmit }) {
  return (
    <>
      {form.fields.general.map((message) => (
        <p class="error" key={message}>
          {message}
        </p>
      ))}
      <ErrorNote error={form.error} />
    </>
  );
}
