import { ArgumentMetadata, Injectable, ValidationPipe } from '@nestjs/common';
import { toValidationItems, ValidationFailed } from './validation-items';

/** Validates DTO bodies and answers failures as 422 with the spec's `detail[]` items. */
@Injectable()
export class BodyValidationPipe extends ValidationPipe {
  constructor() {
    super({
      transform: true,
      whitelist: true,
      validationError: { target: false, value: true },
      exceptionFactory: (errors) => new ValidationFailed(toValidationItems(errors)),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const isDto = metadata.type === 'body' && typeof metadata.metatype === 'function' && metadata.metatype !== Object;
    const notAnObject = () =>
      new ValidationFailed([
        { loc: ['body'], msg: 'Request body must be a JSON object', type: 'dict_type', input: value ?? null },
      ]);
    // No body at all is `{}` to a DTO whose fields may all be left out, and not an object to any other.
    if (isDto && value === undefined) {
      try {
        return await super.transform({}, metadata);
      } catch {
        throw notAnObject();
      }
    }
    if (isDto && (typeof value !== 'object' || value === null || Array.isArray(value))) throw notAnObject();
    return super.transform(value, metadata);
  }
}
