// /v1/recordings/{id} and its audio (SPEC "Recordings"): 202 while processing, consent enforced,
// expired recordings are gone (404), audio streamed from disk without buffering.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { getRecording, type RecordingWithConsent } from '../../store/index.js';
import { ApiError } from '../errors.js';
import type { ApiDeps } from '../context.js';
import { IdParams, withAuthErrors } from '../schemas/common.js';
import { RecordingObject, RecordingProcessing } from '../schemas/recordings.js';
import { presentProcessingRecording, presentRecording } from './present.js';

const CONTENT_TYPES: Record<string, string> = { mp3: 'audio/mpeg', wav: 'audio/wav' };

const notFound = (id: string, why = '') => new ApiError('recording_not_found', { param: 'recording_id', message: `No recording '${id}'${why}.` });

/** The recording of the caller's organization, if it is still retained and its session's consent rules allow access. */
async function accessibleRecording(deps: ApiDeps, orgId: string, id: string): Promise<RecordingWithConsent> {
  const r = await getRecording(deps.db, orgId, id);
  if (!r) throw notFound(id);
  if (r.expires_at && r.expires_at.getTime() <= Date.now()) throw notFound(id, ': it expired under the retention policy');
  const consent = r.session_recording ?? {};
  if (consent.consent_required && consent.consent_status !== 'granted') {
    throw new ApiError('consent_required', {
      message: `The session requires recording consent and its consent status is '${consent.consent_status ?? 'pending'}', not 'granted'.`,
    });
  }
  return r;
}

export default async function recordingRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const errors = withAuthErrors({ 403: ['consent_required'], 404: ['recording_not_found'] });

  app.get('/v1/recordings/:id', {
    config: { scope: 'recordings:read' },
    schema: {
      tags: ['recordings'],
      summary: 'Retrieve a recording',
      description: 'Scope recordings:read. 200 when ready (download_url set) or failed; 202 with a reduced object while processing.',
      params: IdParams,
      response: { 200: RecordingObject, 202: RecordingProcessing, ...errors },
    },
  }, async (req, reply) => {
    const { id } = req.params as Static<typeof IdParams>;
    const r = await accessibleRecording(deps, req.auth!.orgId, id);
    if (r.status === 'processing') {
      reply.code(202);
      return presentProcessingRecording(r);
    }
    return presentRecording(r);
  });

  app.get('/v1/recordings/:id/audio', {
    config: { scope: 'recordings:read' },
    schema: {
      tags: ['recordings'],
      summary: 'Download recording audio',
      description:
        'Scope recordings:read. Streams the file (audio/mpeg for MP3) with Content-Length and a Content-Disposition filename containing the session id. ' +
        '202 with the reduced recording object while processing; 404 when generation failed.',
      params: IdParams,
      response: { 200: Type.String({ format: 'binary', description: 'The audio bytes.' }), 202: RecordingProcessing, ...errors },
    },
  }, async (req, reply) => {
    const { id } = req.params as Static<typeof IdParams>;
    const r = await accessibleRecording(deps, req.auth!.orgId, id);
    if (r.status === 'processing') {
      reply.code(202);
      return presentProcessingRecording(r);
    }
    if (r.status !== 'ready' || !r.file_path) throw notFound(id, ': its generation failed, no audio is available');
    const file = path.isAbsolute(r.file_path) ? r.file_path : path.join(deps.config.dataDir, r.file_path);
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch {
      req.log.warn({ recording_id: r.id, file }, 'recording file missing');
      throw notFound(id, ': its audio file is no longer available');
    }
    const ext = r.format === 'wav' ? 'wav' : 'mp3';
    reply
      .header('Content-Type', CONTENT_TYPES[ext])
      .header('Content-Length', size)
      .header('Content-Disposition', `attachment; filename="${r.session_id}_${r.channel}_${r.id}.${ext}"`);
    return reply.send(createReadStream(file));
  });
}
