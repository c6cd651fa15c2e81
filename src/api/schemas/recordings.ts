// Recording resource schemas (SPEC "Recording object").
import { Type } from '@sinclair/typebox';
import { Iso8601 } from './common.js';

export const RecordingObject = Type.Object({
  id: Type.String({ description: 'rec_…' }),
  object: Type.Literal('recording'),
  session_id: Type.String(),
  channel: Type.String({ description: 'agent, customer or mixed.' }),
  status: Type.String({ description: 'ready or failed (processing answers 202 with the reduced object).' }),
  duration: Type.Union([Type.Number(), Type.Null()], { description: 'Seconds.' }),
  format: Type.String({ description: 'mp3 or wav.' }),
  size: Type.Union([Type.Number(), Type.Null()], { description: 'Bytes.' }),
  sample_rate: Type.Number(),
  bit_depth: Type.Number(),
  download_url: Type.Optional(Type.String({ description: '/v1/recordings/{id}/audio, when ready.' })),
  created_at: Iso8601('Creation time.'),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Deletion time by retention policy.' }),
});

export const RecordingProcessing = Type.Object({
  id: Type.String(),
  object: Type.Literal('recording'),
  session_id: Type.String(),
  channel: Type.String(),
  status: Type.Literal('processing'),
  message: Type.String(),
  created_at: Iso8601('Creation time.'),
});

export const RecordingListItem = Type.Object({
  id: Type.String(),
  object: Type.Literal('recording'),
  session_id: Type.String(),
  duration: Type.Union([Type.Number(), Type.Null()]),
  format: Type.String(),
  status: Type.String(),
  created_at: Iso8601('Creation time.'),
});
