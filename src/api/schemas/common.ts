// Schemas shared by every resource: the error body, list envelopes, pagination query, path ids.
import { Type, type TSchema } from '@sinclair/typebox';

export const ErrorBody = Type.Object(
  {
    error: Type.Object(
      {
        type: Type.String({
          description:
            'Category: authentication_error, permission_error, invalid_request_error, validation_error, conflict_error, not_found_error, rate_limit_error, api_error.',
        }),
        code: Type.String({ description: 'Machine-readable code from the error catalog.' }),
        message: Type.String({ description: 'Human-readable explanation.' }),
        param: Type.Optional(Type.String({ description: 'The request field the error is about (dotted path), when there is one.' })),
        request_id: Type.String({ description: 'req_… identifier, also in X-Request-ID.' }),
        retry_after: Type.Optional(Type.Number({ description: 'Seconds to wait before retrying (limits and conflicts).' })),
        docs_url: Type.Optional(Type.String({ description: 'Where the rule is documented (routing_failed).' })),
      },
      { additionalProperties: true },
    ),
  },
  { $id: 'ErrorBody', description: 'Every non-2xx response has this shape.' },
);

/** Error responses a route can return, keyed by status, with the codes listed in the description. */
export function errorResponses(codes: Record<number, string[]>): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const [status, list] of Object.entries(codes)) {
    out[Number(status)] = Type.Ref('ErrorBody', { description: list.join(', ') });
  }
  return out;
}

/** Gate failures every authenticated route can answer with (SPEC "Gate failures"). */
export const AUTH_ERRORS: Record<number, string[]> = {
  401: ['api_key_invalid', 'api_key_expired', 'api_key_revoked', 'api_key_wrong_environment'],
  403: ['organization_inactive', 'insufficient_permissions'],
  429: ['rate_limit_exceeded'],
};

export function withAuthErrors(extra: Record<number, string[]>): Record<number, TSchema> {
  const merged: Record<number, string[]> = { ...AUTH_ERRORS };
  for (const [status, list] of Object.entries(extra)) merged[Number(status)] = [...(merged[Number(status)] ?? []), ...list];
  return errorResponses({ ...merged, 500: ['internal_error'], 503: ['service_unavailable'] });
}

export const PageQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100 (default 20).' }),
    starting_after: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Cursor (an object id): return the items after it, in ascending id (creation) order.' }),
    ),
    ending_before: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Cursor (an object id): return the items just before it. Exclusive with starting_after.' }),
    ),
  },
  { additionalProperties: false },
);

export function ListOf<T extends TSchema>(item: T, description: string) {
  return Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(item),
      has_more: Type.Boolean({ description: 'More items exist beyond this page in the direction of travel.' }),
      next_cursor: Type.Union([Type.String(), Type.Null()], {
        description: 'When has_more: pass it as the same cursor parameter (starting_after or ending_before) to continue; otherwise null.',
      }),
      url: Type.String({ description: 'The list path.' }),
    },
    { description },
  );
}

// Ids are prefix_base32 (src/ids.ts). Anything else (over-long, control characters such as NUL that
// PostgreSQL cannot take) names no resource: the errors plugin answers the resource's 404.
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[0-9A-Za-z_-]+$' }) });

export const Iso8601 = (description: string) => Type.String({ format: 'date-time', description });
export const NullableIso8601 = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

/** Voice hints (SPEC "Limits": stability 0–1, similarity_boost 0–1, speed 0.5–2), shared by sessions and agents. */
export const VoiceInput = Type.Object(
  {
    voice_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'TTS voice name (engine-specific, e.g. an espeak-ng voice such as "en-us").' }),
    ),
    stability: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: '0 to 1, default 0.5.' })),
    similarity_boost: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: '0 to 1, default 0.75.' })),
    speed: Type.Optional(Type.Number({ minimum: 0.5, maximum: 2, description: '0.5 to 2, default 1.' })),
  },
  { additionalProperties: false },
);

export const VoiceOutput = Type.Object({
  voice_id: Type.Optional(Type.String()),
  stability: Type.Number(),
  similarity_boost: Type.Number(),
  speed: Type.Number(),
});

export interface Voice {
  voice_id?: string;
  stability: number;
  similarity_boost: number;
  speed: number;
}

export function voiceWithDefaults(v: { voice_id?: string; stability?: number; similarity_boost?: number; speed?: number } | undefined): Voice {
  return {
    ...(v?.voice_id !== undefined ? { voice_id: v.voice_id } : {}),
    stability: v?.stability ?? 0.5,
    similarity_boost: v?.similarity_boost ?? 0.75,
    speed: v?.speed ?? 1,
  };
}

/** Metadata values: strings, numbers, booleans or null (limits checked in metadata.ts). */
export const MetadataSchema = (maxKeys: number, maxBytes: number) =>
  Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
    description: `Custom key-value pairs: at most ${maxKeys} keys, keys 1 to 40 characters, values string, number, boolean or null, ${maxBytes} bytes of JSON in all.`,
  });
