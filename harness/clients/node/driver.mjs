// gateway-conformance's Node client drivers: reads {client, jobs} as JSON on stdin, drives each job's
// scenario through that client library, prints {versions, observations} as JSON on stdout.
// Each observation says what the LIBRARY returned or raised; the harness judges it (harness/clients/judge.py).
import { readFileSync } from "node:fs";

const TIMEOUT_MS = 20000;

function version(name) {
  try {
    return JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url))).version;
  } catch {
    return "not installed";
  }
}

const argsOf = (raw) => {
  if (typeof raw !== "string") return raw;
  try { return JSON.parse(raw); } catch { return raw; }
};

function zodObject(z, fields) {
  const shape = {};
  for (const [name, kind] of Object.entries(fields)) {
    shape[name] = kind === "string" ? z.string() : kind === "integer" ? z.number().int()
      : kind === "number" ? z.number() : z.boolean();
  }
  return z.object(shape);
}

function objectSchema(fields) {
  const types = { string: "string", integer: "integer", number: "number", boolean: "boolean" };
  const properties = {};
  for (const [name, kind] of Object.entries(fields)) properties[name] = { type: types[kind] };
  return { type: "object", properties, required: Object.keys(fields), additionalProperties: false };
}

function errorOf(e, kind, status) {
  const cls = e?.constructor?.name ?? typeof e;
  return { kind, class: cls, status: Number.isInteger(status) ? status : null, message: String(e?.message ?? e).slice(0, 500) };
}

function kindOfStatus(status) {
  return status === 429 ? "rate_limit" : status === 401 ? "authentication" : "api_error";
}

// ---------------------------------------------------------------------------------------------- openai-node
async function openaiNode(job) {
  const { default: OpenAI } = await import("openai");
  const client = new OpenAI({ baseURL: job.base_url, apiKey: job.key, maxRetries: job.retries, timeout: TIMEOUT_MS, defaultHeaders: job.headers });
  const messages = [{ role: "user", content: job.prompt }];
  const tools = job.tools.map((t) => ({ type: "function", function: t }));
  const calls = (m) => (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: argsOf(c.function.arguments) }));
  switch (job.scenario) {
    case "text": {
      const { data, response } = await client.chat.completions.create({ model: job.model, messages }).withResponse();
      return { text: data.choices[0].message.content, notes: [`withResponse: HTTP ${response.status}`] };
    }
    case "stream-text": {
      const stream = client.chat.completions.stream({ model: job.model, messages });
      for await (const _ of stream);
      const final = await stream.finalChatCompletion();
      return { text: final.choices[0].message.content, notes: ["chat.completions.stream"] };
    }
    case "tool-round-trip": {
      const first = await client.chat.completions.create({ model: job.model, messages, tools });
      const msg = first.choices[0].message;
      const convo = [...messages, msg, ...(msg.tool_calls ?? []).map((c) => ({ role: "tool", tool_call_id: c.id, content: job.tool_result }))];
      const second = await client.chat.completions.create({ model: job.model, messages: convo, tools });
      return { text: second.choices[0].message.content, tool_calls: calls(msg) };
    }
    case "parallel-tools-stream": {
      const stream = client.chat.completions.stream({ model: job.model, messages, tools });
      for await (const _ of stream);
      const final = await stream.finalChatCompletion();
      return { tool_calls: calls(final.choices[0].message) };
    }
    case "structured-output": {
      const { z } = await import("zod");
      const { zodResponseFormat } = await import("openai/helpers/zod");
      const format = zodResponseFormat(zodObject(z, job.object.fields), job.object.name);
      const done = await client.chat.completions.parse({ model: job.model, messages, response_format: format });
      return { parsed: done.choices[0].message.parsed };
    }
    case "stream-usage": {
      const stream = await client.chat.completions.create({ model: job.model, messages, stream: true, stream_options: { include_usage: true } });
      let text = "", usage = null;
      for await (const chunk of stream) {
        text += chunk.choices?.[0]?.delta?.content ?? "";
        if (chunk.usage) usage = { prompt_tokens: chunk.usage.prompt_tokens, completion_tokens: chunk.usage.completion_tokens, total_tokens: chunk.usage.total_tokens };
      }
      return { text, usage };
    }
    default: {
      if (job.stream) {
        const stream = await client.chat.completions.create({ model: job.model, messages, stream: true });
        let text = "";
        for await (const chunk of stream) text += chunk.choices?.[0]?.delta?.content ?? "";
        return { text };
      }
      const done = await client.chat.completions.create({ model: job.model, messages });
      return { text: done.choices[0].message.content };
    }
  }
}

async function classifyOpenai(e) {
  const { default: OpenAI } = await import("openai");
  if (e instanceof OpenAI.RateLimitError) return errorOf(e, "rate_limit", e.status);
  if (e instanceof OpenAI.AuthenticationError) return errorOf(e, "authentication", e.status);
  if (e instanceof OpenAI.APIConnectionError) return errorOf(e, "connection", null);
  if (e instanceof OpenAI.APIError) return errorOf(e, "api_error", e.status);
  return errorOf(e, "other", null);
}

// ------------------------------------------------------------------------------------- openai-node responses
// The same library through client.responses: create (withResponse), the stream helper's final response, parse with
// zodTextFormat, and the raw event iterator.
async function openaiNodeResponses(job) {
  const { default: OpenAI } = await import("openai");
  const client = new OpenAI({ baseURL: job.base_url, apiKey: job.key, maxRetries: job.retries, timeout: TIMEOUT_MS, defaultHeaders: job.headers });
  const tools = job.tools.map((t) => ({ type: "function", name: t.name, description: t.description, parameters: t.parameters }));
  const calls = (r) => r.output.filter((i) => i.type === "function_call").map((i) => ({ id: i.call_id, name: i.name, arguments: argsOf(i.arguments) }));
  const usage = (r) => r.usage ? { prompt_tokens: r.usage.input_tokens, completion_tokens: r.usage.output_tokens, total_tokens: r.usage.total_tokens } : null;
  const finalOf = async (extra) => {
    const stream = client.responses.stream({ model: job.model, input: job.prompt, ...extra });
    for await (const _ of stream);
    return await stream.finalResponse();
  };
  switch (job.scenario) {
    case "text": {
      const { data, response } = await client.responses.create({ model: job.model, input: job.prompt }).withResponse();
      return { text: data.output_text, usage: usage(data), notes: [`withResponse: HTTP ${response.status}`] };
    }
    case "stream-text":
    case "stream-usage": {
      const final = await finalOf({});
      return { text: final.output_text, usage: usage(final), notes: ["responses.stream"] };
    }
    case "tool-round-trip": {
      const first = await client.responses.create({ model: job.model, input: job.prompt, tools });
      const history = [{ role: "user", content: job.prompt }];
      for (const i of first.output.filter((i) => i.type === "function_call")) {
        history.push({ type: "function_call", call_id: i.call_id, name: i.name, arguments: i.arguments });
        history.push({ type: "function_call_output", call_id: i.call_id, output: job.tool_result });
      }
      const second = await client.responses.create({ model: job.model, input: history, tools });
      return { text: second.output_text, tool_calls: calls(first) };
    }
    case "parallel-tools-stream": {
      const final = await finalOf({ tools });
      return { tool_calls: calls(final) };
    }
    case "structured-output": {
      const { z } = await import("zod");
      const { zodTextFormat } = await import("openai/helpers/zod");
      const format = zodTextFormat(zodObject(z, job.object.fields), job.object.name);
      const done = await client.responses.parse({ model: job.model, input: job.prompt, text: { format } });
      return { parsed: done.output_parsed };
    }
    default: {
      if (job.stream) {
        const stream = await client.responses.create({ model: job.model, input: job.prompt, stream: true });
        let text = "";
        for await (const event of stream) {
          if (event.type === "response.output_text.delta") text += event.delta;
          else if (event.type === "error" || event.type === "response.failed") throw new Error(`the stream failed: ${JSON.stringify(event).slice(0, 300)}`);
        }
        return { text };
      }
      const done = await client.responses.create({ model: job.model, input: job.prompt });
      return { text: done.output_text, usage: usage(done) };
    }
  }
}

// ---------------------------------------------------------------------------------------------- openai-agents-node
// The Agents SDK for JS on its default model path, the Responses model (OpenAIResponsesModel), on an OpenAI
// client pointed at the gateway: run() and run(…, {stream: true}), a function tool its loop runs, outputType for
// structured output. Tracing is off: it would export to OpenAI. It raises the openai SDK's errors through.
async function openaiAgentsNode(job) {
  const { default: OpenAI } = await import("openai");
  const agents = await import("@openai/agents");
  agents.setTracingDisabled(true);
  const client = new OpenAI({ baseURL: job.base_url, apiKey: job.key, maxRetries: job.retries, timeout: TIMEOUT_MS, defaultHeaders: job.headers });
  const model = new agents.OpenAIResponsesModel(client, job.model);
  const tools = () => job.tools.map((t) => agents.tool({
    name: t.name, description: t.description, parameters: t.parameters, strict: true, execute: async () => job.tool_result,
  }));
  const agent = (extra) => new agents.Agent({ name: "gc-client", instructions: null, model, ...extra });
  const calls = (result) => result.newItems.filter((i) => i.type === "tool_call_item" && i.rawItem.type === "function_call")
    .map((i) => ({ id: i.rawItem.callId, name: i.rawItem.name, arguments: argsOf(i.rawItem.arguments) }));
  const usage = (result) => {
    const u = result.runContext.usage;
    return { prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.totalTokens };
  };
  const streamed = async (a, maxTurns) => {
    const result = await agents.run(a, job.prompt, { stream: true, maxTurns });
    for await (const _ of result);
    await result.completed;
    if (result.error) throw result.error;
    return result;
  };
  switch (job.scenario) {
    case "tool-round-trip": {
      const result = await agents.run(agent({ tools: tools() }), job.prompt, { maxTurns: 3 });
      return { text: String(result.finalOutput), tool_calls: calls(result) };
    }
    case "parallel-tools-stream": {
      // The tools' results end the run: the scenario is the one streamed turn with two calls.
      const result = await streamed(agent({ tools: tools(), toolUseBehavior: "stop_on_first_tool" }), 2);
      return { tool_calls: calls(result) };
    }
    case "structured-output": {
      const { z } = await import("zod");
      const result = await agents.run(agent({ outputType: zodObject(z, job.object.fields) }), job.prompt, { maxTurns: 1 });
      return { parsed: result.finalOutput };
    }
    default: {
      if (job.stream) {
        const result = await streamed(agent({}), 1);
        return { text: String(result.finalOutput), usage: usage(result), notes: ["run(…, {stream: true})"] };
      }
      const result = await agents.run(agent({}), job.prompt, { maxTurns: 1 });
      return { text: String(result.finalOutput), notes: ["run"] };
    }
  }
}

// ---------------------------------------------------------------------------------------------- ai-sdk
async function aiSdk(job) {
  const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
  // supportsStructuredOutputs: the gateway takes response_format json_schema (EZAT refuses json_object);
  // includeUsage: stream_options.include_usage on every stream, so a stream's usage is known.
  const provider = createOpenAICompatible({ name: "gateway", baseURL: job.base_url, apiKey: job.key, headers: job.headers, supportsStructuredOutputs: true, includeUsage: true });
  return aiSdkScenarios(job, provider.chatModel(job.model), []);
}

async function aiSdkScenarios(job, model, notes) {
  const ai = await import("ai");
  const base = { model, prompt: job.prompt, maxRetries: job.retries, abortSignal: AbortSignal.timeout(TIMEOUT_MS) };
  const toolSet = (execute) => Object.fromEntries(job.tools.map((t) => [t.name, ai.tool({
    description: t.description, inputSchema: ai.jsonSchema(t.parameters), ...(execute ? { execute: async () => argsOf(job.tool_result) } : {}),
  })]));
  const calls = (list) => (list ?? []).map((c) => ({ id: c.toolCallId, name: c.toolName, arguments: argsOf(c.input ?? c.args) }));
  // streamText reports a failure as an `error` part of its stream, not by throwing: an application sees it there.
  const drain = async (result) => {
    for await (const part of result.fullStream) if (part.type === "error") throw part.error;
  };
  switch (job.scenario) {
    case "tool-round-trip": {
      // The SDK's own loop: it runs the tool and sends the result back (stopWhen: two steps).
      const r = await ai.generateText({ ...base, tools: toolSet(true), stopWhen: ai.stepCountIs(2) });
      return { text: r.text, tool_calls: calls(r.steps[0]?.toolCalls) };
    }
    case "parallel-tools-stream": {
      const r = ai.streamText({ ...base, tools: toolSet(false) });
      await drain(r);
      return { tool_calls: calls(await r.toolCalls) };
    }
    case "structured-output": {
      const schema = ai.jsonSchema(objectSchema(job.object.fields));
      const r = await ai.generateObject({ ...base, schema, schemaName: job.object.name });
      return { parsed: r.object, notes: [...notes, "generateObject"] };
    }
    case "stream-usage": {
      const r = ai.streamText(base);
      await drain(r);
      const u = await r.usage;
      return { text: await r.text, usage: { prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.totalTokens } };
    }
    default: {
      if (job.stream) {
        const r = ai.streamText(base);
        await drain(r);
        return { text: await r.text, notes: [...notes, "streamText"] };
      }
      const r = await ai.generateText(base);
      return { text: r.text, notes: [...notes, "generateText"] };
    }
  }
}

// The AI SDK's OpenAI provider (`@ai-sdk/openai`): `openai(model)` is its Responses model since v5, what an
// application built on the AI SDK gets by default when it points the provider's baseURL at a gateway.
async function aiSdkResponses(job) {
  const { createOpenAI } = await import("@ai-sdk/openai");
  const provider = createOpenAI({ baseURL: job.base_url, apiKey: job.key, headers: job.headers });
  return aiSdkScenarios(job, provider.responses(job.model), ["openai.responses"]);
}

async function classifyAiSdk(e) {
  const { APICallError, RetryError } = await import("ai");
  let seen = e;
  if (RetryError?.isInstance?.(seen)) seen = seen.lastError;
  if (APICallError.isInstance(seen)) return errorOf(e, kindOfStatus(seen.statusCode), seen.statusCode);
  if (e?.name === "AI_TypeValidationError" || e?.name === "AI_JSONParseError") return errorOf(e, "other", null);
  return errorOf(e, e?.name?.startsWith?.("AI_") ? "api_error" : "other", null);
}

// ---------------------------------------------------------------------------------------------- langchain-js
async function langchainJs(job) {
  const { ChatOpenAI } = await import("@langchain/openai");
  const { HumanMessage, ToolMessage } = await import("@langchain/core/messages");
  const chat = (extra = {}) => new ChatOpenAI({ model: job.model, apiKey: job.key, configuration: { baseURL: job.base_url, defaultHeaders: job.headers }, maxRetries: job.retries, timeout: TIMEOUT_MS, ...extra });
  const tools = job.tools.map((t) => ({ type: "function", function: t }));
  const calls = (m) => (m?.tool_calls ?? []).map((c) => ({ id: c.id, name: c.name, arguments: c.args }));
  const gather = async (stream) => { let total; for await (const c of stream) total = total ? total.concat(c) : c; return total; };
  switch (job.scenario) {
    case "tool-round-trip": {
      const bound = chat().bindTools(tools);
      const convo = [new HumanMessage(job.prompt)];
      const first = await bound.invoke(convo);
      convo.push(first, ...first.tool_calls.map((c) => new ToolMessage({ content: job.tool_result, tool_call_id: c.id })));
      const second = await bound.invoke(convo);
      return { text: second.content, tool_calls: calls(first) };
    }
    case "parallel-tools-stream": {
      const total = await gather(await chat().bindTools(tools).stream(job.prompt));
      return { tool_calls: calls(total) };
    }
    case "structured-output": {
      const out = await chat().withStructuredOutput(objectSchema(job.object.fields), { name: job.object.name, method: "jsonSchema", strict: true }).invoke(job.prompt);
      return { parsed: out };
    }
    case "stream-usage": {
      const total = await gather(await chat({ streamUsage: true }).stream(job.prompt));
      const u = total?.usage_metadata;
      return { text: total?.content ?? null, usage: u ? { prompt_tokens: u.input_tokens, completion_tokens: u.output_tokens, total_tokens: u.total_tokens } : null };
    }
    default: {
      if (job.stream) {
        const total = await gather(await chat().stream(job.prompt));
        return { text: total?.content ?? null };
      }
      const m = await chat().invoke(job.prompt);
      return { text: m.content };
    }
  }
}

async function classifyLangchainJs(e) {
  // @langchain/openai rethrows the openai-node error (its class kept) with an lc_error_code added.
  const status = Number.isInteger(e?.status) ? e.status : null;
  if (e?.lc_error_code === "MODEL_RATE_LIMIT" || status === 429) return errorOf(e, "rate_limit", status);
  if (e?.lc_error_code === "MODEL_AUTHENTICATION" || status === 401) return errorOf(e, "authentication", status);
  if (status !== null || e?.constructor?.name?.endsWith?.("Error") && e?.constructor?.name !== "TypeError") return errorOf(e, "api_error", status);
  return errorOf(e, "other", null);
}

// ---------------------------------------------------------------------------------------------- anthropic-node
// @anthropic-ai/sdk through a gateway's /v1/messages: the SDK takes the host part of the gateway URL (…/v1) and
// adds /v1 itself.
async function anthropicNode(job) {
  const { default: Anthropic } = await import("@anthropic-ai/sdk");
  const baseURL = job.base_url.replace(/\/+$/, "").replace(/\/v1$/, "");
  const client = new Anthropic({ baseURL, apiKey: job.key, maxRetries: job.retries, timeout: TIMEOUT_MS, defaultHeaders: job.headers });
  const messages = [{ role: "user", content: job.prompt }];
  const tools = job.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
  const base = { model: job.model, max_tokens: 1024, messages, ...(tools.length ? { tools } : {}) };
  const text = (m) => { const t = m.content.filter((b) => b.type === "text").map((b) => b.text); return t.length ? t.join("") : null; };
  const calls = (m) => m.content.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, arguments: b.input }));
  const usage = (m) => {
    const u = m.usage, prompt = u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
    return { prompt_tokens: prompt, completion_tokens: u.output_tokens, total_tokens: prompt + u.output_tokens };
  };
  switch (job.scenario) {
    case "text": {
      const { data, response } = await client.messages.create(base).withResponse();
      return { text: text(data), usage: usage(data), notes: [`withResponse: HTTP ${response.status}`] };
    }
    case "tool-round-trip": {
      const first = await client.messages.create(base);
      const results = calls(first).map((c) => ({ type: "tool_result", tool_use_id: c.id, content: job.tool_result }));
      const convo = [...messages, { role: "assistant", content: first.content }, { role: "user", content: results }];
      const second = await client.messages.create({ ...base, messages: convo });
      return { text: text(second), tool_calls: calls(first) };
    }
    case "structured-output": {
      const { jsonSchemaOutputFormat } = await import("@anthropic-ai/sdk/helpers/json-schema");
      const done = await client.messages.parse({ ...base, output_config: { format: jsonSchemaOutputFormat(objectSchema(job.object.fields)) } });
      return { parsed: done.parsed_output ?? null, notes: ["messages.parse"] };
    }
    default: {
      if (job.stream) {
        const stream = client.messages.stream(base);
        for await (const _ of stream);
        const final = await stream.finalMessage();
        return { text: text(final), tool_calls: calls(final), usage: usage(final), notes: ["messages.stream"] };
      }
      const done = await client.messages.create(base);
      return { text: text(done), tool_calls: calls(done) };
    }
  }
}

async function classifyAnthropic(e) {
  const { default: Anthropic } = await import("@anthropic-ai/sdk");
  if (e instanceof Anthropic.RateLimitError) return errorOf(e, "rate_limit", e.status);
  if (e instanceof Anthropic.AuthenticationError) return errorOf(e, "authentication", e.status);
  if (e instanceof Anthropic.APIConnectionError) return errorOf(e, "connection", null);
  if (e instanceof Anthropic.APIError) return errorOf(e, "api_error", e.status);
  return errorOf(e, "other", null);
}

// ---------------------------------------------------------------------------------------------- claude-code
// Claude Code headless (`claude -p`), its base URL pointed at the gateway (ANTHROPIC_BASE_URL is the host part,
// as for the SDKs), non-essential traffic and the updater off, a HOME of its own: one inference request per
// prompt, posted to /v1/messages?beta=true with Claude Code's anthropic-beta list. Its tools are its own, so the
// scenarios that declare function tools or structured output are not its (harness/clients/drivers/node.py).
async function claudeCode(job) {
  const { spawnSync } = await import("node:child_process");
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const home = mkdtempSync(join(tmpdir(), "gc-claude-"));
  const bin = new URL("./node_modules/.bin/claude", import.meta.url).pathname;
  const env = {
    PATH: process.env.PATH, HOME: home,
    ANTHROPIC_BASE_URL: job.base_url.replace(/\/+$/, "").replace(/\/v1$/, ""), ANTHROPIC_API_KEY: job.key,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_MAX_RETRIES: String(job.retries ?? 0),
    ...(Object.keys(job.headers).length ? { ANTHROPIC_CUSTOM_HEADERS: Object.entries(job.headers).map(([k, v]) => `${k}: ${v}`).join("\n") } : {}),
  };
  const format = job.stream ? ["--output-format", "stream-json", "--verbose"] : ["--output-format", "json"];
  try {
    const run = spawnSync(bin, ["-p", job.prompt, "--model", job.model, ...format], { env, encoding: "utf8", timeout: TIMEOUT_MS * 3 });
    const lines = (run.stdout ?? "").trim().split("\n").filter(Boolean);
    const result = lines.map((l) => { try { return JSON.parse(l); } catch { return null; } }).filter((o) => o?.type === "result").pop();
    if (!result) throw Object.assign(new Error(`claude exited ${run.status} without a result: ${(run.stderr || run.stdout || "").slice(-300)}`), { cc: true });
    if (result.is_error) {
      const status = result.api_error_status ?? null;
      return { error: errorOf({ constructor: { name: "ClaudeCodeResult" }, message: String(result.result ?? result.subtype) }, status === null ? "api_error" : kindOfStatus(status), status) };
    }
    const u = result.usage ?? {};
    const prompt = (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
    return { text: result.result ?? null, usage: { prompt_tokens: prompt, completion_tokens: u.output_tokens ?? 0, total_tokens: prompt + (u.output_tokens ?? 0) },
             notes: [`claude -p ${job.stream ? "stream-json" : "json"}: ${result.subtype}`] };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

async function classifyClaudeCode(e) {
  return errorOf(e, "other", null);
}

// ---------------------------------------------------------------------------------------------- codex
// Codex CLI headless (`codex exec --json`), a CODEX_HOME of its own whose config.toml names the gateway as a model
// provider on the Responses wire (`wire_api = "responses"`, the key from an environment variable), its retries
// set to the scenario's. Its tools are its own; sub-agents and web search are turned off, so what it sends is
// function tools only, the requests an application's Codex sends through a gateway that offers neither.
function tomlString(value) {
  return JSON.stringify(String(value));
}

// `websocket`: Codex on its default transport (as it dials OpenAI): the provider says `supports_websockets = true`,
// so each turn goes over a WebSocket to {base_url}/responses first and falls back to HTTP only when that fails; a
// completed turn that fell back (Codex's "Falling back from WebSockets to HTTPS transport" warning) is a failure.
async function codex(job, websocket = false) {
  const { spawnSync } = await import("node:child_process");
  const { mkdtempSync, rmSync, writeFileSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const home = mkdtempSync(join(tmpdir(), "gc-codex-"));
  const retries = job.retries ?? 0;
  const headers = Object.entries(job.headers).map(([k, v]) => `${tomlString(k)} = ${tomlString(v)}`).join(", ");
  writeFileSync(join(home, "config.toml"), [
    `model = ${tomlString(job.model)}`,
    `model_provider = "gc"`,
    `web_search = "disabled"`,
    `[model_providers.gc]`,
    `name = "gateway under test"`,
    `base_url = ${tomlString(job.base_url)}`,
    `env_key = "GC_CODEX_GATEWAY_KEY"`,
    `wire_api = "responses"`,
    ...(websocket ? [`supports_websockets = true`] : []),
    `request_max_retries = ${retries}`,
    `stream_max_retries = ${retries}`,
    ...(headers ? [`http_headers = { ${headers} }`] : []),
    `[agents]`,
    `enabled = false`,
    "",
  ].join("\n"));
  const bin = new URL("./node_modules/.bin/codex", import.meta.url).pathname;
  const env = { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, GC_CODEX_GATEWAY_KEY: job.key };
  try {
    // Structured output: `--output-schema` (the final message is JSON of that shape; Codex sends it as text.format).
    const schema = job.object ? join(home, "schema.json") : null;
    if (schema) writeFileSync(schema, JSON.stringify(objectSchema(job.object.fields)));
    const args = ["exec", "--skip-git-repo-check", "--json", "--cd", home, ...(schema ? ["--output-schema", schema] : []), job.prompt];
    const run = spawnSync(bin, args, { env, encoding: "utf8", timeout: TIMEOUT_MS * 3, input: "" });
    const events = (run.stdout ?? "").trim().split("\n").map((l) => { try { return JSON.parse(l); } catch { return null; } }).filter(Boolean);
    // `error` events also announce a retry ("Reconnecting... 1/2"); the turn's own end says whether it failed.
    const done = events.filter((e) => e.type === "turn.completed").pop();
    const failed = events.find((e) => e.type === "turn.failed") ?? (done ? null : events.filter((e) => e.type === "error").pop());
    if (failed) {
      const message = String(failed.error?.message ?? failed.message ?? "");
      const status = Number((message.match(/\b([45]\d\d)\b/) ?? [])[1]) || null;
      const kind = status !== null ? kindOfStatus(status) : /unauthori[sz]ed|invalid api key|authentication/i.test(message) ? "authentication" : "api_error";
      return { error: errorOf({ constructor: { name: "CodexTurnFailed" }, message }, kind, status) };
    }
    if (!done) throw new Error(`codex exited ${run.status} without a completed turn: ${(run.stderr || run.stdout || "").slice(-300)}`);
    const fellBack = /Falling back from WebSockets to HTTPS/.test(run.stdout ?? "") || /Falling back from WebSockets to HTTPS/.test(run.stderr ?? "");
    if (websocket && fellBack) {
      const message = "Codex fell back from the WebSocket to HTTPS: the turn was not served over the socket";
      return { error: errorOf({ constructor: { name: "CodexFellBackToHttp" }, message }, "api_error", null) };
    }
    const text = events.filter((e) => e.type === "item.completed" && e.item?.type === "agent_message").map((e) => e.item.text).join("");
    const u = done.usage ?? {};
    const prompt = u.input_tokens ?? 0;
    if (schema) return { parsed: JSON.parse(text), notes: ["codex exec --output-schema"] };
    return { text, usage: { prompt_tokens: prompt, completion_tokens: u.output_tokens ?? 0, total_tokens: prompt + (u.output_tokens ?? 0) },
             notes: ["codex exec --json: turn.completed"] };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

async function classifyCodex(e) {
  return errorOf(e, "other", null);
}

// ----------------------------------------------------------------------------------------------
const CLIENTS = {
  "openai-node": { run: openaiNode, classify: classifyOpenai, packages: ["openai", "zod"] },
  "openai-node-responses": { run: openaiNodeResponses, classify: classifyOpenai, packages: ["openai", "zod"] },
  "ai-sdk": { run: aiSdk, classify: classifyAiSdk, packages: ["ai", "@ai-sdk/openai-compatible"] },
  "ai-sdk-responses": { run: aiSdkResponses, classify: classifyAiSdk, packages: ["ai", "@ai-sdk/openai"] },
  "openai-agents-node": { run: openaiAgentsNode, classify: classifyOpenai, packages: ["@openai/agents", "openai", "zod"] },
  "langchain-js": { run: langchainJs, classify: classifyLangchainJs, packages: ["@langchain/openai", "@langchain/core", "openai"] },
  "anthropic-node": { run: anthropicNode, classify: classifyAnthropic, packages: ["@anthropic-ai/sdk"] },
  "claude-code": { run: claudeCode, classify: classifyClaudeCode, packages: ["@anthropic-ai/claude-code"] },
  codex: { run: codex, classify: classifyCodex, packages: ["@openai/codex"] },
  "codex-ws": { run: (job) => codex(job, true), classify: classifyCodex, packages: ["@openai/codex"] },
};

const input = JSON.parse(readFileSync(0, "utf8"));
const client = CLIENTS[input.client];
if (!client) {
  process.stderr.write(`unknown client ${input.client}\n`);
  process.exit(2);
}
const observations = [];
for (const job of input.jobs) {
  try {
    observations.push(await client.run(job));
  } catch (e) {
    observations.push({ error: await client.classify(e) });
  }
}
const versions = Object.fromEntries(client.packages.map((p) => [p, version(p)]));
process.stdout.write(JSON.stringify({ versions, observations }) + "\n");
