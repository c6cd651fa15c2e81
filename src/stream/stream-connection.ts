// One connected socket carrying one live session: client messages in (audio.input, ping,
// session.end), session events out (session.ready, transcripts, paced audio.output, session.error,
// session.ended). The socket is a carrier only: when it drops, the session lives on (reconnect grace).
import type { WebSocket, RawData } from 'ws';
import type { Logger } from 'pino';
import { Framer, mulawDecodeInto, mulawEncodeInto, observeStage } from '../media/index.js';
import {
  FRAME_SAMPLES,
  PARTIES,
  type LiveSession,
  type Party,
  type SessionOutput,
  type SessionRegistry,
  type TranscriptFinal,
  type TranscriptPartial,
  type SessionErrorInfo,
} from '../sessions/index.js';
import type { DirectTextSender } from './direct-send.js';
import { CLOSE, endedMessage, errorMessage, parseClientMessage, pongMessage, readyMessage, type SocketErrorCode } from './protocol.js';

/**
 * Bytes that may wait in Node's buffer for the socket before audio.output is dropped: about 6 frames
 * (120 ms). A client that stops reading, or whose path slows down, then gets the audio late by no more than
 * that plus what the kernel holds (tcp-send-queue.ts bounds it), and current audio as soon as it catches up.
 * ws.bufferedAmount is exact at once: a write the kernel took is off it when send() returns (its callback
 * comes later, after the running task, which may be several media ticks run back to back).
 */
export const MAX_QUEUED_OUTPUT_BYTES = 2048;

export interface StreamConnectionOptions {
  ws: WebSocket;
  session: LiveSession;
  registry: SessionRegistry;
  maxMessageBytes: number;
  logger: Logger;
  /** Called once when the socket has closed (claims, bookkeeping). */
  onClosed(): void;
  /** Called for each audio.output frame dropped because the socket was not keeping up. */
  onOutputDropped?(): void;
  /** Writes audio.output straight to the kernel while Node's buffer is empty; absent: always `ws.send`. */
  directSend?: DirectTextSender | null;
}

export class StreamConnection {
  readonly sessionId: string;
  private readonly ws: WebSocket;
  private readonly session: LiveSession;
  private readonly log: Logger;
  private readonly framers: Record<Party, Framer>;
  private decodeBuf = new Int16Array(1600);
  private readonly encodeBuf = new Uint8Array(FRAME_SAMPLES);
  private outputSequence = 0;
  private ending = false;
  private finished = false;
  /** Per audio.output frame not yet called back, oldest first: when it was queued in Node's buffer, or -1 if it went straight to the kernel. */
  private readonly queuedSince: number[] = [];

  constructor(private readonly opts: StreamConnectionOptions) {
    this.ws = opts.ws;
    this.session = opts.session;
    this.sessionId = opts.session.id;
    this.log = opts.logger;
    const push = (p: Party) => (frame: Int16Array) => this.session.pushAudio(p, frame);
    this.framers = { agent: new Framer(push('agent')), customer: new Framer(push('customer')) };

    this.session.on('partial', this.onPartial);
    this.session.on('final', this.onFinal);
    this.session.on('output', this.onOutput as (o: unknown) => void);
    this.session.on('error', this.onError);
    this.session.on('ended', this.onEnded);
    this.ws.on('message', this.onMessage);
    this.ws.on('close', this.onClose);
    this.ws.on('error', (err) => this.log.debug({ err }, 'socket error'));

    for (const text of opts.session.plan.unavailable) this.send(errorMessage(this.sessionId, 'engine_unavailable', text));
    if (this.session.ready) this.send(readyMessage(this.sessionId));
    else this.session.once('ready', this.onReady);
  }

  private send(text: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(text);
  }

  private sendError(code: SocketErrorCode, message: string): void {
    this.send(errorMessage(this.sessionId, code, message));
  }

  private readonly onMessage = (data: RawData): void => {
    if (this.ending) return; // `session.end` stops the receive loop (SPEC "States and transitions")
    try {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      const parsed = parseClientMessage(buf, this.opts.maxMessageBytes);
      // Audio counts as activity through its frames (LiveSession.pushAudio, once a second), not per message.
      if (!parsed.ok || parsed.msg.type !== 'audio.input') this.session.noteActivity();
      if (!parsed.ok) {
        this.sendError(parsed.code, parsed.message);
        return;
      }
      const msg = parsed.msg;
      switch (msg.type) {
        case 'audio.input': {
          const party = typeof msg.speaker === 'string' ? msg.speaker : this.partyOfChannel(msg.speaker.channel);
          if (!party) {
            this.sendError('invalid_message', 'at most two channel ids per connection: the first is the customer, the second the agent');
            return;
          }
          this.pushMulaw(party, msg.payload);
          return;
        }
        case 'ping':
          this.send(pongMessage(this.sessionId));
          return;
        case 'session.end':
          this.ending = true;
          void this.opts.registry.end(this.sessionId, 'explicit_end').then((found) => {
            // Normally the session's `ended` event has answered already; this covers a vanished row.
            if (!found || !this.session.closed) this.finish('explicit_end');
          });
          return;
      }
    } catch (err) {
      this.log.error({ err }, 'socket message handling failed');
      this.closeWith(CLOSE.serverError, 'internal_error');
    }
  };

  /**
   * Channel ids map to parties by order of first use on this connection: the first is the customer
   * (the default party), the second the agent; a third is refused. The id stays the party's label
   * in this connection's transcript messages.
   */
  private partyOfChannel(channel: string): Party | null {
    const known = this.channelParties.get(channel);
    if (known) return known;
    const party: Party | undefined = (['customer', 'agent'] as const).find((p) => this.partyLabels[p] === undefined);
    if (!party) return null;
    this.channelParties.set(channel, party);
    this.partyLabels[party] = channel;
    return party;
  }

  private readonly channelParties = new Map<string, Party>();
  private readonly partyLabels: Partial<Record<Party, string>> = {};

  private pushMulaw(party: Party, bytes: Buffer): void {
    if (this.decodeBuf.length < bytes.length) this.decodeBuf = new Int16Array(bytes.length);
    const pcm = mulawDecodeInto(bytes, this.decodeBuf);
    this.framers[party].push(pcm.subarray(0, bytes.length)); // the framer copies out whole frames
  }

  private readonly onReady = (): void => this.send(readyMessage(this.sessionId));

  private readonly onPartial = (p: TranscriptPartial): void => {
    this.send(JSON.stringify({ type: 'transcript.partial', speaker: this.partyLabels[p.speaker] ?? p.speaker, language: p.language, text: p.text }));
  };

  private readonly onFinal = (f: TranscriptFinal): void => {
    this.send(JSON.stringify({ type: 'transcript.final', ...f, speaker: this.partyLabels[f.speaker] ?? f.speaker }));
  };

  private readonly onOutput = (o: SessionOutput): void => {
    if (this.ws.readyState !== this.ws.OPEN) return;
    if (this.ws.bufferedAmount > MAX_QUEUED_OUTPUT_BYTES) {
      this.opts.onOutputDropped?.();
      return;
    }
    mulawEncodeInto(o.frame, this.encodeBuf);
    const payload = Buffer.from(this.encodeBuf.buffer, this.encodeBuf.byteOffset, o.frame.length).toString('base64');
    const text = `{"type":"audio.output","sequence":${++this.outputSequence},"timestamp_ms":${o.timestampMs},"speaker":${JSON.stringify(o.speaker)},"audio":{"encoding":"mulaw","sample_rate_hz":8000,"payload":"${payload}"}}`;
    const direct = this.opts.directSend?.send(text, this.onOutputWritten) ?? 'refused';
    if (direct === 'sent') {
      observeStage('socket_send', 0);
      return;
    }
    if (direct === 'refused') this.ws.send(text, this.onOutputWritten);
    // Read the clock only for a frame left waiting (the usual frame went straight to the kernel).
    this.queuedSince.push(this.ws.bufferedAmount > 0 ? performance.now() : -1);
  };

  /** ws calls back once per send, in order: when the frame is in the kernel, or with the error that lost it. */
  private readonly onOutputWritten = (err?: Error | null): void => {
    const since = this.queuedSince.shift();
    if (since === undefined || err) return;
    observeStage('socket_send', since < 0 ? 0 : performance.now() - since);
  };

  private readonly onError = (e: SessionErrorInfo): void => {
    this.sendError(e.code as SocketErrorCode, e.message);
  };

  private readonly onEnded = ({ reason }: { reason: string }): void => this.finish(reason);

  /** `session.ended`, then a normal close (SPEC lifecycle: "receive session.ended; socket closes"). */
  private finish(reason: string): void {
    if (this.finished) return;
    this.finished = true;
    this.ending = true;
    this.send(endedMessage(this.sessionId, reason));
    this.closeWith(CLOSE.normal, reason);
  }

  closeWith(code: number, reason: string): void {
    if (this.ws.readyState === this.ws.CLOSED || this.ws.readyState === this.ws.CLOSING) return;
    this.ws.close(code, reason.slice(0, 120));
  }

  private readonly onClose = (): void => {
    this.session.off('partial', this.onPartial);
    this.session.off('final', this.onFinal);
    this.session.off('output', this.onOutput as (o: unknown) => void);
    this.session.off('error', this.onError);
    this.session.off('ended', this.onEnded);
    this.session.off('ready', this.onReady);
    for (const p of PARTIES) this.framers[p].reset();
    this.opts.onClosed();
  };
}
