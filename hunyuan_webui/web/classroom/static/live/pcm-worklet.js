/* The microphone as the recogniser hears it: 16 kHz mono 16-bit PCM in frames of 100 ms
   (1,600 samples), made in the audio thread. Channels are averaged; each output sample is the
   mean of the input samples of its period (a box filter: the low-pass before the rate drops),
   whatever the device's rate (48 kHz, 44.1 kHz, or 16 kHz already). */
class HymtPcm16k extends AudioWorkletProcessor {
  constructor() {
    super();
    this.ratio = sampleRate / 16000;
    this.pos = 0; this.sum = 0; this.n = 0;
    this.frame = new Int16Array(1600); this.fill = 0;
  }
  process(inputs) {
    const input = inputs[0];
    if (!input || !input.length || !input[0]) return true;
    const channels = input.length, length = input[0].length;
    for (let i = 0; i < length; i++) {
      let v = 0;
      for (let c = 0; c < channels; c++) v += input[c][i];
      this.sum += v / channels; this.n += 1; this.pos += 1;
      if (this.pos < this.ratio) continue;
      this.pos -= this.ratio;
      const s = this.sum / this.n;
      this.sum = 0; this.n = 0;
      this.frame[this.fill++] = Math.max(-32768, Math.min(32767, Math.round(s * 32767)));
      if (this.fill === this.frame.length) {
        this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
        this.frame = new Int16Array(1600); this.fill = 0;
      }
    }
    return true;
  }
}
registerProcessor("hymt-pcm16k", HymtPcm16k);
