// /v1/recordings/{id} and its audio (SPEC "Recordings"): 202 while processing, organization policy
// and consent enforced, expired recordings are gone (404), audio streamed from storage with HTTP
// Range support (RFC 9110 §14: 206 + Content-Range, 416 for an unsatisfiable range) for players.
import { Type } from '@sinclair/typebox';
import type { Readable } from 'node:stream';
import parseRange from 'range-parser';
import { getRecording, recordRecordingConsent, type RecordingWithConsent } from '../../store/index.js';
import { createRecordingStorage, recordingPermitted } from '../../recordings/index.js';
import { ApiError } from '../errors.js';
import { authOf, type ApiApp, type ApiDeps, type OrgRow } from '../context.js';
import { IdParams, withAuthErrors } from '../schemas/common.js';
import { RecordingObject, RecordingProcessing } from '../schemas/recordings.js';
import { SessionRecording } from '../schemas/sessions.js';
import { presentProcessingRecording, presentRecording } from './present.js';

/** MP3 bytes streamed from storage: binary in the OpenAPI document, a stream to the compiler. */
const AudioBytes = (description: string) => Type.Unsafe<Readable>({ type: 'string', format: 'binary', description });

const notFound = (id: string, why = '') => new ApiError('recording_not_found', { param: 'recording_id', message: `No recording '${id}'${why}.` });

/**
 * The recording of the caller's organization, if it is still retained, the organization's policy
 * allows recordings (its `recording` feature) and the session's consent rules allow access.
 */
async function accessibleRecording(deps: ApiDeps, org: OrgRow, id: string): Promise<RecordingWithConsent> {
  const r = await getRecording(deps.db, org.id, id);
  if (!r) throw notFound(id);
  if (r.expires_at && r.expires_at.getTime() <= Date.now()) throw notFound(id, ': it expired under the retention policy');
  if (!recordingPermitted(org.features)) {
    throw new ApiError('recording_not_permitted', { message: "Recording access is not permitted: the organization does not have the 'recording' feature." });
  }
  const consent = r.session_recording ?? {};
  if (consent.consent_required && consent.consent_status !== 'granted') {
    throw new ApiError('consent_required', {
      message: `The session requires recording consent and its consent status is '${consent.consent_status ?? 'pending'}', not 'granted'.`,
    });
  }
  return r;
}

export default async function recordingRoutes(app: ApiApp, deps: ApiDeps): Promise<void> {
  const errors = withAuthErrors({ 403: ['recording_not_permitted', 'consent_required'], 404: ['recording_not_found'] });
  const storage = createRecordingStorage(deps.config);
  app.addHook('onClose', async () => storage.close?.());

  app.get(
    '/v1/recordings/:id',
    {
      config: { scope: 'recordings:read' },
      schema: {
        tags: ['recordings'],
        summary: 'Retrieve a recording',
        description: 'Scope recordings:read. 200 when ready (download_url set) or failed; 202 with a reduced object while processing.',
        params: IdParams,
        response: { 200: RecordingObject, 202: RecordingProcessing, ...errors },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const r = await accessibleRecording(deps, authOf(req).org, id);
      if (r.status === 'processing') {
        reply.code(202);
        return presentProcessingRecording(r);
      }
      return presentRecording(r);
    },
  );

  app.get(
    '/v1/recordings/:id/audio',
    {
      config: { scope: 'recordings:read' },
      schema: {
        tags: ['recordings'],
        summary: 'Download recording audio',
        description:
          'Scope recordings:read. Streams the MP3 (audio/mpeg) with Content-Length, Accept-Ranges: bytes and a Content-Disposition filename containing the session id. ' +
          'A single `Range: bytes=…` answers 206 with Content-Range (416 when unsatisfiable). 202 with the reduced recording object while processing; 404 when generation failed.',
        params: IdParams,
        response: {
          200: AudioBytes('The audio bytes.'),
          202: RecordingProcessing,
          206: AudioBytes('The requested byte range.'),
          416: Type.Null({ description: 'Range not satisfiable; Content-Range gives the size.' }),
          ...errors,
        },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const r = await accessibleRecording(deps, authOf(req).org, id);
      if (r.status === 'processing') {
        reply.code(202);
        return presentProcessingRecording(r);
      }
      if (r.status !== 'ready' || !r.file_path) throw notFound(id, ': its generation failed, no audio is available');
      const size = await storage.size(r.file_path);
      if (size === null) {
        req.log.warn({ recording_id: r.id, key: r.file_path }, 'recording file missing');
        throw notFound(id, ': its audio file is no longer available');
      }
      reply
        .header('Content-Type', 'audio/mpeg')
        .header('Accept-Ranges', 'bytes')
        .header('Content-Disposition', `attachment; filename="${r.session_id}_${r.channel}_${r.id}.mp3"`);
      const rangeHeader = req.headers.range;
      if (rangeHeader) {
        const ranges = parseRange(size, rangeHeader, { combine: true });
        if (ranges === -1) {
          // Not an API error body: a player asked past the end; tell it the size (RFC 9110 §15.5.17).
          return reply.code(416).header('Content-Range', `bytes */${size}`).header('Content-Length', 0).send(null);
        }
        // A malformed header (-2) or a type other than bytes is ignored: the whole file (RFC 9110 §14.2).
        const only = ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1 ? ranges[0] : undefined;
        if (only) {
          const { start, end } = only;
          return reply
            .code(206)
            .header('Content-Range', `bytes ${start}-${end}/${size}`)
            .header('Content-Length', end - start + 1)
            .send(storage.read(r.file_path, { start, end }));
        }
      }
      return reply.header('Content-Length', size).send(storage.read(r.file_path));
    },
  );

  // Consent recorded after the session was created (README "Recordings": consent). Not in SPEC's
  // list of routes; it changes only the session's recording.consent_status, which gates downloads.
  const ConsentBody = Type.Object(
    {
      consent_status: Type.Union([Type.Literal('granted'), Type.Literal('denied'), Type.Literal('pending')], {
        description: 'granted, denied or pending.',
      }),
    },
    { additionalProperties: false },
  );
  app.post(
    '/v1/sessions/:id/recording/consent',
    {
      config: { scope: 'sessions:write' },
      schema: {
        tags: ['recordings'],
        summary: "Record the parties' consent to recording",
        description:
          "Scope sessions:write. Sets the session's recording.consent_status (and consent_required to true); downloads need 'granted'. Returns the session's recording object.",
        params: IdParams,
        body: ConsentBody,
        response: {
          200: SessionRecording,
          ...withAuthErrors({ 404: ['session_not_found'] }),
        },
      },
    },
    async (req) => {
      const { id } = req.params;
      const { consent_status } = req.body;
      const updated = await recordRecordingConsent(deps.db, id, consent_status, authOf(req).orgId);
      if (!updated) throw new ApiError('session_not_found', { param: 'session_id', message: `No session '${id}' in this organization.` });
      return updated.recording;
    },
  );
}
