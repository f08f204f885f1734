/**
 * Request validation: one Ajv for bodies (no type coercion: "5" is not 5) and one for path and query strings
 * (which are text and must be coerced). Failures map to the spec's specific error codes here, in one place.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError, type ErrorCode } from '../errors.js';

const AJV_OPTIONS = { allErrors: false, strict: false, useDefaults: true } as const;

/**
 * A validator compiled on its first call, not when its route is registered: start-up compiles nothing a request has
 * not asked for yet (docs/architecture.md, "Process lifecycle"). Fastify reads `errors` after a failed call.
 */
function compiledOnFirstUse(compile: () => ValidateFunction): (data: unknown) => boolean {
  let validate: ValidateFunction | undefined;
  const lazy = Object.assign(
    (data: unknown) => {
      validate ??= compile();
      const valid = validate(data);
      lazy.errors = validate.errors ?? null;
      return valid;
    },
    { errors: null as ValidateFunction['errors'] },
  );
  return lazy;
}

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  let bodyAjv: Ajv | undefined;
  let textAjv: Ajv | undefined;
  const ajvFor = (httpPart: string | undefined): Ajv => {
    if (httpPart === 'body') {
      bodyAjv ??= new Ajv({ ...AJV_OPTIONS, coerceTypes: false });
      return bodyAjv;
    }
    textAjv ??= new Ajv({ ...AJV_OPTIONS, coerceTypes: true });
    return textAjv;
  };
  return ({ schema, httpPart }) => compiledOnFirstUse(() => ajvFor(httpPart).compile(schema as object));
}

/** `<field>:<keyword>` -> code, for body fields whose failures have a specific spec code. */
const BODY_CODES: Readonly<Record<string, ErrorCode>> = {
  'title:required': 'title_required',
  'title:minLength': 'title_required',
  'title:maxLength': 'title_too_long',
  'description:maxLength': 'description_too_long',
  'html:required': 'html_required',
  'passcode:required': 'passcode_required',
  'password:required': 'passcode_required',
};

/** The body field at fault: the top-level field, also for a failure inside it (`files/a.png/content` is `files`). */
function fieldOf(error: ErrorObject): string {
  const top = error.instancePath.split('/').filter(Boolean)[0];
  if (error.keyword === 'required' && top === undefined) return String(error.params.missingProperty ?? '');
  return top ?? '';
}

/** The offending object key of a propertyNames failure (Ajv puts it on the inner error or in params). */
function propertyNameOf(error: ErrorObject): string | undefined {
  const name = error.propertyName ?? (error.params.propertyName as string | undefined);
  return name === undefined ? undefined : String(name);
}

function describe(error: ErrorObject, field: string): string {
  const key = propertyNameOf(error);
  if (key !== undefined)
    return `metadata key "${key}" is not valid (1-64 of [A-Za-z0-9_.-], no leading or trailing dot or hyphen)`;
  const where = error.instancePath === '' ? field : error.instancePath.slice(1).replaceAll('/', '.');
  return `${where || 'value'} ${error.message ?? 'is not valid'}`;
}

/** Maps the first Ajv failure of a request part to an ApiError with the spec's code. */
export function validationError(part: string | undefined, errors: readonly ErrorObject[]): ApiError {
  const error = errors[0];
  if (error === undefined) return new ApiError('invalid_arg');
  const field = fieldOf(error);
  if (part === 'params') {
    return field === 'slug'
      ? new ApiError('invalid_slug')
      : new ApiError('invalid_arg', { message: describe(error, field), details: { field } });
  }
  if (part === 'body') {
    if (error.instancePath === '' && error.keyword === 'type') {
      return new ApiError('invalid_json', { message: 'The request body must be a JSON object.' });
    }
    const code = BODY_CODES[`${field}:${error.keyword}`];
    if (code !== undefined) {
      // A maximum names its limit; `title: ""` (minLength) is title_required, with no limit to name.
      const limit = error.keyword === 'maxLength' ? (error.params.limit as number | undefined) : undefined;
      return new ApiError(
        code,
        limit === undefined
          ? { details: { field } }
          : { message: `${field} is longer than ${limit} characters.`, details: { field, max_chars: limit } },
      );
    }
    if (field === 'metadata') {
      const key = propertyNameOf(error) ?? error.instancePath.split('/').filter(Boolean)[1];
      return new ApiError('invalid_arg', {
        message: describe(error, field),
        details: { field: 'metadata', ...(key === undefined ? {} : { key }) },
      });
    }
  }
  return new ApiError('invalid_arg', { message: describe(error, field), details: { field } });
}

/**
 * A preValidation hook refusing a body field the route does not take but a client may plausibly send expecting an
 * effect (a passcode that would silently not be set is worse than an error).
 */
export function refuseField(field: string, error: () => ApiError) {
  return async (request: { body: unknown }): Promise<void> => {
    const body = request.body;
    if (typeof body === 'object' && body !== null && Object.hasOwn(body, field)) throw error();
  };
}

export const wrongField = (field: string, hint: string) => () =>
  new ApiError('invalid_arg', { message: `${field} is not a field of this request: ${hint}`, details: { field } });

/**
 * A check of a value against a body schema, with the same Ajv options and error codes as route validation: for the
 * console's forms, which feed the same domain functions as the API and must refuse exactly what it refuses.
 */
export function bodyChecker<T>(schema: object): (value: unknown) => T {
  let validate: ValidateFunction | undefined;
  return (value) => {
    validate ??= new Ajv({ ...AJV_OPTIONS, coerceTypes: false }).compile(schema);
    if (!validate(value)) throw validationError('body', validate.errors ?? []);
    return value as T;
  };
}
