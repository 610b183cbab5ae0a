// Concurrent streaming clients, a client that disconnects mid-stream, and SIGTERM with requests
// in flight.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  fetchMetrics, fixedTasks, foldChatChunks, httpRequest, metricValue, openaiClient, startServer, waitFor, withTimeout,
} from './harness.js';

const SLOTS = 4;
let server;
let client;

before(async () => {
  server = await startServer({ args: ['--parallel', String(SLOTS)] });
  client = openaiClient(server);
});
after(async () => {
  await server?.stop();
});

// A request that keeps a slot busy for many passes: only max_tokens ends it.
const LONG = {
  messages: [{ role: 'user', content: 'Tell me your name.' }],
  temperature: 0, ignore_eos: true, max_tokens: 3000, enable_thinking: true,
};

async function activeSlots() {
  return metricValue(await fetchMetrics(server), 'clover_active_slots');
}

describe('concurrency', () => {
  test('8 concurrent streaming clients all get complete, correct answers', async () => {
    const tasks = fixedTasks();
    assert.ok(tasks.length >= 8, `only ${tasks.length} distinct fixed tasks`);
    const chosen = tasks.slice(0, 8);
    let peak = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        peak = Math.max(peak, await activeSlots());
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const results = await Promise.all(chosen.map(async (task) => {
      const stream = await client.chat.completions.create({
        messages: task.messages, temperature: 0, enable_thinking: task.enable_thinking,
        stream: true, stream_options: { include_usage: true },
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      return foldChatChunks(chunks);
    }));
    polling = false;
    await poller;
    results.forEach((out, i) => {
      const task = chosen[i];
      const what = JSON.stringify([task.messages[0].content, task.enable_thinking]);
      assert.equal(out.role, 'assistant', what);
      assert.equal(out.finishReason, 'stop', what);
      assert.equal(out.content.trim(), task.answer, what);
      assert.equal(out.reasoning.trim().length > 0, task.enable_thinking, `${what}: reasoning ${JSON.stringify(out.reasoning)}`);
      assert.ok(out.usage && out.usage.completion_tokens > 0, what);
    });
    assert.ok(peak <= SLOTS, `active slots peaked at ${peak} with --parallel ${SLOTS}`);
    const metrics = await fetchMetrics(server);
    assert.equal(metricValue(metrics, 'clover_slots'), SLOTS);
    assert.equal(metricValue(metrics, 'clover_active_slots'), 0);
    assert.equal(metricValue(metrics, 'clover_queue_depth'), 0);
  });

  test('concurrent answers equal the answers given one at a time', async () => {
    const chosen = fixedTasks().slice(0, 4);
    const ask = (task) => client.chat.completions.create({
      messages: task.messages, temperature: 0, enable_thinking: task.enable_thinking,
    });
    const alone = [];
    for (const task of chosen) alone.push(await ask(task));
    const together = await Promise.all(chosen.map(ask));
    together.forEach((res, i) => {
      assert.equal(res.choices[0].message.content, alone[i].choices[0].message.content);
      assert.equal(res.choices[0].message.reasoning_content, alone[i].choices[0].message.reasoning_content);
      assert.equal(res.usage.completion_tokens, alone[i].usage.completion_tokens);
    });
  });

});

// Disconnects: each test has its own server, so that a generation that is not cancelled cannot
// hold a slot in the next test; the short grace period lets stop() end such a server quickly.
describe('disconnects', () => {
  // Sampled at temperature 2, the demo model writes text in nearly every block but confidences
  // stay low, so a block takes many passes: run to max_tokens this request takes tens of seconds.
  const SAMPLED = {
    messages: [{ role: 'user', content: 'Tell me your name.' }],
    temperature: 2, top_k: 0, seed: 3, ignore_eos: true, max_tokens: 3000,
  };
  // Greedy with ignore_eos: after the answer the model predicts end tokens, which have no text,
  // so many passes go by without anything to stream.
  const SILENT = { ...LONG, enable_thinking: false };

  let own;
  let ownClient;
  before(async () => {
    own = await startServer({ args: ['--shutdown-grace', '100'] });
    ownClient = openaiClient(own);
  });
  after(async () => {
    await own?.stop();
  });
  const slotsOf = async (srv) => metricValue(await fetchMetrics(srv), 'clover_active_slots');

  // Streams `params` with the openai client, aborts after the first text, and checks the slot is
  // free within 1 s and the generation stopped far short of max_tokens.
  async function abortMidStream(t, srv, params) {
    const tokensBefore = metricValue(await fetchMetrics(srv), 'clover_completion_tokens_total');
    const controller = new AbortController();
    const stream = await openaiClient(srv).chat.completions.create({ ...params, stream: true }, { signal: controller.signal });
    let finish = null;
    // The openai client ends the iteration quietly once its signal is aborted.
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      finish ??= choice?.finish_reason;
      if (choice?.delta?.reasoning_content || choice?.delta?.content) {
        assert.equal(await slotsOf(srv), 1, 'the generation holds a slot while it streams');
        controller.abort();
      }
    }
    assert.ok(controller.signal.aborted, 'the stream produced text');
    assert.equal(finish, null, 'aborted before the generation finished');
    const abortedAt = Date.now();
    await waitFor('clover_active_slots back to 0 after the client aborted', async () => (await slotsOf(srv)) === 0,
      { timeoutMs: 1_000, intervalMs: 20 });
    t.diagnostic(`slot free ${Date.now() - abortedAt} ms after abort`);
    const tokens = metricValue(await fetchMetrics(srv), 'clover_completion_tokens_total') - tokensBefore;
    assert.ok(tokens < params.max_tokens / 2, `${tokens} completion tokens counted for a request aborted early (max_tokens ${params.max_tokens})`);
  }

  test('a client that aborts mid-stream frees its slot within 1 s', async (t) => {
    await abortMidStream(t, own, SAMPLED);
    // The server keeps serving.
    const [task] = fixedTasks();
    const res = await ownClient.chat.completions.create({ messages: task.messages, temperature: 0, enable_thinking: task.enable_thinking });
    assert.equal(res.choices[0].message.content.trim(), task.answer);
  });

  test('an aborted stream is cancelled even while its passes produce no text', async (t) => {
    const srv = await startServer({ args: ['--shutdown-grace', '100'] });
    try {
      await abortMidStream(t, srv, SILENT);
    } finally {
      await srv.stop();
    }
  });

  test('a non-streaming client that disconnects frees its slot within 1 s', async () => {
    const srv = await startServer({ args: ['--shutdown-grace', '100'] });
    try {
      const pending = httpRequest(srv, 'POST', '/v1/chat/completions', { body: SAMPLED, timeoutMs: 500 });
      await waitFor('the request to take a slot', async () => (await slotsOf(srv)) === 1, { timeoutMs: 2_000 });
      await assert.rejects(pending, /no answer within 500 ms/);
      await waitFor('clover_active_slots back to 0 after the client hung up', async () => (await slotsOf(srv)) === 0,
        { timeoutMs: 1_000, intervalMs: 20 });
    } finally {
      await srv.stop();
    }
  });
});

describe('shutdown', () => {
  test('during the grace period new requests get 503 shutting_down and /health says stopping', async () => {
    const victim = await startServer({ args: ['--shutdown-grace', '1500'] });
    try {
      const busy = await fetch(`${victim.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...LONG, temperature: 2, top_k: 0, seed: 3, stream: true }),
      });
      const reader = busy.body.getReader();
      await reader.read();
      victim.child.kill('SIGTERM');
      await waitFor('/health to report stopping', async () => {
        const health = await httpRequest(victim, 'GET', '/health');
        return health.status === 503 && health.json?.status === 'stopping';
      }, { timeoutMs: 1_000, intervalMs: 20 });
      const late = await httpRequest(victim, 'POST', '/v1/chat/completions', { body: { messages: LONG.messages } });
      assert.equal(late.status, 503, late.text);
      assert.equal(late.json.error.code, 'shutting_down');
      assert.equal(late.json.error.type, 'server_error');
      const exit = await withTimeout(victim.exited, 5_000, 'the server to exit after the grace period');
      assert.deepEqual(exit, { code: 0, signal: null });
      await reader.cancel().catch(() => {});
    } finally {
      await victim.stop();
    }
  });

  test('SIGTERM with a stream in flight: the stream ends and the server exits 0', async () => {
    // A short grace period: the in-flight generation is cancelled well inside stop()'s timeout.
    const victim = await startServer({ args: ['--shutdown-grace', '200'] });
    try {
      const res = await fetch(`${victim.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...LONG, stream: true }),
      });
      assert.equal(res.status, 200);
      const reader = res.body.getReader();
      await reader.read();
      const exit = await victim.stop();
      assert.deepEqual(exit, { code: 0, signal: null }, 'exit status after SIGTERM');
      // The client sees the end of the stream (cleanly or as a reset), not a hang.
      await waitFor('the stream to end', async () => {
        try {
          for (;;) {
            const { done } = await reader.read();
            if (done) return true;
          }
        } catch {
          return true;
        }
      }, { timeoutMs: 5_000 });
      await assert.rejects(httpRequest(victim, 'GET', '/health', { timeoutMs: 1_000 }), /ECONNREFUSED|no answer/);
    } finally {
      await victim.stop();
    }
  });
});
