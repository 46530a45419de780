import { ArgumentMetadata, Injectable, ValidationPipe, type ValidationPipeOptions } from '@nestjs/common';
import { kindOf, toValidationItems, ValidationFailed } from './validation-items';

const OPTIONS: ValidationPipeOptions = {
  transform: true,
  whitelist: true,
  validationError: { target: false, value: true },
  exceptionFactory: (errors) => new ValidationFailed(toValidationItems(errors)),
};

/** The body DTOs marked with RejectsUnknownFields. */
const STRICT_BODIES = new WeakSet<object>();

/**
 * On a body DTO that replaces a publisher's settings: a field it does not declare (at any depth of
 * its nested DTOs) is a 422 `extra_forbidden`, not dropped. A misspelt field dropped there wiped
 * what it meant ("rule" for "rules": every rule gone). The middleware's calls stay lenient, so that
 * a newer middleware's extra fields work with an older API.
 */
export const RejectsUnknownFields = (): ClassDecorator => (target) => {
  STRICT_BODIES.add(target);
};

/**
 * Names every object inherits ("constructor", "hasOwnProperty", "__defineGetter__"…). class-validator's
 * whitelist looks a body's field names up in a plain object, where these are found: a strict body
 * took them as declared, and inside the bot policy's maps such a key was dropped, the policy then
 * replaced by an empty one.
 */
const INHERITED_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype));

/** Where `value` (a parsed JSON body, its depth bounded before it gets here) has a key INHERITED_NAMES holds. */
function inheritedNameAt(value: unknown, loc: (string | number)[] = ['body']): (string | number)[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, child] of Object.entries(value)) {
    const here = [...loc, Array.isArray(value) ? Number(key) : key];
    if (!Array.isArray(value) && INHERITED_NAMES.has(key)) return here;
    const found = inheritedNameAt(child, here);
    if (found) return found;
  }
  return undefined;
}

/** Validates DTO bodies and answers failures as 422 with the spec's `detail[]` items. */
@Injectable()
export class BodyValidationPipe extends ValidationPipe {
  private readonly strict = new ValidationPipe({ ...OPTIONS, forbidNonWhitelisted: true });

  constructor() {
    super(OPTIONS);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const isDto = metadata.type === 'body' && typeof metadata.metatype === 'function' && metadata.metatype !== Object;
    const strict = isDto && STRICT_BODIES.has(metadata.metatype!);
    const validate = (body: unknown) =>
      strict ? this.strict.transform(body, metadata) : super.transform(body, metadata);
    const notAnObject = () =>
      new ValidationFailed([
        // Its kind, not the body itself: it may hold a password.
        { loc: ['body'], msg: 'Request body must be a JSON object', type: 'dict_type', input: kindOf(value) },
      ]);
    // No body at all is `{}` to a DTO whose fields may all be left out, and not an object to any other.
    if (isDto && value === undefined) {
      try {
        return await validate({});
      } catch {
        throw notAnObject();
      }
    }
    if (isDto && (typeof value !== 'object' || value === null || Array.isArray(value))) throw notAnObject();
    const inherited = strict ? inheritedNameAt(value) : undefined;
    if (inherited)
      throw new ValidationFailed([
        {
          loc: inherited,
          msg: `property ${inherited[inherited.length - 1]} should not exist`,
          type: 'extra_forbidden',
        },
      ]);
    return validate(value);
  }
}
