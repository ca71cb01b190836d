// mic-worklet.js — the microphone's samples for the parley voice page, in the audio thread.
//
// Runs at the AudioContext's own rate (`sampleRate`, 44.1 or 48 kHz usually: the page never
// forces a rate, which Firefox refuses with a microphone at another one), averages each
// group of input samples that falls into one 16 kHz output sample (a box low-pass and
// decimation in one), converts to 16-bit integers, and posts 100 ms ArrayBuffers (1600
// samples) to the page, which sends them over the websocket as binary frames.
'use strict';

class ParleyMic extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / 16000; // input samples per output sample
    this.pos = 0; // input samples into the current output sample
    this.sum = 0;
    this.count = 0;
    this.out = new Int16Array(1600);
    this.n = 0;
  }

  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    for (let i = 0; i < input.length; i++) {
      this.sum += input[i];
      this.count++;
      this.pos += 1;
      if (this.pos >= this.step) {
        this.pos -= this.step;
        const v = Math.max(-1, Math.min(1, this.sum / this.count));
        this.out[this.n++] = v < 0 ? v * 32768 : v * 32767;
        this.sum = 0;
        this.count = 0;
        if (this.n === this.out.length) {
          this.port.postMessage(this.out.buffer, [this.out.buffer]);
          this.out = new Int16Array(1600);
          this.n = 0;
        }
      }
    }
    return true;
  }
}

registerProcessor('parley-mic', ParleyMic);
