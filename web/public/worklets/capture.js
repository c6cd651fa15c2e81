// Microphone capture for the softphone. The AudioContext runs at 8 kHz (the browser resamples the
// microphone), so this only cuts the input into 20 ms frames of 160 samples and posts them.
class CaptureProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    this.frame = new Float32Array(160);
    this.filled = 0;
  }
  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (!channel) return true;
    for (let i = 0; i < channel.length; i++) {
      this.frame[this.filled++] = channel[i];
      if (this.filled === 160) {
        this.port.postMessage(this.frame.slice(0));
        this.filled = 0;
      }
    }
    return true;
  }
}
registerProcessor('vb-capture', CaptureProcessor);
