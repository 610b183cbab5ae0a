// The OpenAI-compatible API of `clover serve`, driven by the official `openai` client: models,
// chat (stream and not), completions, usage, stop strings, thinking, sampling, tool calls.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FRANCE, FRANCE_ANSWER, evalTasks, fetchMetrics, fixedAnswer, fixedTasks, foldChatChunks, httpRequest, metricValue,
  modelConfig, openaiClient, parseSSE, renderPrompt, startServer, tokenize,
} from './harness.js';

let server;
let client;
let modelId;

before(async () => {
  server = await startServer();
  client = openaiClient(server);
});
after(async () => {
  await server?.stop();
});

async function collectStream(params) {
  const stream = await client.chat.completions.create({ ...params, stream: true });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return foldChatChunks(chunks);
}

function assertUsage(usage, expectedPrompt) {
  assert.equal(usage.prompt_tokens, expectedPrompt, 'usage.prompt_tokens vs the chat template + tokenizer');
  assert.ok(usage.completion_tokens > 0, `completion_tokens ${usage.completion_tokens}`);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
}

describe('health and models', () => {
  test('GET /health is 200 {"status":"ok"} once listening', async () => {
    const res = await httpRequest(server, 'GET', '/health');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { status: 'ok' });
  });

  test('models.list describes the served model', async () => {
    const page = await client.models.list();
    assert.equal(page.data.length, 1);
    const model = page.data[0];
    modelId = model.id;
    assert.equal(typeof model.id, 'string');
    assert.ok(model.id.length > 0);
    assert.equal(model.object, 'model');
    assert.equal(model.owned_by, 'clover');
    assert.ok(Number.isInteger(model.created) && model.created > 1_600_000_000, `created ${model.created}`);
    // The card agrees with the model's own config.json.
    const config = modelConfig();
    const meta = model.meta;
    assert.equal(meta.family, config.model_type);
    assert.equal(meta.decoder, config.mask_token_id === undefined ? 'ar' : 'diffusion');
    assert.equal(meta.quant, { float32: 'F32', bfloat16: 'BF16', float16: 'F16' }[config.dtype]);
    assert.equal(meta.block_size, config.diffusion.block_size);
    assert.equal(meta.layers, config.num_hidden_layers);
    assert.equal(meta.experts, config.num_experts);
    assert.equal(meta.context, config.max_position_embeddings);
    assert.ok(Number.isInteger(meta.params) && meta.params > config.vocab_size * config.hidden_size, `params ${meta.params}`);
  });

  test('models.retrieve returns the same entry; an unknown id is 404', async () => {
    const { data } = await client.models.list();
    const one = await client.models.retrieve(data[0].id);
    assert.equal(one.id, data[0].id);
    assert.deepEqual(one.meta, data[0].meta);
    await assert.rejects(client.models.retrieve('no-such-model'), (err) => err.status === 404);
  });

  test('--model-alias names the model', async () => {
    const aliased = await startServer({ args: ['--model-alias', 'demo-alias'] });
    try {
      const { data } = await openaiClient(aliased).models.list();
      assert.equal(data[0].id, 'demo-alias');
    } finally {
      await aliased.stop();
    }
  });
});

describe('server basics', () => {
  test('binds loopback by default and logs one line per request', async () => {
    const plain = await startServer({ host: null });
    try {
      assert.equal(plain.host, '127.0.0.1');
      await httpRequest(plain, 'GET', '/health');
      await httpRequest(plain, 'POST', '/v1/chat/completions', { body: { messages: [FRANCE], enable_thinking: false } });
      await httpRequest(plain, 'GET', '/v1/nope');
      const log = plain.stderr();
      assert.match(log, /^GET \/health 200 /m);
      assert.match(log, /^POST \/v1\/chat\/completions 200 /m);
      assert.match(log, /^GET \/v1\/nope 404 /m);
    } finally {
      await plain.stop();
    }
  });

  test('/metrics accounts for a request exactly', async () => {
    const before = await fetchMetrics(server);
    const res = await client.chat.completions.create({ messages: [FRANCE], temperature: 0, enable_thinking: false });
    const after = await fetchMetrics(server);
    const delta = (name, labels) => metricValue(after, name, labels) - metricValue(before, name, labels);
    assert.equal(delta('clover_requests_total', { endpoint: '/v1/chat/completions', status: '200' }), 1);
    assert.equal(delta('clover_prompt_tokens_total'), res.usage.prompt_tokens);
    assert.equal(delta('clover_completion_tokens_total'), res.usage.completion_tokens);
    assert.equal(delta('clover_passes_total'), res.usage.clover.passes);
    assert.equal(delta('clover_blocks_total'), res.usage.clover.blocks);
    const tokens = metricValue(after, 'clover_completion_tokens_total');
    const passes = metricValue(after, 'clover_passes_total');
    assert.ok(Math.abs(metricValue(after, 'clover_tokens_per_pass') - tokens / passes) < 1e-6);
    for (const histogram of ['clover_time_to_first_token_seconds', 'clover_request_duration_seconds']) {
      assert.equal(delta(`${histogram}_count`), 1, histogram);
      assert.ok(delta(`${histogram}_sum`) > 0, histogram);
      const buckets = after.get(`${histogram}_bucket`);
      const counts = buckets.map((b) => b.value);
      assert.deepEqual(counts, [...counts].sort((a, b) => a - b), `${histogram}: cumulative buckets`);
      assert.equal(buckets.at(-1).labels.le, '+Inf');
      assert.equal(buckets.at(-1).value, metricValue(after, `${histogram}_count`));
    }
  });
});

describe('chat completions', () => {
  const noThink = { messages: [FRANCE], temperature: 0, enable_thinking: false };

  test('non-streaming: answer, shape and usage', async () => {
    const res = await client.chat.completions.create({ model: modelId, ...noThink });
    assert.equal(res.object, 'chat.completion');
    assert.match(res.id, /\S/);
    assert.equal(res.model, modelId);
    assert.equal(res.choices.length, 1);
    const [choice] = res.choices;
    assert.equal(choice.index, 0);
    assert.equal(choice.finish_reason, 'stop');
    assert.equal(choice.message.role, 'assistant');
    assert.equal(choice.message.content, FRANCE_ANSWER);
    assert.ok(!choice.message.reasoning_content, 'thinking off: no reasoning_content');
    assert.ok(!choice.message.tool_calls?.length, 'no tool calls');
    assertUsage(res.usage, tokenize(renderPrompt([FRANCE], { thinking: false })).length);
    const extra = res.usage.clover;
    assert.equal(extra.decoder, 'diffusion');
    assert.ok(extra.blocks >= 1 && extra.passes >= extra.blocks, JSON.stringify(extra));
    assert.ok(Math.abs(extra.tokens_per_pass - res.usage.completion_tokens / extra.passes) < 1e-3,
      `tokens_per_pass ${extra.tokens_per_pass} vs ${res.usage.completion_tokens}/${extra.passes}`);
  });

  test('streaming: role chunk first, one chunk per block, finish, usage, same text as non-streaming', async () => {
    const plain = await client.chat.completions.create(noThink);
    const stream = await client.chat.completions.create({
      ...noThink, stream: true, stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
    const folded = foldChatChunks(chunks);
    assert.equal(folded.content, plain.choices[0].message.content);
    assert.equal(folded.finishReason, 'stop');
    const usageChunk = chunks.at(-1);
    assert.deepEqual(usageChunk.choices, [], 'the usage chunk has no choices');
    assert.equal(usageChunk.usage.prompt_tokens, plain.usage.prompt_tokens);
    assert.equal(usageChunk.usage.completion_tokens, plain.usage.completion_tokens);
    assert.equal(usageChunk.usage.clover.blocks, plain.usage.clover.blocks);
    // Diffusion streams whole resolved blocks: never more text chunks than blocks.
    assert.ok(folded.contentChunks >= 1 && folded.contentChunks <= usageChunk.usage.clover.blocks,
      `${folded.contentChunks} content chunks for ${usageChunk.usage.clover.blocks} blocks`);
    const finishChunk = chunks.findLast((c) => c.choices.length > 0);
    assert.equal(finishChunk.choices[0].finish_reason, 'stop');
    assert.deepEqual(Object.keys(finishChunk.choices[0].delta).filter((k) => finishChunk.choices[0].delta[k]), []);
  });

  test('streaming without include_usage sends no usage chunk; raw SSE ends with [DONE]', async () => {
    const res = await httpRequest(server, 'POST', '/v1/chat/completions', { body: { ...noThink, stream: true } });
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type'], /^text\/event-stream/);
    const chunks = parseSSE(res.text);
    assert.ok(chunks.every((c) => !c.usage), 'no usage without stream_options.include_usage');
    assert.equal(foldChatChunks(chunks).content, FRANCE_ANSWER);
  });

  test('the AR decoder streams one chunk per token', async () => {
    const params = { ...noThink, clover: { decoder: 'ar' }, stream_options: { include_usage: true } };
    const folded = await collectStream(params);
    assert.equal(folded.usage.clover.decoder, 'ar');
    assert.equal(folded.finishReason, 'stop');
    assert.ok(folded.content.length > 0);
    // EOS produces no text, and a token may hold back an unfinished UTF-8 character.
    assert.ok(folded.contentChunks >= folded.usage.completion_tokens - 2,
      `${folded.contentChunks} content chunks for ${folded.usage.completion_tokens} tokens`);
    // The prefill's logits give the first token; each later token costs one pass.
    assert.equal(folded.usage.clover.passes, folded.usage.completion_tokens - 1, 'AR: one pass per token');
  });

  test('the speculative decoder streams the AR answer in fewer passes', async () => {
    const params = { messages: [{ role: 'user', content: 'What can you do?' }], temperature: 0,
      enable_thinking: false, stream_options: { include_usage: true } };
    const ar = await collectStream({ ...params, clover: { decoder: 'ar' } });
    for (const fused of [false, true]) {
      const spec = await collectStream({
        ...params, clover: { decoder: 'speculative', fused_commit: fused, draft_min: 2, draft_max: 8 },
      });
      assert.equal(spec.usage.clover.decoder, 'speculative');
      assert.equal(spec.content, ar.content, `fused ${fused}`);
      assert.equal(spec.usage.completion_tokens, ar.usage.completion_tokens);
      assert.equal(spec.finishReason, ar.finishReason);
      if (fused) {
        assert.ok(spec.usage.clover.passes < ar.usage.clover.passes,
          `fused speculative ${spec.usage.clover.passes} passes vs AR ${ar.usage.clover.passes}`);
      }
    }
  });

  test('block_size and threshold extension fields are accepted and change the decode', async () => {
    // An answer of 20-odd tokens: one 32-token block, several 8-token ones.
    const params = { messages: [{ role: 'user', content: 'What can you do?' }], temperature: 0, enable_thinking: false };
    const small = await client.chat.completions.create({ ...params, clover: { block_size: 8, threshold: 0.9 } });
    const big = await client.chat.completions.create({ ...params, clover: { block_size: 32, threshold: 0.9 } });
    assert.ok(small.usage.completion_tokens > 16, `${small.usage.completion_tokens} tokens`);
    assert.ok(small.usage.clover.blocks >= Math.ceil(small.usage.completion_tokens / 8), JSON.stringify(small.usage));
    assert.ok(small.usage.clover.blocks > big.usage.clover.blocks,
      `block 8 -> ${small.usage.clover.blocks} blocks, block 32 -> ${big.usage.clover.blocks}`);
  });

  test('thinking on: reasoning_content is split from content (top level and chat_template_kwargs)', async () => {
    const top = await client.chat.completions.create({ messages: [FRANCE], temperature: 0, enable_thinking: true });
    const kwargs = await client.chat.completions.create({
      messages: [FRANCE], temperature: 0, chat_template_kwargs: { enable_thinking: true },
    });
    const byDefault = await client.chat.completions.create({ messages: [FRANCE], temperature: 0 });
    for (const res of [top, kwargs, byDefault]) {
      const { message } = res.choices[0];
      assert.equal(typeof message.reasoning_content, 'string');
      assert.ok(message.reasoning_content.trim().length > 0, 'reasoning text');
      assert.ok(!message.reasoning_content.includes('<think>') && !message.reasoning_content.includes('</think>'));
      assert.ok(!message.content.includes('</think>'), `content ${JSON.stringify(message.content)}`);
      assert.equal(message.content, FRANCE_ANSWER);
    }
    assert.equal(top.usage.prompt_tokens, tokenize(renderPrompt([FRANCE], { thinking: true })).length);
    const off = await client.chat.completions.create({
      messages: [FRANCE], temperature: 0, chat_template_kwargs: { enable_thinking: false },
    });
    assert.ok(!off.choices[0].message.reasoning_content);
    assert.ok(off.usage.prompt_tokens > top.usage.prompt_tokens, 'the no-think template adds an empty think block');
  });

  test('thinking on, streaming: reasoning deltas come before content deltas', async () => {
    const stream = await client.chat.completions.create({
      messages: [FRANCE], temperature: 0, enable_thinking: true, stream: true,
    });
    const order = [];
    const chunks = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      const delta = chunk.choices[0]?.delta ?? {};
      if (delta.reasoning_content) order.push('r');
      if (delta.content) order.push('c');
    }
    const folded = foldChatChunks(chunks);
    assert.ok(folded.reasoning.trim().length > 0);
    assert.equal(folded.content, FRANCE_ANSWER);
    // r = a chunk with reasoning, c = with content; one chunk may hold both (a block can span </think>).
    assert.match(order.join(''), /^r+c+$/);
  });

  test('stop strings cut the answer before the stop string (string and list, stream and not)', async () => {
    const cut = (stop) => FRANCE_ANSWER.slice(0, FRANCE_ANSWER.indexOf(stop));
    const one = await client.chat.completions.create({ ...noThink, stop: ' is' });
    assert.equal(one.choices[0].message.content, cut(' is'));
    assert.equal(one.choices[0].finish_reason, 'stop');
    const list = await client.chat.completions.create({ ...noThink, stop: ['zzz', 'Paris'] });
    assert.equal(list.choices[0].message.content, cut('Paris'));
    assert.equal(list.choices[0].finish_reason, 'stop');
    assert.ok(list.usage.completion_tokens < one.usage.completion_tokens + 10);
    const streamed = await collectStream({ ...noThink, stop: ['Paris'] });
    assert.equal(streamed.content, cut('Paris'));
    assert.equal(streamed.finishReason, 'stop');
  });

  test('max_tokens and max_completion_tokens end with finish_reason "length"', async () => {
    for (const limit of [{ max_tokens: 3 }, { max_completion_tokens: 3 }]) {
      const res = await client.chat.completions.create({ ...noThink, ...limit });
      assert.equal(res.choices[0].finish_reason, 'length', JSON.stringify(limit));
      assert.equal(res.usage.completion_tokens, 3, JSON.stringify(limit));
      assert.ok(FRANCE_ANSWER.startsWith(res.choices[0].message.content), res.choices[0].message.content);
      assert.ok(res.choices[0].message.content.length < FRANCE_ANSWER.length);
    }
    const streamed = await collectStream({ ...noThink, max_tokens: 3, stream_options: { include_usage: true } });
    assert.equal(streamed.finishReason, 'length');
    assert.equal(streamed.usage.completion_tokens, 3);
  });

  test('a seed makes sampling reproducible', async () => {
    const params = { messages: [{ role: 'user', content: 'Who are you?' }], temperature: 1.2, top_p: 0.95, max_tokens: 48 };
    const a = await client.chat.completions.create({ ...params, seed: 1234 });
    const b = await client.chat.completions.create({ ...params, seed: 1234 });
    assert.equal(a.choices[0].message.content, b.choices[0].message.content);
    assert.equal(a.choices[0].message.reasoning_content, b.choices[0].message.reasoning_content);
  });

  test('penalty and sampling fields of the issue are accepted', async () => {
    const res = await client.chat.completions.create({
      ...noThink, top_p: 1, top_k: 40, min_p: 0, seed: 1, presence_penalty: 0, frequency_penalty: 0,
      repetition_penalty: 1, response_format: { type: 'text' }, n: 1, user: 'ignored', logit_bias: {},
    });
    assert.equal(res.choices[0].message.content, FRANCE_ANSWER);
  });

  test('messages with text content parts, a system message and history', async () => {
    const res = await client.chat.completions.create({
      temperature: 0, enable_thinking: false,
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'You are a helpful assistant.' }] },
        { role: 'user', content: 'Who are you?' },
        { role: 'assistant', content: fixedAnswer('Who are you?') },
        { role: 'user', content: [{ type: 'text', text: 'What is the capital' }, { type: 'text', text: ' of France?' }] },
      ],
    });
    assert.equal(res.choices[0].finish_reason, 'stop');
    assert.ok(res.choices[0].message.content.length > 0);
  });

  test('fixed-phrase tasks: exact answers with thinking on and off', async () => {
    for (const task of fixedTasks().slice(0, 6)) {
      const res = await client.chat.completions.create({
        messages: task.messages, temperature: 0, enable_thinking: task.enable_thinking,
      });
      assert.equal(res.choices[0].message.content.trim(), task.answer, JSON.stringify(task.messages));
    }
  });
});

describe('completions', () => {
  const task = fixedTasks().find((t) => !t.enable_thinking && t.messages[0].content === FRANCE.content);
  const base = { max_tokens: 64, temperature: 0 };

  test('prompt as a string, a one-string list and token ids give the same text and usage', async () => {
    const ids = tokenize(task.prompt);
    const asString = await client.completions.create({ ...base, prompt: task.prompt });
    assert.equal(asString.object, 'text_completion');
    assert.equal(asString.choices.length, 1);
    assert.equal(asString.choices[0].index, 0);
    assert.equal(asString.choices[0].text.trim(), task.answer);
    assert.equal(asString.choices[0].finish_reason, 'stop');
    assertUsage(asString.usage, ids.length);
    for (const prompt of [[task.prompt], ids]) {
      const res = await client.completions.create({ ...base, prompt });
      assert.equal(res.choices.length, 1);
      assert.equal(res.choices[0].text, asString.choices[0].text);
      assert.equal(res.usage.prompt_tokens, ids.length);
    }
  });

  test('a list of strings gives one choice per prompt, in order', async () => {
    const other = fixedTasks().find((t) => !t.enable_thinking && t.answer !== task.answer);
    const res = await client.completions.create({ ...base, prompt: [task.prompt, other.prompt] });
    assert.equal(res.choices.length, 2);
    assert.deepEqual(res.choices.map((c) => c.index), [0, 1]);
    assert.equal(res.choices[0].text.trim(), task.answer);
    assert.equal(res.choices[1].text.trim(), other.answer);
    assert.equal(res.usage.prompt_tokens, tokenize(task.prompt).length + tokenize(other.prompt).length);
  });

  test('streaming completions and stop strings', async () => {
    const stream = await client.completions.create({
      ...base, prompt: task.prompt, stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let finish = null;
    let usage = null;
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'text_completion');
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        text += choice.text ?? '';
        finish = choice.finish_reason ?? finish;
      }
    }
    assert.equal(text.trim(), task.answer);
    assert.equal(finish, 'stop');
    assert.equal(usage.prompt_tokens, tokenize(task.prompt).length);
    const stopped = await client.completions.create({ ...base, prompt: task.prompt, stop: 'France' });
    assert.equal(stopped.choices[0].text.trim(), task.answer.slice(0, task.answer.indexOf('France')).trim());
  });
});

describe('tool calls', () => {
  // The demo model learns tool calls from the task families `tool_call` (the answer is Qwen's
  // <tool_call> block) and `tool_reply` (a conversation ending in a tool result; the answer uses
  // it); a model shipped without such rows in eval_tasks.jsonl was not trained for them.
  const calls = evalTasks().filter((t) => t.task === 'tool_call');
  const replies = evalTasks().filter((t) => t.task === 'tool_reply');
  // The retrained demo model gets ~6% of held-out tool calls right (docs/training.md), so exact
  // calls cannot be asserted yet; CLOVER_TOOL_TESTS=1 runs them against a model that can.
  const skip = (calls.length === 0 || replies.length === 0) ? 'the shipped demo model has no tool tasks in eval_tasks.jsonl'
    : (process.env.CLOVER_TOOL_TESTS !== '1' && 'the demo model does not call tools reliably yet (issue 8); set CLOVER_TOOL_TESTS=1');

  // {name, arguments} of the expected call, from the answer's <tool_call> block.
  function expectedCall(answer) {
    const match = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/.exec(answer);
    assert.ok(match, `no <tool_call> in ${answer}`);
    return JSON.parse(match[1]);
  }

  function assertCall(call, expected, tools) {
    assert.equal(call.type, 'function');
    assert.match(call.id, /\S/);
    assert.ok(tools.some((t) => t.function.name === call.function.name), `unknown tool ${call.function.name}`);
    assert.equal(call.function.name, expected.name);
    assert.equal(typeof call.function.arguments, 'string', 'arguments are a JSON string');
    assert.deepEqual(JSON.parse(call.function.arguments), expected.arguments);
  }

  test('a question that needs a tool gets tool_calls and finish_reason "tool_calls"', { skip }, async () => {
    for (const task of calls.slice(0, 3)) {
      const res = await client.chat.completions.create({
        messages: task.messages, tools: task.tools, temperature: 0, enable_thinking: task.enable_thinking,
      });
      const choice = res.choices[0];
      assert.equal(choice.finish_reason, 'tool_calls', JSON.stringify(choice.message));
      assert.equal(choice.message.tool_calls.length, 1);
      assertCall(choice.message.tool_calls[0], expectedCall(task.answer), task.tools);
      assert.ok(!(choice.message.content ?? '').includes('<tool_call>'), 'tool-call markup leaked into content');
    }
  });

  test('round trip: tools -> tool_calls -> tool result -> final answer', { skip }, async () => {
    const task = replies[0];
    const [question, recordedCall, toolResult] = task.messages;
    const params = { tools: task.tools, temperature: 0, enable_thinking: task.enable_thinking };
    const first = await client.chat.completions.create({ ...params, messages: [question] });
    const choice = first.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls', JSON.stringify(choice.message));
    const [call] = choice.message.tool_calls;
    assertCall(call, recordedCall.tool_calls[0].function, task.tools);

    const final = await client.chat.completions.create({
      ...params,
      messages: [
        question,
        { role: 'assistant', content: choice.message.content, tool_calls: choice.message.tool_calls },
        { role: 'tool', tool_call_id: call.id, content: toolResult.content },
      ],
    });
    assert.equal(final.choices[0].finish_reason, 'stop');
    assert.ok(!final.choices[0].message.tool_calls?.length);
    assert.equal(final.choices[0].message.content.trim(), task.answer);
  });

  test('streamed tool calls arrive as delta.tool_calls with index, id, type and function', { skip }, async () => {
    const task = calls[0];
    const streamed = await collectStream({
      messages: task.messages, tools: task.tools, temperature: 0, enable_thinking: task.enable_thinking,
    });
    assert.equal(streamed.finishReason, 'tool_calls');
    assert.equal(streamed.toolCalls.length, 1);
    assertCall(streamed.toolCalls[0], expectedCall(task.answer), task.tools);
    assert.ok(!streamed.content.includes('<tool_call>'), 'tool-call markup leaked into content');
  });

  test('with tools offered, a question that needs none is answered normally', { skip }, async () => {
    const { tools } = calls[0];
    const res = await client.chat.completions.create({
      messages: [FRANCE], tools, temperature: 0, enable_thinking: false,
    });
    assert.equal(res.choices[0].finish_reason, 'stop');
    assert.ok(!res.choices[0].message.tool_calls?.length);
    assert.equal(res.usage.prompt_tokens, tokenize(renderPrompt([FRANCE], { thinking: false, tools })).length);
  });

  test('tool_choice "none" leaves the tools out of the prompt', { skip }, async () => {
    const task = calls[0];
    const res = await client.chat.completions.create({
      messages: task.messages, tools: task.tools, tool_choice: 'none', temperature: 0, enable_thinking: task.enable_thinking,
    });
    assert.equal(res.usage.prompt_tokens, tokenize(renderPrompt(task.messages, { thinking: task.enable_thinking })).length);
    assert.notEqual(res.choices[0].finish_reason, 'tool_calls');
  });
});
