// The dashboard at / in a real browser: Debian's headless Chromium driven by playwright-core.
// Opens the page on a server with an API key, enters the key, checks the model card and the live
// metrics, chats (thinking off, then on), and saves a screenshot as an artifact.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { ARTIFACTS_DIR, FRANCE_ANSWER, fetchMetrics, fixedAnswer, metricValue, openaiClient, startServer } from './harness.js';

const CHROMIUM = process.env.CLOVER_CHROMIUM || '/usr/bin/chromium';
const KEY = 'dashboard-key';
const WAIT_MS = 30_000;

let server;
let browser;
let page;
const consoleErrors = [];

before(async () => {
  assert.ok(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM} (scripts/setup.sh installs Debian's chromium)`);
  server = await startServer({ args: ['--api-key', KEY] });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless=new'], timeout: WAIT_MS });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(WAIT_MS);
  page.on('console', (msg) => {
    // The page's first model-card request is refused until the key is entered: that 401 is expected.
    if (msg.type() === 'error' && !/401/.test(msg.text())) consoleErrors.push(msg.text());
  });
  page.on('pageerror', (err) => consoleErrors.push(String(err)));
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

// Sends `text` and waits for the assistant message it starts to be marked done.
async function chat(text, { thinking }) {
  const before = await page.locator('.msg.assistant').count();
  await page.setChecked('#thinking', thinking);
  await page.fill('#prompt', text);
  await page.click('#send');
  const message = page.locator('.msg.assistant').nth(before);
  await message.and(page.locator('[data-done="true"]')).waitFor();
  return message;
}

test('dashboard: model card, live metrics, streamed chat, screenshot', async () => {
  const res = await page.goto(server.url + '/');
  assert.equal(res.status(), 200);
  assert.equal(await page.title(), 'clover serve');

  // Without the key the model card says why it is empty; with it, the card fills in.
  await page.locator('#model-note:not([hidden])').waitFor();
  assert.match(await page.textContent('#model-note'), /401/);
  await page.fill('#api-key', KEY);
  await page.dispatchEvent('#api-key', 'change');
  await page.locator('#model-card[data-loaded="true"]').waitFor();
  const { data: [model] } = await openaiClient(server, KEY).models.list();
  const field = (name) => page.textContent(`#model-card dd[data-field="${name}"]`);
  assert.equal(await field('family'), model.meta.family);
  assert.equal(await field('quant'), model.meta.quant);
  assert.equal(await field('decoder'), model.meta.decoder);
  assert.equal(await field('block_size'), String(model.meta.block_size));
  assert.equal(await field('context'), model.meta.context.toLocaleString('en-US'));
  assert.match(await field('params'), /^\d+\.\d\d?[MB]$/);
  assert.equal(await page.textContent('#model-id'), model.id);
  assert.equal(await page.evaluate(() => localStorage.getItem('clover.apiKey')), KEY, 'the key is kept in localStorage');

  const answer = await chat('What is the capital of France?', { thinking: false });
  assert.equal(await answer.getAttribute('data-error'), null, await answer.textContent());
  const answerText = await answer.locator('.answer').textContent();
  assert.ok(answerText.includes('Paris'), `answer ${JSON.stringify(answerText)}`);
  assert.equal(answerText, FRANCE_ANSWER);
  assert.equal(await answer.locator('.reasoning-box').isHidden(), true, 'thinking off: no reasoning area');
  assert.match(await answer.locator('.stats').textContent(), /\d+ tokens .*finish: stop/);

  // The metrics card polls /metrics every 2 s; it must catch up with the chat.
  const metrics = await fetchMetrics(server);
  const served = metricValue(metrics, 'clover_requests_total', { endpoint: '/v1/chat/completions' });
  assert.equal(served, 1, 'one chat request so far');
  // A request is counted when it is routed, before its stream is written, so a poll during the chat
  // can show it with none of its tokens: wait for the tokens too.
  const count = (name) => metricValue(metrics, name).toLocaleString('en-US');
  await page.waitForFunction(([requests, tokens]) => {
    const card = (name) => document.querySelector(`#metrics-card dd[data-metric="${name}"]`).textContent;
    return card('requests') === requests && card('completion_tokens') === tokens;
  }, ['1', count('clover_completion_tokens_total')], { timeout: 5_000 });
  const shown = (name) => page.textContent(`#metrics-card dd[data-metric="${name}"]`);
  assert.equal(await shown('completion_tokens'), count('clover_completion_tokens_total'));
  assert.equal(await shown('prompt_tokens'), count('clover_prompt_tokens_total'));
  assert.equal(await shown('passes'), count('clover_passes_total'));
  assert.equal(await shown('tokens_per_pass'), metricValue(metrics, 'clover_tokens_per_pass').toFixed(2));
  assert.equal(await shown('slots'), `0 / ${count('clover_slots')}`);
  assert.match(await shown('ttft'), /^\d+ ms$/);

  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const shot = path.join(ARTIFACTS_DIR, 'dashboard.png');
  await page.screenshot({ path: shot, fullPage: true });
  assert.ok(existsSync(shot));

  // The demo model is trained on single questions: a new conversation for the next one.
  await page.click('#clear');
  assert.equal(await page.locator('#log .msg').count(), 0);
  const thought = await chat('Who are you?', { thinking: true });
  assert.equal(await thought.getAttribute('data-error'), null, await thought.textContent());
  assert.equal(await thought.locator('.answer').textContent(), fixedAnswer('Who are you?'));
  assert.equal(await thought.locator('.reasoning-box').isVisible(), true, 'thinking on: reasoning shown');
  assert.ok((await thought.locator('.reasoning').textContent()).trim().length > 0);

  // Text is shown as text: markup typed by the user (or produced by the model) is not parsed.
  const markup = await chat('<img src=x onerror="window.pwned=1"><b>bold</b>', { thinking: false });
  assert.equal(await page.locator('#log img, #log b').count(), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.ok(await markup.getAttribute('data-done'));

  // An error from the server is shown readably: a wrong key gives the 401's message.
  await page.fill('#api-key', 'wrong');
  await page.dispatchEvent('#api-key', 'change');
  const refused = await chat('Bye!', { thinking: false });
  assert.equal(await refused.getAttribute('data-error'), 'true');
  assert.match(await refused.locator('.error-text').textContent(), /^401: \S/);
  assert.deepEqual(consoleErrors.filter((e) => !/401/.test(e)), [], 'no script errors on the page');
});
