// Unit tests for the API's pure pieces: the ISO 639-1 list, keyset pages, the auth cache, the
// engine capability rule, stream URLs and validation-error mapping.
import { describe, expect, it } from 'vitest';
import { ISO_639_1_CODES, isIso6391 } from '../../../src/api/schemas/iso639-1.js';
import { finishPage, pageClause } from '../../../src/store/page.js';
import { AuthCache } from '../../../src/api/plugins/auth-cache.js';
import { checkEngines } from '../../../src/api/routes/session-create.js';
import { streamUrl } from '../../../src/api/routes/present.js';
import { toApiError } from '../../../src/api/plugins/errors.js';
import { ApiError } from '../../../src/api/errors.js';
import type { SessionMode } from '../../../src/sessions/index.js';

describe('ISO 639-1', () => {
  it('holds the 183 current codes', () => {
    expect(ISO_639_1_CODES.size).toBe(183);
    for (const c of ['en', 'es', 'zh', 'zu', 'yo', 'nb', 'iu']) expect(isIso6391(c)).toBe(true);
    for (const c of ['bh', 'xx', 'EN', 'eng', 'en-US', '']) expect(isIso6391(c)).toBe(false);
  });
});

describe('keyset pages', () => {
  const rows = (ids: string[]) => ids.map((id) => ({ id }));
  it('pages forward: has_more from the extra row, cursor = last id', () => {
    expect(pageClause({ limit: 2 }, 2)).toEqual({ where: 'TRUE', order: 'id ASC', params: [] });
    expect(pageClause({ limit: 2, startingAfter: 'a' }, 3)).toEqual({ where: 'id > $3', order: 'id ASC', params: ['a'] });
    expect(finishPage({ limit: 2 }, rows(['a', 'b', 'c']))).toEqual({ items: rows(['a', 'b']), hasMore: true, nextCursor: 'b' });
    expect(finishPage({ limit: 2 }, rows(['a', 'b']))).toEqual({ items: rows(['a', 'b']), hasMore: false, nextCursor: null });
  });
  it('pages backward: rows fetched descending come back ascending, cursor = first id', () => {
    expect(pageClause({ limit: 2, endingBefore: 'z' }, 2)).toEqual({ where: 'id < $2', order: 'id DESC', params: ['z'] });
    expect(finishPage({ limit: 2, endingBefore: 'z' }, rows(['y', 'x', 'w']))).toEqual({ items: rows(['x', 'y']), hasMore: true, nextCursor: 'x' });
    expect(finishPage({ limit: 2, endingBefore: 'z' }, rows(['y']))).toEqual({ items: rows(['y']), hasMore: false, nextCursor: null });
  });
});

describe('AuthCache', () => {
  it('serves entries until their TTL, then forgets them', () => {
    const cache = new AuthCache<string>(1000);
    cache.set('h', 'row', 0);
    expect(cache.get('h', 999)).toBe('row');
    expect(cache.get('h', 1000)).toBeUndefined();
    expect(cache.get('h', 1)).toBeUndefined();
  });
  it('is off with TTL 0 and bounded in size', () => {
    const off = new AuthCache<string>(0);
    off.set('h', 'row');
    expect(off.get('h')).toBeUndefined();
    const small = new AuthCache<number>(1000, 2);
    small.set('a', 1, 0);
    small.set('b', 2, 0);
    small.set('c', 3, 0);
    expect(small.get('a', 1)).toBeUndefined();
    expect(small.get('c', 1)).toBe(3);
  });
});

describe('engine capability rule', () => {
  // STT for en/es/fr; text translation en↔es and en→fr only; speech for en/es/fr.
  const engines = {
    canTranscribe: (l: string) => ['en', 'es', 'fr'].includes(l),
    canTranslate: (f: string, t: string) => f === t || (f === 'en' && ['es', 'fr'].includes(t)) || (f === 'es' && t === 'en'),
    canSpeak: (l: string) => ['en', 'es', 'fr'].includes(l),
  };
  const refusal = (mode: SessionMode, src: string | null, tgt: string | null) => {
    try {
      checkEngines(engines, mode, src, tgt, 'en');
      return null;
    } catch (err) {
      return { code: (err as ApiError).code, param: (err as ApiError).param, message: (err as Error).message };
    }
  };
  it('accepts sessions served both ways, one way only, or left to auto-detection', () => {
    expect(refusal('bidirectional_translation', 'en', 'es')).toBeNull();
    expect(refusal('bidirectional_translation', 'en', 'fr')).toBeNull(); // fr→en missing: one way, engine_unavailable on connect
    expect(refusal('bidirectional_translation', null, 'es')).toBeNull(); // agent defaults to en
    expect(refusal('bidirectional_translation', null, null)).toBeNull(); // both default to en: transcription only
  });
  it('refuses a session served in neither direction, naming the field and every reason', () => {
    expect(refusal('bidirectional_translation', 'ja', 'en')).toMatchObject({
      code: 'validation_error',
      param: 'source_language',
      message: expect.stringMatching(/no speech-to-text engine for 'ja'.*no translation engine for 'en' to 'ja'/),
    });
    expect(refusal('bidirectional_translation', 'fr', 'de')).toMatchObject({
      param: 'target_language',
      message: expect.stringMatching(/no translation engine for 'fr' to 'de'/),
    });
    expect(refusal('assistive_translation', 'es', 'fr')).toMatchObject({ code: 'validation_error', param: 'target_language' });
  });
});

describe('stream URL', () => {
  it('uses the public host, ws for http and wss for https', () => {
    expect(streamUrl('http://127.0.0.1:8080', 'sess_1')).toBe('ws://127.0.0.1:8080/v1/sessions/sess_1/connect');
    expect(streamUrl('https://voice.example.com/', 'sess_1')).toBe('wss://voice.example.com/v1/sessions/sess_1/connect');
  });
});

describe('validation error mapping', () => {
  const validationError = (validation: object[]) => Object.assign(new Error('x'), { validation, validationContext: 'body', statusCode: 400 });
  it('reports the deepest complaint inside a union and combines type mismatches', () => {
    const union = toApiError(
      validationError([
        { instancePath: '/metadata/a', keyword: 'type', params: { type: 'string' }, message: 'must be string' },
        { instancePath: '/metadata/a', keyword: 'type', params: { type: 'number' }, message: 'must be number' },
        { instancePath: '/metadata/a', keyword: 'type', params: { type: 'null' }, message: 'must be null' },
        { instancePath: '/metadata/a', keyword: 'anyOf', params: {}, message: 'must match a schema in anyOf' },
      ]),
    );
    expect(union).toMatchObject({ code: 'invalid_request', param: 'metadata.a', message: "'metadata.a' must be string, number or null." });
    const nested = toApiError(
      validationError([
        { instancePath: '/voice/speed', keyword: 'maximum', params: { limit: 2 }, message: 'must be <= 2' },
        { instancePath: '/voice', keyword: 'type', params: { type: 'null' }, message: 'must be null' },
        { instancePath: '/voice', keyword: 'anyOf', params: {}, message: 'must match a schema in anyOf' },
      ]),
    );
    expect(nested).toMatchObject({ param: 'voice.speed', message: "'voice.speed' must be <= 2." });
  });
  it('names missing and unknown fields', () => {
    expect(
      toApiError(validationError([{ instancePath: '/routing', keyword: 'additionalProperties', params: { additionalProperty: 'x' }, message: '' }]) as never),
    ).toMatchObject({ param: 'routing.x', message: "Unknown field 'routing.x'." });
    expect(toApiError(validationError([{ instancePath: '', keyword: 'required', params: { missingProperty: 'mode' }, message: '' }]) as never)).toMatchObject({
      param: 'mode',
      message: "Missing required field 'mode'.",
    });
  });
  it('hides unexpected errors behind internal_error', () => {
    const e = toApiError(new TypeError('boom'));
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ code: 'internal_error', statusCode: 500, message: 'An unexpected error occurred.' });
  });
});
