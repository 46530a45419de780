import { isEvmAddress, isPayoutAddress, parsePriceUsd, validatePathPattern } from '@crawlgate/core';
import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { domainToASCII } from 'node:url';
import { Type } from 'class-transformer';
import { Allow, IsObject, registerDecorator, ValidateIf, ValidateNested, ValidationOptions } from 'class-validator';

/*
 * class-validator decorators backed by @crawlgate/core's parsers, so the API accepts exactly
 * what core accepts. Their constraint names are looked up in validation-items.ts for the 422 type.
 */

export function IsPriceUsd(options?: ValidationOptions): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'priceUsd',
      target: target.constructor,
      propertyName: String(property),
      options,
      validator: {
        validate: (value) => parsePriceUsd(value).ok,
        defaultMessage: (args) => {
          const parsed = parsePriceUsd(args?.value);
          return parsed.ok ? '' : parsed.msg;
        },
      },
    });
}

/**
 * A string of at most `max` UTF-16 code units (its JavaScript length), as the middleware measures
 * what it reports. class-validator's MaxLength counts a surrogate pair as one character and skips
 * variation selectors: 256 of its "characters" held 1,786 bytes. 422 string_too_long, as MaxLength's.
 */
export function MaxCodeUnits(max: number, options?: ValidationOptions): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'maxLength',
      target: target.constructor,
      propertyName: String(property),
      options,
      validator: {
        validate: (value) => typeof value === 'string' && value.length <= max,
        defaultMessage: (args) => `${args?.property} must be at most ${max} UTF-16 code units long`,
      },
    });
}

/** Invisible and format characters (zero-width space, soft hyphen, bidi marks), controls, spaces. */
const HIDDEN_CHARACTER = /[\p{Cf}\p{Cc}\p{Z}]/u;

/**
 * Whether an email address is written the one way it reads, so no new account looks like another's
 * mailbox: NFKC-stable (no full-width letters, no letter and combining accent apart), nothing that
 * shows as nothing, no quoted local part, and its domain in its ASCII form ("xn--bcher-kva.example",
 * not "bücher.example"; "." not "。").
 */
export function isPlainEmailText(value: unknown): boolean {
  if (typeof value !== 'string' || value.normalize('NFKC') !== value || HIDDEN_CHARACTER.test(value)) return false;
  const domain = value.slice(value.lastIndexOf('@') + 1);
  return !value.includes('"') && domainToASCII(domain) === domain;
}

/** isPlainEmailText() as a class-validator decorator (422 email_format). Accounts registered before still log in as written. */
export function IsPlainEmailText(options?: ValidationOptions): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'plainEmailText',
      target: target.constructor,
      propertyName: String(property),
      options: {
        message:
          'Email must be written plainly: composed characters (NFKC), no invisible, format or space characters, no quotes, the domain in its ASCII (xn--) form',
        ...options,
      },
      validator: { validate: isPlainEmailText },
    });
}

/** A gate's URL: a path, or an absolute URL that parses (whose path the offer's `resource` names). 422 otherwise. */
export function IsGateUrl(options?: ValidationOptions): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'gateUrl',
      target: target.constructor,
      propertyName: String(property),
      options: { message: 'url must be a path starting with "/" or an absolute http(s) URL that parses', ...options },
      validator: {
        validate: (value) => typeof value === 'string' && (value.startsWith('/') || URL.canParse(value)),
      },
    });
}

export function IsPathPattern(options?: ValidationOptions): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'pathPattern',
      target: target.constructor,
      propertyName: String(property),
      options,
      validator: {
        validate: (value) => typeof value === 'string' && validatePathPattern(value) === null,
        defaultMessage: (args) =>
          (typeof args?.value === 'string' && validatePathPattern(args.value)?.msg) ||
          'Path pattern must be a string starting with "/"',
      },
    });
}

export function IsEvmAddressString(options?: ValidationOptions): PropertyDecorator {
  return evmAddressDecorator(isEvmAddress, 'Must be an EVM address: 0x followed by 40 hexadecimal characters', options);
}

/** An address to pay a publisher at (core's isPayoutAddress). */
export function IsPayoutAddressString(options?: ValidationOptions): PropertyDecorator {
  return evmAddressDecorator(
    isPayoutAddress,
    'Must be an EVM address (0x followed by 40 hexadecimal characters), not the zero address; in mixed case, its EIP-55 checksum must hold',
    options,
  );
}

/** Both address checks answer as one constraint ("evmAddress", an evm_address 422 item). */
function evmAddressDecorator(
  validate: (value: unknown) => boolean,
  message: string,
  options: ValidationOptions | undefined,
): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'evmAddress',
      target: target.constructor,
      propertyName: String(property),
      options,
      validator: { validate, defaultMessage: () => message },
    });
}

/** A payout_proof comes with the address it proves: payout_address a string in the same body. */
export function ProvesNamedPayoutAddress(options?: ValidationOptions): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'provesNamedPayoutAddress',
      target: target.constructor,
      propertyName: String(property),
      options: { message: 'payout_proof proves the payout_address of the same request: name one', ...options },
      validator: {
        validate: (_value, args) => typeof (args?.object as { payout_address?: unknown }).payout_address === 'string',
      },
    });
}

/**
 * The field may be left out, but `null` is a value like any other and must pass the field's
 * checks (class-validator's IsOptional lets null through, which would reach the database).
 */
export const Optional = (): PropertyDecorator => ValidateIf((_object: object, value: unknown) => value !== undefined);

/**
 * A field the settings' GET answers and a body that RejectsUnknownFields may carry back: taken, and
 * ignored (what GET answers can be edited and sent back as it is).
 */
export const IgnoredReadOnlyField = (): PropertyDecorator =>
  applyDecorators(
    Allow(),
    ApiPropertyOptional({ readOnly: true, description: 'As GET answers it; ignored in a request' }),
  );

/**
 * A list of `type` objects, each validated. ValidateNested alone takes a list for an element and
 * validates its items instead ([[]] passed, and the service read a list as an entry): each element
 * must be an object (422 dict_type).
 */
export const EachNested = (type: () => new () => object): PropertyDecorator =>
  applyDecorators(IsObject({ each: true }), ValidateNested({ each: true }), Type(type));
