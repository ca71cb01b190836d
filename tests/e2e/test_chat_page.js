// test_chat_page.js — the chat page (samples/web) in a real browser against a real server.
//
// Starts the server command given after `--` (parley run samples/pizza/server.yaml with
// port 0), reads the port from its "listening on ws://HOST:PORT/" line, and drives Debian's
// chromium (headless, through puppeteer-core from tests/web/node_modules) on the page the
// server serves: the page says it is ready with a user id; an order typed in gets a reply
// with its intent, confidence and slots rendered; after a reload the page resumes the same
// user (sessionStorage) and the conversation goes on where it was (the dialog's slots carry
// over); when the server goes away the page shows an error and that it reconnects, and
// when it comes back on the same port the page reconnects by itself and resumes again.
// Skips (77) without node's puppeteer-core (npm ci --prefix tests/web), chromium, or a
// websocket server in the build (the server command fails with PARLEY_ERR_NOT_BUILT).
//
// Usage: node test_chat_page.js SOURCE_ROOT -- SERVER_COMMAND... ("{tmp}": a fresh folder)
'use strict';

const { startServer: startAt, stop, browserTest } = require('./parley_server.js');

const { command, chromium, puppeteer, check, skip, finish } = browserTest('chat_page');

const startServer = (port) =>
  startAt(command, port, () => skip('this build has no websocket server'));

async function statusOf(page) {
  return page.$eval('#status', (e) => ({ text: e.textContent, cls: e.className }));
}

// Types a turn and waits until its answer is no longer pending; returns what the page shows.
async function say(page, text) {
  const before = await page.$$eval('.turn .bot', (b) => b.length);
  await page.type('#say', text);
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => {
    const bots = document.querySelectorAll('.turn .bot');
    return bots.length > n && !bots[n].classList.contains('pending');
  }, { timeout: 60000 }, before);
  return page.$$eval('.turn .bot', (bots, n) => {
    const b = bots[n];
    const slots = {};
    for (const s of b.querySelectorAll('.slot')) {
      slots[s.dataset.name] = s.textContent.slice(s.dataset.name.length + 2);
    }
    const q = (sel) => (b.querySelector(sel) || {}).textContent;
    return { cls: b.className, reply: b.firstChild && b.firstChild.textContent,
             intent: q('.intent'), confidence: q('.confidence'), slots };
  }, before);
}

async function main() {
  let { server, url, port } = await startServer();
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage();
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForSelector('#status.ready', { timeout: 30000 });
    const first = await statusOf(page);
    const user = await page.evaluate(() => sessionStorage.getItem('parley.user'));
    check(/^u-[0-9a-f]{32}$/.test(user || ''), 'a server-issued user id is stored: ' + user);
    check(first.text.includes(user), 'the status names the user: ' + first.text);
    check(!first.text.includes('resumed'), 'a first visit is not a resume: ' + first.text);

    const a = await say(page, 'i want a large pizza with mushrooms');
    check(a.cls === 'bot', 'the order got a reply, not an error: ' + JSON.stringify(a));
    check(/large/.test(a.reply || ''), 'the reply speaks of the order: ' + a.reply);
    check(a.intent === 'order_pizza', 'the intent is shown: ' + a.intent);
    check(/^\d+%$/.test(a.confidence || ''), 'the confidence is shown: ' + a.confidence);
    check(a.slots.size === 'large' && a.slots.topping === 'mushrooms',
      'the slots are shown: ' + JSON.stringify(a.slots));

    // A reload is a new websocket: the page presents its stored id and resumes.
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector('#status.ready', { timeout: 30000 });
    const again = await statusOf(page);
    check(again.text.includes('resumed') && again.text.includes(user),
      'after a reload the page resumes the same user: ' + again.text);
    const b = await say(page, '2 pizzas');
    check(b.cls === 'bot' && b.slots.size === 'large' && b.slots.count === '2',
      'the conversation goes on where it was: ' + JSON.stringify(b));

    // The server goes away: the page says so and that it tries again.
    await stop(server);
    await page.waitForSelector('#status.error', { timeout: 30000 });
    const gone = await statusOf(page);
    check(/reconnecting/.test(gone.text), 'the page says it reconnects: ' + gone.text);
    check(await page.$eval('#say', (e) => e.disabled), 'no typing while disconnected');

    // It comes back on the same port with the same store: the page reconnects by itself
    // and resumes the conversation.
    ({ server } = await startServer(port));
    await page.waitForSelector('#status.ready', { timeout: 60000 });
    const back = await statusOf(page);
    check(back.text.includes('resumed') && back.text.includes(user),
      'after the server restarts the page resumes the same user: ' + back.text);
    const c = await say(page, 'deliver to 5 main street');
    check(c.cls === 'bot' && c.slots.count === '2' && c.slots.address === '5 main street',
      'the conversation goes on after the reconnection: ' + JSON.stringify(c));
    check(pageErrors.length === 0, 'no script errors on the page: ' + pageErrors.join('; '));
  } finally {
    await browser.close();
    await stop(server);
  }
}

finish(main);
