// chat.js — the parley chat page's talking: one websocket to the server that served the page
// (ws:// or wss:// as the page came over http or https), typed turns out, replies in.
//
// Protocol version 1 (docs/websocket.md, "The protocol (version 1)"): the server's first
// message is {"type":"ready","user":ID}; the page keeps that id in sessionStorage and, when the
// connection drops, connects again and sends {"config":{"user":ID}} so the server resumes
// the same conversation (knowing the id is the right to it). A turn goes out as
// {"text":...,"id":N} and gets exactly one {"type":"reply"} or {"type":"error"} with that id.
// No framework, nothing from another host: this file is the whole client.
'use strict';

(function () {
  const USER_KEY = 'parley.user';
  const RETRY_MS = [500, 1000, 2000, 4000, 8000];

  const statusEl = document.getElementById('status');
  const transcript = document.getElementById('transcript');
  const form = document.getElementById('composer');
  const input = document.getElementById('say');
  const sendButton = document.getElementById('send');

  let ws = null;
  let ready = false;
  let resuming = null; // the stored id we asked to resume, until the server settles it
  let fresh = null; // the id the server gave this connection in its first ready
  let nextId = 1;
  let retries = 0;
  const pending = new Map(); // turn id -> the element its answer goes into

  function setStatus(text, kind) {
    statusEl.textContent = text;
    statusEl.className = 'status ' + kind;
  }

  function setReady(on) {
    ready = on;
    input.disabled = !on;
    sendButton.disabled = !on;
    if (on) input.focus();
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function scrollDown() {
    window.scrollTo(0, document.body.scrollHeight);
  }

  function systemLine(text) {
    const li = el('li', 'turn');
    li.appendChild(el('div', 'system', text));
    transcript.appendChild(li);
    scrollDown();
  }

  // A slot's value as text: lists (toppings) are joined.
  function slotText(v) {
    return Array.isArray(v) ? v.join(', ') : String(v);
  }

  function showReply(bot, msg) {
    bot.className = 'bot';
    bot.textContent = msg.reply || '';
    const nlu = el('div', 'nlu');
    if (msg.intent) nlu.appendChild(el('span', 'intent', msg.intent));
    if (typeof msg.confidence === 'number') {
      nlu.appendChild(el('span', 'confidence', (msg.confidence * 100).toFixed(0) + '%'));
    }
    const slots = el('span', 'slots');
    for (const [name, value] of Object.entries(msg.slots || {})) {
      const s = el('span', 'slot', name + ': ' + slotText(value));
      s.dataset.name = name;
      slots.appendChild(s);
    }
    nlu.appendChild(slots);
    bot.appendChild(nlu);
  }

  function onMessage(msg) {
    if (msg.type === 'ready') {
      if (resuming && msg.user !== resuming) { // before our config is answered
        fresh = msg.user;
        return;
      }
      resuming = null;
      sessionStorage.setItem(USER_KEY, msg.user);
      retries = 0;
      setStatus('ready' + (msg.resumed ? ' (resumed)' : '') + ' · ' + msg.user, 'ready');
      setReady(true);
    } else if (msg.type === 'reply' || msg.type === 'error') {
      const bot = pending.get(msg.id);
      if (bot === undefined) {
        if (msg.type === 'error') systemLine(msg.error);
        if (resuming) { // the server would not resume: the fresh id of this connection stands
          resuming = null;
          sessionStorage.setItem(USER_KEY, fresh);
          setStatus('ready (a new conversation) · ' + fresh, 'ready');
          setReady(true);
        }
        return;
      }
      pending.delete(msg.id);
      if (msg.type === 'reply') showReply(bot, msg);
      else {
        bot.className = 'bot failed';
        bot.textContent = msg.error;
      }
      scrollDown();
    }
  }

  function connect() {
    const scheme = location.protocol === 'https:' ? 'wss://' : 'ws://';
    setStatus(retries ? 'reconnecting…' : 'connecting…', 'connecting');
    ws = new WebSocket(scheme + location.host + '/');
    ws.onopen = function () {
      resuming = sessionStorage.getItem(USER_KEY);
      if (resuming) ws.send(JSON.stringify({ config: { user: resuming } }));
    };
    ws.onmessage = function (ev) {
      if (typeof ev.data !== 'string') return; // audio comes with the voice issue
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch (e) {
        systemLine('the server sent something that is not JSON');
        return;
      }
      onMessage(msg);
    };
    ws.onclose = function (ev) {
      setReady(false);
      for (const bot of pending.values()) {
        bot.className = 'bot failed';
        bot.textContent = 'no answer: the connection was lost';
      }
      pending.clear();
      const delay = RETRY_MS[Math.min(retries, RETRY_MS.length - 1)];
      retries++;
      const why = ev.reason ? ev.reason + ' (' + ev.code + ')' : 'connection lost';
      setStatus('error: ' + why + ' · reconnecting in ' + (delay / 1000) + ' s', 'error');
      setTimeout(connect, delay);
    };
  }

  form.addEventListener('submit', function (ev) {
    ev.preventDefault();
    const text = input.value.trim();
    if (!text || !ready) return;
    const id = nextId++;
    const li = el('li', 'turn');
    li.appendChild(el('div', 'you', text));
    const bot = el('div', 'bot pending', '…');
    li.appendChild(bot);
    transcript.appendChild(li);
    pending.set(id, bot);
    ws.send(JSON.stringify({ text: text, id: id }));
    input.value = '';
    scrollDown();
  });

  connect();
})();
