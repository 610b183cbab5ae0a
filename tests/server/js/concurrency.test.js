// Concurrent streaming clients, a client that disconnects mid-stream, and SIGTERM with requests
// in flight.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  fetchMetrics, fixedTasks, foldChatChunks, httpRequest, metricValue, openaiClient, startServer, waitFor,
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

// A request that keeps a slot busy for many passes: sampling at a high temperature rarely picks
// the end token, and max_tokens bounds it.
const LONG = {
  messages: [{ role: 'user', content: 'Tell me your name.' }],
  temperature: 2, top_p: 1, top_k: 0, min_p: 0, seed: 7, max_tokens: 3000, enable_thinking: true,
  clover: { decoder: 'ar' },
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

  test('a client that aborts mid-stream frees its slot within 1 s', async (t) => {
    const before = await fetchMetrics(server);
    const tokensBefore = metricValue(before, 'clover_completion_tokens_total');
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ ...LONG, stream: true }, { signal: controller.signal });
    let deltas = 0;
    await assert.rejects((async () => {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta?.reasoning_content || chunk.choices[0]?.delta?.content) deltas++;
        if (deltas === 3) {
          assert.equal(await activeSlots(), 1, 'the generation holds a slot while it streams');
          controller.abort();
        }
      }
    })(), (err) => err.name === 'AbortError' || err.constructor.name === 'APIUserAbortError');
    const abortedAt = Date.now();
    await waitFor('clover_active_slots back to 0', async () => (await activeSlots()) === 0, { timeoutMs: 1_000, intervalMs: 20 });
    const freedMs = Date.now() - abortedAt;
    // The cancelled generation stopped early: far fewer tokens than max_tokens were produced.
    const tokensAfter = metricValue(await fetchMetrics(server), 'clover_completion_tokens_total');
    assert.ok(tokensAfter - tokensBefore < LONG.max_tokens / 2,
      `${tokensAfter - tokensBefore} completion tokens counted for an aborted request of max_tokens ${LONG.max_tokens}`);
    t.diagnostic(`slot free ${freedMs} ms after abort`);
    // The server keeps serving.
    const [task] = fixedTasks();
    const res = await client.chat.completions.create({ messages: task.messages, temperature: 0, enable_thinking: task.enable_thinking });
    assert.equal(res.choices[0].message.content.trim(), task.answer);
  });

  test('a non-streaming client that disconnects also frees its slot', async () => {
    const pending = httpRequest(server, 'POST', '/v1/chat/completions', { body: LONG, timeoutMs: 300 });
    await assert.rejects(pending, /no answer within 300 ms/);
    await waitFor('clover_active_slots back to 0', async () => (await activeSlots()) === 0, { timeoutMs: 1_500, intervalMs: 20 });
  });
});

describe('shutdown', () => {
  test('SIGTERM with a stream in flight: the stream ends and the server exits 0', async () => {
    const victim = await startServer();
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
