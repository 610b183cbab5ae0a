// Shared by the server suites: starting and stopping a real `clover serve`, raw HTTP and SSE
// helpers, Prometheus parsing, and the demo model's checkable tasks.
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(HERE, '../../..');

// Relative paths in the environment are taken from the repository root, so that the suites give
// the same answer whatever directory `node --test` was started in.
function fromRoot(value, fallback) {
  return path.resolve(REPO_ROOT, value || fallback);
}
export const BINARY = fromRoot(process.env.CLOVER_BINARY, 'build/clover');
export const MODEL = fromRoot(process.env.CLOVER_MODEL, 'models/clover-demo');
export const ARTIFACTS_DIR = fromRoot(process.env.CLOVER_ARTIFACTS_DIR, 'build/artifacts');

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
export const REQUEST_TIMEOUT_MS = 30_000;

const LISTENING = /^clover serve: listening on (http:\/\/(\S+):(\d+))\s*$/m;

// Every server this process started, so that a crashing test file cannot leave one behind.
const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Polls `probe` until it returns a truthy value; throws naming `what` after `timeoutMs`.
export async function waitFor(what, probe, { timeoutMs = 5_000, intervalMs = 25 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await probe();
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(intervalMs);
  }
}

export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Starts `clover serve MODEL --port 0 ...args` and resolves once it printed its listening line.
// `env` entries are added to the environment; CLOVER_API_KEY is dropped unless given there, so
// the caller's shell cannot switch authentication on behind a test's back.
// `host: null` leaves --host out, to see the server's default.
export async function startServer({ args = [], env = {}, host = '127.0.0.1' } = {}) {
  const childEnv = { ...process.env };
  delete childEnv.CLOVER_API_KEY;
  Object.assign(childEnv, env);
  const argv = ['serve', MODEL, ...(host ? ['--host', host] : []), '--port', '0', ...args];
  const child = spawn(BINARY, argv, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
  child.stderr.setEncoding('utf8').on('data', (text) => {
    // Only the tail is kept: a load test logs a line per request.
    stderr = (stderr + text).slice(-20_000);
  });
  const listening = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.stdout.setEncoding('utf8').on('data', (text) => {
      stdout += text;
      const match = LISTENING.exec(stdout);
      if (match) resolve(match);
    });
    exited.then(({ code, signal }) =>
      reject(new Error(`clover serve exited (code ${code}, signal ${signal}) before listening:\n${stderr}`)));
  });
  let match;
  try {
    match = await withTimeout(listening, START_TIMEOUT_MS, `${BINARY} ${argv.join(' ')} to print its listening line`);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  const url = match[1];
  const server = {
    url,
    host: match[2],
    port: Number(match[3]),
    baseURL: `${url}/v1`,
    pid: child.pid,
    child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    // SIGTERM, then SIGKILL if it has not exited within STOP_TIMEOUT_MS. Resolves {code, signal}.
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      try {
        return await withTimeout(exited, STOP_TIMEOUT_MS, 'clover serve to exit after SIGTERM');
      } catch (err) {
        child.kill('SIGKILL');
        await exited;
        throw err;
      }
    },
  };
  return server;
}

export function openaiClient(server, apiKey = 'no-key') {
  return new OpenAI({ baseURL: server.baseURL, apiKey, maxRetries: 0, timeout: REQUEST_TIMEOUT_MS });
}

// One HTTP request through node:http (so a test controls connections and sees raw bytes).
// Resolves {status, headers, text, json}; `json` is undefined when the body is not JSON.
export function httpRequest(server, method, route, { body, headers = {}, agent, timeoutMs = REQUEST_TIMEOUT_MS } = {}) {
  const payload = body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: server.host, port: server.port, method, path: route, agent,
      headers: {
        ...(payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }),
        ...headers,
      },
    }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${route}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

// Splits an SSE body into its `data:` payloads and checks the framing OpenAI clients rely on:
// every event is `data: ...`, every payload but the last is JSON, the last is `[DONE]`.
// Returns the parsed chunks (without `[DONE]`).
export function parseSSE(text) {
  const events = text.split(/\r?\n\r?\n/);
  if (events.at(-1) !== '') throw new Error(`SSE body does not end with a blank line: ${JSON.stringify(text.slice(-80))}`);
  events.pop();
  const payloads = [];
  for (const event of events) {
    // Comment lines (`: ping`, sent while a block is being denoised) carry no data.
    const lines = event.split(/\r?\n/).filter((line) => !line.startsWith(':'));
    if (lines.length === 0) continue;
    if (!lines.every((line) => line.startsWith('data: '))) throw new Error(`malformed SSE event: ${JSON.stringify(event)}`);
    payloads.push(lines.map((line) => line.slice(6)).join('\n'));
  }
  if (payloads.at(-1) !== '[DONE]') throw new Error(`SSE stream does not end with [DONE]: ${JSON.stringify(payloads.at(-1))}`);
  return payloads.slice(0, -1).map((payload) => JSON.parse(payload));
}

// Folds chat.completion.chunk objects into {role, content, reasoning, toolCalls, finishReason,
// usage, contentChunks, chunks}; throws on a chunk that breaks the streaming shape.
export function foldChatChunks(chunks) {
  const out = { role: null, content: '', reasoning: '', toolCalls: [], finishReason: null, usage: null, contentChunks: 0, chunks: chunks.length };
  chunks.forEach((chunk, i) => {
    if (chunk.object !== 'chat.completion.chunk') throw new Error(`chunk ${i}: object ${chunk.object}`);
    if (chunk.usage) out.usage = chunk.usage;
    for (const choice of chunk.choices) {
      const delta = choice.delta || {};
      if (delta.role) out.role = delta.role;
      if (delta.content) { out.content += delta.content; out.contentChunks += 1; }
      if (delta.reasoning_content) out.reasoning += delta.reasoning_content;
      for (const call of delta.tool_calls || []) {
        const slot = (out.toolCalls[call.index] ||= { id: '', type: '', function: { name: '', arguments: '' } });
        if (call.id) slot.id = call.id;
        if (call.type) slot.type = call.type;
        if (call.function?.name) slot.function.name += call.function.name;
        if (call.function?.arguments) slot.function.arguments += call.function.arguments;
      }
      if (choice.finish_reason) {
        if (out.finishReason) throw new Error(`chunk ${i}: a second finish_reason ${choice.finish_reason}`);
        out.finishReason = choice.finish_reason;
      }
    }
  });
  return out;
}

// Prometheus text -> Map name -> [{labels, value}].
export function parseMetrics(text) {
  const metrics = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`malformed metrics line: ${JSON.stringify(line)}`);
    const labels = Object.fromEntries([...(match[2] || '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (!metrics.has(match[1])) metrics.set(match[1], []);
    metrics.get(match[1]).push({ labels, value: Number(match[3]) });
  }
  return metrics;
}

export async function fetchMetrics(server) {
  const res = await httpRequest(server, 'GET', '/metrics');
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${res.text}`);
  return parseMetrics(res.text);
}

// The single value of an unlabelled metric, or the sum over the samples matching `labels`.
export function metricValue(metrics, name, labels = {}) {
  const samples = metrics.get(name);
  if (!samples) throw new Error(`metric ${name} missing`);
  return samples
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

export function readRssBytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

export function modelConfig() {
  return JSON.parse(readFileSync(path.join(MODEL, 'config.json'), 'utf8'));
}

// The demo model's checkable tasks (models/clover-demo/eval_tasks.jsonl).
export function evalTasks() {
  return readFileSync(path.join(MODEL, 'eval_tasks.jsonl'), 'utf8')
    .split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

// Fixed-phrase tasks, one per distinct (question, thinking) pair: the ones the demo model answers
// exactly, so tests can assert the whole answer.
export function fixedTasks() {
  const seen = new Set();
  return evalTasks().filter((t) => t.task === 'fixed').filter((t) => {
    const key = JSON.stringify([t.messages, t.enable_thinking]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// The expected answer of a fixed-phrase question, from the eval file.
export function fixedAnswer(question) {
  const task = fixedTasks().find((t) => t.messages.length === 1 && t.messages[0].content === question);
  if (!task) throw new Error(`no fixed task asks ${JSON.stringify(question)} in ${MODEL}/eval_tasks.jsonl`);
  return task.answer;
}

export const FRANCE = { role: 'user', content: 'What is the capital of France?' };
export const FRANCE_ANSWER = fixedAnswer(FRANCE.content);

// What the server's tokenizer and chat template make of `messages`, through the CLI (same
// tokenizer code, separate process): the prompt text and its token ids.
export function renderPrompt(messages, { thinking = true, tools } = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'clover-js-'));
  try {
    const messagesFile = path.join(dir, 'messages.json');
    writeFileSync(messagesFile, JSON.stringify(messages));
    const args = ['template', MODEL, '--messages', messagesFile];
    if (tools) {
      const toolsFile = path.join(dir, 'tools.json');
      writeFileSync(toolsFile, JSON.stringify(tools));
      args.push('--tools', toolsFile);
    }
    if (!thinking) args.push('--no-think');
    return execFileSync(BINARY, args, { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function tokenize(text) {
  const out = execFileSync(BINARY, ['tokenize', MODEL, '--text', text, '--json'], { encoding: 'utf8' });
  return JSON.parse(out).ids;
}
