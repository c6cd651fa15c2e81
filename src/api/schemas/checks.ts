// Checks that JSON Schema cannot phrase well (or whose messages the SPEC fixes): language codes,
// metadata limits. Each throws the catalog error naming the field.
import { ApiError } from '../errors.js';
import { isIso6391 } from './iso639-1.js';

export function checkLanguage(param: string, value: string | null | undefined): void {
  if (value === undefined || value === null) return;
  if (!isIso6391(value)) {
    throw new ApiError('invalid_request', {
      param,
      message: `'${param}' must be a valid ISO 639-1 code (two lowercase letters such as 'en' or 'es'); got '${value}'.`,
    });
  }
}

export interface MetadataLimits {
  maxKeys: number;
  maxBytes: number;
}

export const METADATA_KEY_MAX_LENGTH = 40;

/** Metadata: at most `maxKeys` keys of 1–40 characters and `maxBytes` of JSON (values are typed by the schema). */
export function checkMetadata(param: string, metadata: Record<string, unknown> | null | undefined, limits: MetadataLimits): void {
  if (!metadata) return;
  const keys = Object.keys(metadata);
  if (keys.length > limits.maxKeys) {
    throw new ApiError('invalid_request', { param, message: `'${param}' may have at most ${limits.maxKeys} keys; got ${keys.length}.` });
  }
  for (const key of keys) {
    if (key.length === 0 || key.length > METADATA_KEY_MAX_LENGTH) {
      throw new ApiError('invalid_request', {
        param: `${param}.${key}`,
        message: `Metadata keys must be 1 to ${METADATA_KEY_MAX_LENGTH} characters; '${key.slice(0, 60)}' is ${key.length}.`,
      });
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  if (bytes > limits.maxBytes) {
    throw new ApiError('invalid_request', { param, message: `'${param}' is ${bytes} bytes of JSON; the limit is ${limits.maxBytes}.` });
  }
}
