// A bounded load test on loopback: 64 requests over 16 keep-alive connections, a mix of streaming
// and non-streaming chat and completions. Every response must be complete and well-formed, and
// the server's resident memory must come back near its level after a warm-up.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  delay, fetchMetrics, fixedTasks, foldChatChunks, httpRequest, metricValue, parseSSE, readRssBytes,
  startServer, waitFor,
} from './harness.js';

const SLOTS = 4;
const CONNECTIONS = 16;
const REQUESTS = 64;
// RSS may grow by allocator caching and lazily touched pages; a leak of per-request state over 64
// requests (KV caches, token buffers, response bodies) would exceed this.
const RSS_SLACK_BYTES = 30 * 1024 * 1024;
const RSS_SLACK_RATIO = 0.25;

let server;
before(async () => {
  server = await startServer({ args: ['--parallel', String(SLOTS)] });
});
after(async () => {
  await server?.stop();
});

// Request i of the run: kind (chat / chat-stream / completion / completion-stream) and task
// rotate, so every connection sees every kind.
function requestFor(i, tasks) {
  const task = tasks[i % tasks.length];
  const stream = i % 2 === 1;
  if (i % 4 < 2) {
    return {
      task, stream, route: '/v1/chat/completions',
      body: { messages: task.messages, enable_thinking: task.enable_thinking, temperature: 0, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) },
    };
  }
  return { task, stream, route: '/v1/completions', body: { prompt: task.prompt, temperature: 0, max_tokens: 512, stream } };
}

// Checks one response fully and returns its answer text.
function checkResponse({ task, stream, route }, res) {
  assert.equal(res.status, 200, `${route}: ${res.text.slice(0, 300)}`);
  const chat = route === '/v1/chat/completions';
  if (!stream) {
    assert.match(res.headers['content-type'], /^application\/json/);
    const body = res.json;
    assert.equal(body.object, chat ? 'chat.completion' : 'text_completion');
    assert.equal(body.choices.length, 1);
    assert.equal(body.choices[0].finish_reason, 'stop');
    assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + body.usage.completion_tokens);
    return chat ? body.choices[0].message.content : answerAfterThinking(body.choices[0].text);
  }
  assert.match(res.headers['content-type'], /^text\/event-stream/);
  const chunks = parseSSE(res.text);
  if (chat) {
    const folded = foldChatChunks(chunks);
    assert.equal(folded.role, 'assistant');
    assert.equal(folded.finishReason, 'stop');
    assert.ok(folded.usage?.completion_tokens > 0, 'usage chunk');
    assert.equal(folded.reasoning.trim().length > 0, task.enable_thinking);
    return folded.content;
  }
  const finishes = chunks.flatMap((c) => c.choices).map((c) => c.finish_reason).filter(Boolean);
  assert.deepEqual(finishes, ['stop']);
  return answerAfterThinking(chunks.flatMap((c) => c.choices).map((c) => c.text ?? '').join(''));
}

// A raw completion of a thinking prompt holds the reasoning, then `</think>`, then the answer.
function answerAfterThinking(text) {
  return text.split('</think>').at(-1);
}

// Successful requests to the two generation endpoints (GET /metrics counts itself too).
function generationRequests(metrics) {
  return ['/v1/chat/completions', '/v1/completions']
    .map((endpoint) => metricValue(metrics, 'clover_requests_total', { endpoint, status: '200' }))
    .reduce((a, b) => a + b);
}

async function runLoad(agent, tasks, count, connections) {
  let next = 0;
  const answers = [];
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const spec = requestFor(i, tasks);
      const res = await httpRequest(server, 'POST', spec.route, { body: spec.body, agent, timeoutMs: 60_000 });
      answers[i] = { spec, text: checkResponse(spec, res) };
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return answers;
}

test(`load: ${REQUESTS} requests over ${CONNECTIONS} connections, memory back near idle`, async (t) => {
  const tasks = fixedTasks();
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS, maxFreeSockets: CONNECTIONS });
  try {
    // Warm-up: one request per slot, so every slot's buffers exist before the idle level is read.
    await runLoad(agent, tasks, SLOTS, SLOTS);
    await delay(300);
    const idle = readRssBytes(server.pid);
    const requestsBefore = generationRequests(await fetchMetrics(server));

    const started = Date.now();
    const answers = await runLoad(agent, tasks, REQUESTS, CONNECTIONS);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(answers.filter(Boolean).length, REQUESTS);
    const wrong = answers.filter(({ spec, text }) => text.trim() !== spec.task.answer);
    assert.deepEqual(wrong.map(({ spec, text }) => ({ q: spec.task.messages[0].content, route: spec.route, stream: spec.stream, text })), [],
      'every answer is the fixed phrase');
    const sockets = Object.values(agent.sockets).flat().length + Object.values(agent.freeSockets).flat().length;
    assert.ok(sockets <= CONNECTIONS, `${sockets} sockets open`);

    const metrics = await fetchMetrics(server);
    assert.equal(generationRequests(metrics) - requestsBefore, REQUESTS, 'clover_requests_total counts each request once');
    assert.equal(metricValue(metrics, 'clover_active_slots'), 0);
    assert.equal(metricValue(metrics, 'clover_queue_depth'), 0);

    const bound = idle + Math.max(RSS_SLACK_BYTES, idle * RSS_SLACK_RATIO);
    let rss = readRssBytes(server.pid);
    // Freed memory can take a moment to be returned; wait a bounded time before judging.
    await waitFor(`RSS back under ${(bound / 2 ** 20).toFixed(1)} MiB`, () => {
      rss = readRssBytes(server.pid);
      return rss <= bound;
    }, { timeoutMs: 3_000, intervalMs: 100 }).catch((err) => {
      throw new Error(`${err.message}: idle ${(idle / 2 ** 20).toFixed(1)} MiB, after load ${(rss / 2 ** 20).toFixed(1)} MiB`);
    });
    t.diagnostic(`${REQUESTS} requests in ${seconds.toFixed(1)} s (${(REQUESTS / seconds).toFixed(1)} req/s); ` +
      `RSS idle ${(idle / 2 ** 20).toFixed(1)} MiB, after load ${(rss / 2 ** 20).toFixed(1)} MiB`);
  } finally {
    agent.destroy();
  }
});
