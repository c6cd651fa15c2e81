// Playback of audio.output with a small jitter buffer: frames (160 samples at 8 kHz) are queued;
// playing starts once `target` frames are buffered, an underrun plays silence and re-buffers, and a
// queue grown past `max` drops its oldest frames so latency stays bounded.
class PlaybackProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const o = (options && options.processorOptions) || {};
    this.target = o.targetFrames || 3;
    this.max = o.maxFrames || 25;
    this.queue = [];
    this.current = null;
    this.offset = 0;
    this.playing = false;
    this.stats = { played: 0, underruns: 0, dropped: 0 };
    this.port.onmessage = (e) => {
      this.queue.push(e.data);
      while (this.queue.length > this.max) {
        this.queue.shift();
        this.stats.dropped++;
      }
    };
  }
  process(_inputs, outputs) {
    const out = outputs[0][0];
    if (!this.playing && this.queue.length >= this.target) this.playing = true;
    for (let i = 0; i < out.length; i++) {
      if (!this.current || this.offset >= this.current.length) {
        if (this.current) this.stats.played++;
        this.current = this.playing ? this.queue.shift() || null : null;
        this.offset = 0;
        if (!this.current) {
          if (this.playing) this.stats.underruns++;
          this.playing = false;
          out.fill(0, i);
          break;
        }
      }
      out[i] = this.current[this.offset++];
    }
    if (currentFrame % 4000 < out.length) this.port.postMessage({ stats: this.stats, buffered: this.queue.length });
    return true;
  }
}
registerProcessor('vb-playback', PlaybackProcessor);
