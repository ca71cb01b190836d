// parley_server.js — what the browser tests share: starting `parley run` with a ws.server
// graph and finding where it listens, stopping it, and loading puppeteer-core.
//
// startServer(command, port, onNotBuilt): runs command[0] with command[1..] (a trailing
// `.port=0` replaced by `.port=PORT` when port is given), resolves with {server, url, port}
// once its stderr says "listening on ws://HOST:PORT/"; calls onNotBuilt() when the build
// has no websocket server (PARLEY_ERR_NOT_BUILT). stop(server): SIGTERM, resolves when gone.
// puppeteerOrNull(root): puppeteer-core from tests/web/node_modules, or null.
'use strict';

const { spawn } = require('child_process');
const path = require('path');

function startServer(command, port, onNotBuilt) {
  const args = command.slice(1).map((a) => (port ? a.replace(/\.port=0$/, '.port=' + port) : a));
  return new Promise((resolve, reject) => {
    const server = spawn(command[0], args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let seen = '';
    const timer = setTimeout(() => reject(new Error('no "listening on" line in 120 s:\n' + seen)),
      120000);
    server.stderr.on('data', (chunk) => {
      seen += chunk;
      const m = /listening on ws:\/\/([^/\s]+)\//.exec(seen);
      if (m && timer) {
        clearTimeout(timer);
        resolve({ server, url: 'http://' + m[1] + '/', port: m[1].split(':').pop() });
      }
    });
    server.on('exit', (code) => {
      if (/PARLEY_ERR_NOT_BUILT/.test(seen)) onNotBuilt();
      reject(new Error('the server exited (' + code + '):\n' + seen));
    });
  });
}

function stop(server) {
  if (server.exitCode !== null || server.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    server.on('exit', resolve);
    server.kill('SIGTERM');
  });
}

function puppeteerOrNull(root) {
  try {
    return require(require.resolve('puppeteer-core', { paths: [path.join(root, 'tests', 'web')] }));
  } catch (e) {
    return null;
  }
}

module.exports = { startServer, stop, puppeteerOrNull };
