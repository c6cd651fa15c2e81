// The browser as one party of a session: microphone → 8 kHz mu-law audio.input over the session's
// stream socket; audio.output → a jitter-buffered AudioWorklet; transcripts reported to the page.
import { decodeToFloats, encodeFloats, fromBase64, toBase64 } from './mulaw';

export interface PhoneEvents {
  onState(state: string): void;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the socket/API, read field by field with checks
  onMessage(msg: Record<string, any>): void;
  onPlayback(stats: { played: number; underruns: number; dropped: number; buffered: number }): void;
}

const FRAMES_PER_MESSAGE = 5; // 100 ms of audio per audio.input

export class BrowserPhone {
  private ctx?: AudioContext;
  private ws?: WebSocket;
  private mic?: MediaStream;
  private playback?: AudioWorkletNode;
  private pending: Uint8Array[] = [];
  private sequence = 0;
  outputFrames = 0;

  constructor(private readonly events: PhoneEvents) {}

  async start(streamUrl: string, token: string, speaker: 'agent' | 'customer'): Promise<void> {
    this.events.onState('opening microphone');
    this.ctx = new AudioContext({ sampleRate: 8000, latencyHint: 'interactive' });
    const base = import.meta.env.BASE_URL;
    await this.ctx.audioWorklet.addModule(`${base}worklets/capture.js`);
    await this.ctx.audioWorklet.addModule(`${base}worklets/playback.js`);
    this.mic = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: false, autoGainControl: false },
    });
    const source = this.ctx.createMediaStreamSource(this.mic);
    const capture = new AudioWorkletNode(this.ctx, 'vb-capture');
    source.connect(capture);
    this.playback = new AudioWorkletNode(this.ctx, 'vb-playback', { processorOptions: { targetFrames: 3, maxFrames: 25 } });
    this.playback.connect(this.ctx.destination);
    this.playback.port.onmessage = (e) => this.events.onPlayback({ ...e.data.stats, buffered: e.data.buffered });

    this.events.onState('connecting');
    const url = `${streamUrl}${streamUrl.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => this.events.onState('connected');
    ws.onclose = (e) => {
      this.events.onState(`closed (${e.code}${e.reason ? ` ${e.reason}` : ''})`);
      void this.stopAudio();
    };
    ws.onmessage = (e) => this.receive(String(e.data));
    capture.port.onmessage = (e) => this.send(e.data as Float32Array, speaker);
  }

  private send(frame: Float32Array, speaker: 'agent' | 'customer'): void {
    if (this.ws?.readyState !== WebSocket.OPEN) return;
    this.pending.push(encodeFloats(frame));
    if (this.pending.length < FRAMES_PER_MESSAGE) return;
    const bytes = new Uint8Array(this.pending.length * 160);
    this.pending.forEach((f, i) => bytes.set(f, i * 160));
    this.pending = [];
    this.ws.send(
      JSON.stringify({
        type: 'audio.input',
        speaker,
        sequence: ++this.sequence,
        audio: { encoding: 'mulaw', sample_rate_hz: 8000, channels: 1, payload: toBase64(bytes) },
      }),
    );
  }

  private receive(text: string): void {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the socket/API, read field by field with checks
    let msg: Record<string, any>;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (msg.type === 'audio.output') {
      this.outputFrames++;
      const samples = decodeToFloats(fromBase64(msg.audio.payload));
      for (let i = 0; i + 160 <= samples.length; i += 160) this.playback?.port.postMessage(samples.slice(i, i + 160));
    }
    this.events.onMessage(msg);
  }

  end(): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'session.end' }));
    else void this.stopAudio();
  }

  private async stopAudio(): Promise<void> {
    this.mic?.getTracks().forEach((t) => t.stop());
    this.mic = undefined;
    if (this.ctx && this.ctx.state !== 'closed') await this.ctx.close();
  }
}
