// voice.js — the parley voice page's talking: the microphone to the server, transcripts,
// intents and replies back, the reply's speech played.
//
// Protocol version 1 (docs/websocket.md, "The protocol (version 1)", its Audio too): the
// page sends {"config":{"sample_rate":16000}}, then binary frames of 16-bit mono PCM at
// 16 kHz (mic-worklet.js makes them at the AudioContext's own rate, never forced), and
// {"end":1} when the talk button is pressed again. The server answers {"type":"partial"}
// while an utterance goes on, {"type":"final"} with its transcript and number, the
// {"type":"reply"}, and the reply's speech as {"type":"audio"} followed by one binary frame.
// No framework, nothing from another host.
'use strict';

(function () {
  const statusEl = document.getElementById('status');
  const talk = document.getElementById('talk');
  const partialEl = document.getElementById('partial');
  const turnsEl = document.getElementById('turns');
  let ws = null;
  let ctx = null; // AudioContext: the microphone in, the replies out
  let mic = null; // {stream, source, node, sink} while talking
  let audioHeader = null; // the {"type":"audio"} whose samples come next
  const turns = new Map(); // utterance number -> its <li>

  function setStatus(text, kind) {
    statusEl.textContent = text;
    statusEl.className = 'status ' + kind;
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function turn(n) {
    if (!turns.has(n)) {
      const li = el('li');
      li.dataset.utterance = n;
      li.appendChild(el('div', 'said'));
      li.appendChild(el('div', 'nlu'));
      li.appendChild(el('div', 'reply'));
      turnsEl.appendChild(li);
      turns.set(n, li);
    }
    return turns.get(n);
  }

  function slotsText(slots) {
    return Object.entries(slots || {})
      .map(([k, v]) => k + '=' + (Array.isArray(v) ? v.join(',') : v))
      .join(' ');
  }

  function play(header, data) {
    if (!ctx) ctx = new AudioContext();
    const pcm = new Int16Array(data);
    const buf = ctx.createBuffer(1, Math.max(1, pcm.length), header.sample_rate);
    const ch = buf.getChannelData(0);
    for (let i = 0; i < pcm.length; i++) ch[i] = pcm[i] / 32768;
    const src = ctx.createBufferSource();
    src.buffer = buf;
    src.connect(ctx.destination);
    src.start();
    document.body.dataset.played = String(Number(document.body.dataset.played || 0) + 1);
  }

  function onMessage(ev) {
    if (typeof ev.data !== 'string') {
      if (audioHeader) play(audioHeader, ev.data);
      audioHeader = null;
      return;
    }
    const m = JSON.parse(ev.data);
    if (m.type === 'ready') {
      setStatus('connected', 'ok');
      talk.disabled = false;
    } else if (m.type === 'partial') {
      partialEl.textContent = m.text;
    } else if (m.type === 'final') {
      partialEl.textContent = '';
      turn(m.utterance).querySelector('.said').textContent = m.text;
    } else if (m.type === 'reply') {
      const li = turn(m.utterance || 0);
      li.querySelector('.nlu').textContent =
        (m.intent || '') + ' ' + (m.confidence !== undefined ? m.confidence.toFixed(2) : '') +
        ' ' + slotsText(m.slots);
      li.querySelector('.reply').textContent = m.reply || '';
    } else if (m.type === 'audio') {
      audioHeader = m;
    } else if (m.type === 'error') {
      const li = el('li', 'error', m.error);
      turnsEl.appendChild(li);
    }
  }

  function connect() {
    const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/';
    ws = new WebSocket(url);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => ws.send(JSON.stringify({ config: { sample_rate: 16000 } }));
    ws.onmessage = onMessage;
    ws.onclose = () => {
      setStatus('disconnected', 'bad');
      talk.disabled = true;
      stop(false);
      setTimeout(connect, 1000);
    };
  }

  async function start() {
    if (!ctx) ctx = new AudioContext();
    await ctx.resume();
    await ctx.audioWorklet.addModule('mic-worklet.js');
    const stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true },
    });
    const source = ctx.createMediaStreamSource(stream);
    const node = new AudioWorkletNode(ctx, 'parley-mic');
    const sink = ctx.createGain(); // keeps the worklet pulled, silently
    sink.gain.value = 0;
    node.port.onmessage = (e) => {
      if (ws && ws.readyState === WebSocket.OPEN) ws.send(e.data);
    };
    source.connect(node).connect(sink).connect(ctx.destination);
    mic = { stream, source, node, sink };
    talk.textContent = 'Stop';
    talk.classList.add('on');
  }

  function stop(sendEnd) {
    if (!mic) return;
    mic.stream.getTracks().forEach((t) => t.stop());
    mic.source.disconnect();
    mic.node.disconnect();
    mic = null;
    talk.textContent = 'Start talking';
    talk.classList.remove('on');
    if (sendEnd && ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ end: 1 }));
  }

  talk.addEventListener('click', () => {
    if (mic) stop(true);
    else start().catch((e) => setStatus('microphone: ' + e.message, 'bad'));
  });
  connect();
})();
