// Authentication and invalid requests: every error status of the issue, in OpenAI's error shape,
// and never a 500 for bad input.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { FRANCE, FRANCE_ANSWER, fixedAnswer, httpRequest, openaiClient, startServer } from './harness.js';

const KEY = 'test-key-1b7e';
const CTX = 256;
const MAX_BODY = 64 * 1024;
const bearer = { Authorization: `Bearer ${KEY}` };

let server;
before(async () => {
  server = await startServer({ args: ['--api-key', KEY, '--ctx', String(CTX), '--max-body', String(MAX_BODY)] });
});
after(async () => {
  await server?.stop();
});

function post(route, body, headers = bearer) {
  return httpRequest(server, 'POST', route, { body, headers });
}

// OpenAI's error object: {"error": {"message", "type", "param", "code"}}.
function assertError(res, status, type, what) {
  assert.equal(res.status, status, `${what}: status ${res.status}, body ${res.text}`);
  assert.ok(res.json?.error, `${what}: no error object in ${res.text}`);
  const { error } = res.json;
  assert.equal(typeof error.message, 'string', what);
  assert.ok(error.message.length > 0, what);
  assert.ok('param' in error && 'code' in error, `${what}: error lacks param/code: ${res.text}`);
  if (type) assert.equal(error.type, type, `${what}: ${res.text}`);
  return error;
}

describe('authentication', () => {
  test('the openai client with a wrong key gets 401 authentication_error', async () => {
    const wrong = openaiClient(server, 'wrong-key');
    await assert.rejects(wrong.models.list(), (err) => {
      assert.ok(err instanceof OpenAI.AuthenticationError, String(err));
      assert.equal(err.status, 401);
      assert.equal(err.type, 'authentication_error');
      assert.equal(err.code, 'invalid_api_key');
      return true;
    });
    await assert.rejects(wrong.chat.completions.create({ messages: [FRANCE] }), (err) => err.status === 401);
  });

  test('missing or malformed Authorization headers get 401 on every /v1 route', async () => {
    for (const headers of [{}, { Authorization: KEY }, { Authorization: `Basic ${KEY}` }, { Authorization: `Bearer ${KEY}x` }]) {
      assertError(await httpRequest(server, 'GET', '/v1/models', { headers }), 401, 'authentication_error', JSON.stringify(headers));
      assertError(await post('/v1/chat/completions', { messages: [FRANCE] }, headers), 401, 'authentication_error', 'chat');
      assertError(await post('/v1/completions', { prompt: 'hi' }, headers), 401, 'authentication_error', 'completions');
    }
  });

  test('the right key works; /health, /metrics and / need none', async () => {
    const res = await openaiClient(server, KEY).chat.completions.create({
      messages: [FRANCE], temperature: 0, enable_thinking: false,
    });
    assert.equal(res.choices[0].message.content, FRANCE_ANSWER);
    assert.equal((await httpRequest(server, 'GET', '/health')).status, 200);
    assert.equal((await httpRequest(server, 'GET', '/metrics')).status, 200);
    const page = await httpRequest(server, 'GET', '/');
    assert.equal(page.status, 200);
    assert.match(page.headers['content-type'], /^text\/html/);
    assert.match(page.text, /<html/i);
  });

  test('CLOVER_API_KEY is used when --api-key is absent', async () => {
    const envServer = await startServer({ env: { CLOVER_API_KEY: 'from-env' } });
    try {
      await assert.rejects(openaiClient(envServer, 'other').models.list(), (err) => err.status === 401);
      const { data } = await openaiClient(envServer, 'from-env').models.list();
      assert.equal(data.length, 1);
    } finally {
      await envServer.stop();
    }
  });
});

describe('400 invalid_request_error', () => {
  const chat = (fields) => ({ messages: [FRANCE], ...fields });
  const cases = [
    ['body is not JSON', '{"messages": [', '/v1/chat/completions'],
    ['body is a JSON array', [], '/v1/chat/completions'],
    ['messages missing', { temperature: 0 }],
    ['messages is a string', { messages: 'hello' }],
    ['messages is empty', { messages: [] }],
    ['a message without role', { messages: [{ content: 'hi' }] }],
    ['an unknown role', { messages: [{ role: 'wizard', content: 'hi' }] }],
    ['content is a number', { messages: [{ role: 'user', content: 42 }] }],
    ['temperature is a string', chat({ temperature: 'hot' })],
    ['top_p is a string', chat({ top_p: 'high' })],
    ['max_tokens is a string', chat({ max_tokens: 'ten' })],
    ['max_tokens is negative', chat({ max_tokens: -5 })],
    ['seed is a float string', chat({ seed: '1.5' })],
    ['stop is a number', chat({ stop: 5 })],
    ['stop list holds a number', chat({ stop: ['a', 7] })],
    ['stream is a string', chat({ stream: 'yes' })],
    ['enable_thinking is a string', chat({ enable_thinking: 'no' })],
    ['n = 2', chat({ n: 2 })],
    ['n = 0', chat({ n: 0 })],
    ['an image content part', {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }],
    }],
    ['an audio content part', { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }],
    ['response_format json_schema', chat({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } } })],
    ['response_format json_object', chat({ response_format: { type: 'json_object' } })],
    ['clover.decoder unknown', chat({ clover: { decoder: 'beam' } })],
    ['clover.block_size not 8/16/32', chat({ clover: { block_size: 7 } })],
    ['clover.threshold above 1', chat({ clover: { threshold: 1.5 } })],
    ['tools is not a list', chat({ tools: 'get_weather' })],
    ['tool_choice "required" (needs constrained decoding)', chat({ tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }], tool_choice: 'required' })],
    ['logprobs true', chat({ logprobs: true })],
    ['completions: a token id outside the vocabulary', { prompt: [1, 2, 99_999_999] }, '/v1/completions'],
    ['completions: a negative token id', { prompt: [1, -4] }, '/v1/completions'],
    ['completions: prompt missing', { max_tokens: 4 }, '/v1/completions'],
    ['completions: prompt is a number', { prompt: 12 }, '/v1/completions'],
    ['completions: prompt list of objects', { prompt: [{ text: 'hi' }] }, '/v1/completions'],
    ['completions: n = 3', { prompt: 'hi', n: 3 }, '/v1/completions'],
  ];
  for (const [what, body, route = '/v1/chat/completions'] of cases) {
    test(what, async () => {
      const error = assertError(await post(route, body), 400, 'invalid_request_error', what);
      assert.ok(!/internal/i.test(error.message), `${what}: ${error.message}`);
    });
  }

  test('the message names the offending parameter', async () => {
    const error = assertError(await post('/v1/chat/completions', chat({ temperature: 'hot' })), 400, 'invalid_request_error', 'temperature');
    assert.ok(error.param === 'temperature' || error.message.includes('temperature'), JSON.stringify(error));
    const n = assertError(await post('/v1/chat/completions', chat({ n: 2 })), 400, 'invalid_request_error', 'n');
    assert.ok(n.param === 'n' || /\bn\b/.test(n.message), JSON.stringify(n));
  });

  test('a prompt longer than --ctx is a 400 that says both numbers', async () => {
    const long = { role: 'user', content: 'count the apples and pears please '.repeat(60) };
    for (const [route, body] of [['/v1/chat/completions', { messages: [long] }], ['/v1/completions', { prompt: long.content }]]) {
      const error = assertError(await post(route, body), 400, 'invalid_request_error', route);
      assert.equal(error.code, 'context_length_exceeded', route);
      const numbers = (error.message.match(/\d+/g) ?? []).map(Number);
      assert.ok(numbers.includes(CTX), `${route}: message does not name the context ${CTX}: ${error.message}`);
      assert.ok(numbers.some((n) => n > CTX), `${route}: message does not name the prompt length: ${error.message}`);
    }
  });

  test('the openai client surfaces a 400 as BadRequestError', async () => {
    await assert.rejects(
      openaiClient(server, KEY).chat.completions.create({ messages: [FRANCE], n: 2 }),
      (err) => err instanceof OpenAI.BadRequestError && err.status === 400);
  });

  test('unknown fields are ignored, a missing or empty model means the served model', async () => {
    for (const extra of [{ some_future_field: { a: 1 } }, { model: '' }, {}]) {
      const res = await post('/v1/chat/completions', { messages: [FRANCE], temperature: 0, enable_thinking: false, ...extra });
      assert.equal(res.status, 200, `${JSON.stringify(extra)}: ${res.text}`);
      assert.equal(res.json.choices[0].message.content, FRANCE_ANSWER);
    }
  });
});

describe('404 and 413', () => {
  test('unknown routes are 404 with an error object', async () => {
    assertError(await httpRequest(server, 'GET', '/v1/nothing-here', { headers: bearer }), 404, null, 'GET /v1/nothing-here');
    assertError(await post('/v1/embeddings', { input: 'hi' }), 404, null, 'POST /v1/embeddings');
    assert.equal((await httpRequest(server, 'GET', '/no/such/page')).status, 404);
  });

  test('an unknown model is 404 model_not_found (chat, completions, models/{id})', async () => {
    for (const [route, body] of [['/v1/chat/completions', { model: 'gpt-4o', messages: [FRANCE] }], ['/v1/completions', { model: 'gpt-4o', prompt: 'hi' }]]) {
      const error = assertError(await post(route, body), 404, null, route);
      assert.equal(error.code, 'model_not_found', route);
      assert.ok(error.message.includes('gpt-4o'), error.message);
    }
    assertError(await httpRequest(server, 'GET', '/v1/models/gpt-4o', { headers: bearer }), 404, null, 'GET /v1/models/gpt-4o');
    await assert.rejects(
      openaiClient(server, KEY).chat.completions.create({ model: 'gpt-4o', messages: [FRANCE] }),
      (err) => err instanceof OpenAI.NotFoundError);
  });

  test('a body over --max-body is 413; one under it is read', async () => {
    const filler = 'x'.repeat(MAX_BODY);
    const over = await post('/v1/chat/completions', { messages: [FRANCE], padding: filler });
    assertError(over, 413, null, 'body over --max-body');
    // Under the limit, a long prompt is read and then refused for the context, not for its size.
    const under = await post('/v1/chat/completions', { messages: [{ role: 'user', content: 'apple '.repeat(2000) }] });
    assertError(under, 400, 'invalid_request_error', 'body under --max-body');
  });
});

describe('503 queue full', () => {
  let small;
  before(async () => {
    small = await startServer({ args: ['--parallel', '1', '--queue', '1'] });
  });
  after(async () => {
    await small?.stop();
  });

  test('with --parallel 1 --queue 1 a flood gets 503 queue_full; every other request completes', async () => {
    const body = { messages: [{ role: 'user', content: 'What can you do?' }], temperature: 0, enable_thinking: true };
    let rejected = 0;
    // Each round sends more requests at once than one slot plus one queue place can take; a slot
    // finishing between two arrivals only lets one more in, so a round gets a 503 unless the server
    // answers faster than it accepts connections. Bounded to three rounds.
    for (let round = 0; round < 3 && rejected === 0; round++) {
      const results = await Promise.all(Array.from({ length: 12 }, () =>
        httpRequest(small, 'POST', '/v1/chat/completions', { body })));
      for (const res of results) {
        if (res.status === 503) {
          const error = assertError(res, 503, 'server_error', 'queue full');
          assert.equal(error.code, 'queue_full');
          rejected++;
        } else {
          assert.equal(res.status, 200, res.text);
          assert.equal(res.json.choices[0].message.content, fixedAnswer('What can you do?'));
        }
      }
    }
    assert.ok(rejected > 0, 'no request was refused with 503 in three floods of 12');
    const after503 = await httpRequest(small, 'POST', '/v1/chat/completions', { body });
    assert.equal(after503.status, 200, 'the server serves again once the flood is over');
  });
});
