// parley_server.js — what the browser tests share: starting `parley run` with a ws.server
// graph and finding where it listens, stopping it, and loading puppeteer-core.
//
// startServer(command, port, onNotBuilt): runs command[0] with command[1..] (a trailing
// `.port=0` replaced by `.port=PORT` when port is given), resolves with {server, url, port}
// once its stderr says "listening on ws://HOST:PORT/"; calls onNotBuilt() when the build
// has no websocket server (PARLEY_ERR_NOT_BUILT). stop(server): SIGTERM, resolves when gone.
// puppeteerOrNull(root): puppeteer-core from tests/web/node_modules, or null.
// browserTest(name): the frame of a test run as `node TEST SOURCE_ROOT -- SERVER_COMMAND...`
// ("{tmp}" in the command: a fresh folder): {root, tmp, command, chromium, puppeteer, check,
// skip, finish}; check(cond, what) counts a failure and goes on, skip(why) exits 77 (also
// done here without puppeteer-core or chromium), finish(main) runs the async main and exits
// 0, or 1 after a failure or a throw.
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
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

function browserTest(name) {
  const root = process.argv[2];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-' + name + '-'));
  const command = process.argv.slice(process.argv.indexOf('--') + 1)
    .map((a) => a.replaceAll('{tmp}', tmp));
  let failures = 0;
  const t = {
    root,
    tmp,
    command,
    chromium: process.env.PARLEY_CHROMIUM || '/usr/bin/chromium',
    check(cond, what) {
      if (!cond) {
        failures++;
        console.error('FAIL: ' + what);
      }
    },
    skip(why) {
      fs.rmSync(tmp, { recursive: true, force: true });
      console.log('SKIP: ' + why);
      process.exit(77);
    },
    finish(main) {
      main().then(() => {
        fs.rmSync(tmp, { recursive: true, force: true });
        console.log(name + ': ' + failures + ' failure(s)');
        process.exit(failures ? 1 : 0);
      }, (e) => {
        console.error('FAIL: ' + (e && e.stack || e));
        process.exit(1);
      });
    },
  };
  t.puppeteer = puppeteerOrNull(root);
  if (!t.puppeteer) t.skip('puppeteer-core is not installed (npm ci --prefix tests/web)');
  if (!fs.existsSync(t.chromium)) t.skip(t.chromium + ' is not there');
  return t;
}

module.exports = { startServer, stop, puppeteerOrNull, browserTest };
