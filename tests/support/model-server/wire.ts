/**
 * Owns the vendors' wire formats the local model server speaks: reading a request body into a
 * `Conversation` (script.ts) and writing a `Reply` back, for
 *   - the Anthropic Messages API (`POST /v1/messages`: JSON, or SSE when `stream` is true),
 *   - the OpenAI Responses API (`POST /v1/responses`: SSE, what codex uses),
 *   - OpenAI Chat Completions (`POST /v1/chat/completions`: JSON or SSE; litellm, opencode),
 *   - Gemini (`POST /v1beta/models/<m>:generateContent`, `:streamGenerateContent?alt=sse`),
 * and each vendor's error bodies and headers for the faults the server can play.
 * Pure: bodies in, strings and objects out; server.ts does the I/O.
 */
import { z } from 'zod';
import { tokensOf, type Conversation, type Reply, type Tool } from './script.js';

export type Api = 'anthropic' | 'responses' | 'chat' | 'gemini';
export const FAULT_KINDS = ['rate-limit', 'auth', 'overloaded', 'server-error', 'hang'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

const Obj = z.record(z.string(), z.unknown());
type Obj = z.infer<typeof Obj>;
const asObj = (v: unknown): Obj | null => {
  const r = Obj.safeParse(v);
  return r.success && !Array.isArray(v) ? r.data : null;
};
const asArr = (v: unknown): unknown[] => (Array.isArray(v) ? (v as unknown[]) : []);
const asStr = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Text of a content value: a string, or blocks carrying `text`. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArr(content)
    .map((b) => asStr(asObj(b)?.text))
    .filter((s) => s !== '')
    .join('\n');
}

export interface Usage {
  input: number;
  output: number;
}

export function usageFor(body: string, r: Reply): Usage {
  return { input: tokensOf(body), output: tokensOf(r.text + JSON.stringify(r.toolCalls.map((c) => c.input))) };
}

let seq = 0;
const id = (prefix: string): string => `${prefix}_${Date.now().toString(36)}${(++seq).toString(36).padStart(6, '0')}`;
const json = (v: unknown): string => JSON.stringify(v);
const argsJson = (input: Record<string, unknown> | string): string => (typeof input === 'string' ? json({ input }) : json(input));

// ---------------------------------------------------------------------------------------------
// Anthropic Messages
// ---------------------------------------------------------------------------------------------

export function anthropicConversation(body: Obj): Conversation {
  const messages = asArr(body.messages)
    .map(asObj)
    .filter((m): m is Obj => m !== null);
  const userTexts: string[] = [];
  let toolResults = 0;
  const exchanges = new Map<string, { name: string; input: unknown; result: string | null }>();
  for (const m of messages) {
    if (m.role === 'assistant') {
      for (const b of asArr(m.content).map(asObj))
        if (b?.type === 'tool_use') exchanges.set(asStr(b.id), { name: asStr(b.name), input: b.input, result: null });
      continue;
    }
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') userTexts.push(m.content);
    for (const b of asArr(m.content).map(asObj)) {
      if (b?.type === 'text') userTexts.push(asStr(b.text));
      if (b?.type === 'tool_result') {
        toolResults++;
        const x = exchanges.get(asStr(b.tool_use_id));
        if (x) x.result = textOf(b.content);
      }
    }
  }
  const tools: Tool[] = asArr(body.tools)
    .map(asObj)
    .filter((t): t is Obj => t !== null && typeof t.name === 'string')
    .map((t) => ({ name: asStr(t.name), parameters: t.input_schema }));
  return { system: textOf(body.system), userTexts, toolResults, tools, model: asStr(body.model), toolExchanges: [...exchanges.values()] };
}

function anthropicContent(r: Reply): Obj[] {
  const blocks: Obj[] = [];
  if (r.text) blocks.push({ type: 'text', text: r.text });
  for (const c of r.toolCalls)
    blocks.push({ type: 'tool_use', id: id('toolu'), name: c.name, input: typeof c.input === 'string' ? { input: c.input } : c.input });
  return blocks;
}

function anthropicUsage(u: Usage): Obj {
  return { input_tokens: u.input, output_tokens: u.output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

export function anthropicJson(r: Reply, model: string, u: Usage): Obj {
  return {
    id: id('msg'),
    type: 'message',
    role: 'assistant',
    model,
    content: anthropicContent(r),
    stop_reason: r.toolCalls.length > 0 ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: anthropicUsage(u),
  };
}

const sse = (event: string | null, data: unknown): string => `${event ? `event: ${event}\n` : ''}data: ${json(data)}\n\n`;

/** The SSE events of a streamed message; the first event alone is what a hung stream sends. */
export function anthropicStream(r: Reply, model: string, u: Usage): string[] {
  const start = { ...anthropicJson(r, model, u), content: [], stop_reason: null, usage: { ...anthropicUsage(u), output_tokens: 1 } };
  const events = [sse('message_start', { type: 'message_start', message: start })];
  anthropicContent(r).forEach((block, index) => {
    if (block.type === 'text') {
      events.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
      events.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } }));
    } else {
      events.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } }));
      events.push(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: json(block.input) },
        }),
      );
    }
    events.push(sse('content_block_stop', { type: 'content_block_stop', index }));
  });
  events.push(
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: r.toolCalls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: u.output },
    }),
  );
  events.push(sse('message_stop', { type: 'message_stop' }));
  return events;
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses
// ---------------------------------------------------------------------------------------------

export function responsesConversation(body: Obj): Conversation {
  const userTexts: string[] = [];
  let toolResults = 0;
  const input = body.input;
  if (typeof input === 'string') userTexts.push(input);
  for (const it of asArr(input).map(asObj)) {
    if (!it) continue;
    const type = asStr(it.type) || 'message';
    if (type === 'message' && it.role === 'user') userTexts.push(textOf(it.content));
    if (type.endsWith('_output')) toolResults++;
  }
  const tools: Tool[] = asArr(body.tools)
    .map(asObj)
    .filter((t): t is Obj => t !== null)
    .map((t) => ({ name: asStr(t.name) || asStr(t.type), parameters: t.parameters }));
  return { system: asStr(body.instructions), userTexts, toolResults, tools, model: asStr(body.model) };
}

function responsesItems(r: Reply, tools: Tool[]): Obj[] {
  const items: Obj[] = [];
  for (const c of r.toolCalls) {
    const custom = typeof c.input === 'string' && !tools.some((t) => t.name === c.name && t.parameters !== undefined);
    items.push(
      custom
        ? { type: 'custom_tool_call', id: id('ctc'), call_id: id('call'), name: c.name, input: c.input, status: 'completed' }
        : { type: 'function_call', id: id('fc'), call_id: id('call'), name: c.name, arguments: argsJson(c.input), status: 'completed' },
    );
  }
  if (r.text)
    items.push({
      type: 'message',
      id: id('msg'),
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: r.text, annotations: [] }],
    });
  return items;
}

/** SSE events of a streamed response (codex reads `response.output_item.done` and `response.completed`). */
export function responsesStream(r: Reply, model: string, u: Usage, tools: Tool[]): string[] {
  const respId = id('resp');
  const base = {
    id: respId,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model,
    status: 'in_progress',
    output: [] as Obj[],
  };
  const events = [sse('response.created', { type: 'response.created', sequence_number: 0, response: base })];
  const items = responsesItems(r, tools);
  let n = 1;
  items.forEach((item, output_index) => {
    events.push(
      sse('response.output_item.added', {
        type: 'response.output_item.added',
        sequence_number: n++,
        output_index,
        item: { ...item, status: 'in_progress', ...(item.type === 'message' ? { content: [] } : {}) },
      }),
    );
    if (item.type === 'message') {
      events.push(
        sse('response.output_text.delta', {
          type: 'response.output_text.delta',
          sequence_number: n++,
          item_id: item.id,
          output_index,
          content_index: 0,
          delta: r.text,
        }),
      );
      events.push(
        sse('response.output_text.done', {
          type: 'response.output_text.done',
          sequence_number: n++,
          item_id: item.id,
          output_index,
          content_index: 0,
          text: r.text,
        }),
      );
    }
    events.push(sse('response.output_item.done', { type: 'response.output_item.done', sequence_number: n++, output_index, item }));
  });
  const usage = {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.input + u.output,
  };
  events.push(
    sse('response.completed', {
      type: 'response.completed',
      sequence_number: n,
      response: { ...base, status: 'completed', output: items, usage },
    }),
  );
  return events;
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions
// ---------------------------------------------------------------------------------------------

export function chatConversation(body: Obj): Conversation {
  const messages = asArr(body.messages)
    .map(asObj)
    .filter((m): m is Obj => m !== null);
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content));
  const userTexts = messages.filter((m) => m.role === 'user').map((m) => textOf(m.content));
  const toolResults = messages.filter((m) => m.role === 'tool').length;
  const tools: Tool[] = asArr(body.tools)
    .map((t) => asObj(asObj(t)?.function))
    .filter((f): f is Obj => f !== null)
    .map((f) => ({ name: asStr(f.name), parameters: f.parameters }));
  return { system: system.join('\n'), userTexts, toolResults, tools, model: asStr(body.model) };
}

function chatToolCalls(r: Reply): Obj[] {
  return r.toolCalls.map((c, index) => ({
    index,
    id: id('call'),
    type: 'function',
    function: { name: c.name, arguments: argsJson(c.input) },
  }));
}

function chatUsage(u: Usage): Obj {
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    prompt_tokens_details: { cached_tokens: 0 },
  };
}

export function chatJson(r: Reply, model: string, u: Usage): Obj {
  const calls = chatToolCalls(r).map(({ index: _i, ...c }) => c);
  return {
    id: id('chatcmpl'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: r.text || null, ...(calls.length ? { tool_calls: calls } : {}) },
        finish_reason: calls.length ? 'tool_calls' : 'stop',
      },
    ],
    usage: chatUsage(u),
  };
}

export function chatStream(r: Reply, model: string, u: Usage, includeUsage: boolean): string[] {
  const head = { id: id('chatcmpl'), object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const chunk = (delta: Obj, finish: string | null): string =>
    sse(null, { ...head, choices: [{ index: 0, delta, finish_reason: finish }] });
  const events = [chunk({ role: 'assistant', content: '' }, null)];
  if (r.text) events.push(chunk({ content: r.text }, null));
  const calls = chatToolCalls(r);
  if (calls.length) events.push(chunk({ tool_calls: calls }, null));
  events.push(chunk({}, calls.length ? 'tool_calls' : 'stop'));
  if (includeUsage) events.push(sse(null, { ...head, choices: [], usage: chatUsage(u) }));
  events.push('data: [DONE]\n\n');
  return events;
}

// ---------------------------------------------------------------------------------------------
// Gemini
// ---------------------------------------------------------------------------------------------

export function geminiConversation(body: Obj, model: string): Conversation {
  const userTexts: string[] = [];
  let toolResults = 0;
  for (const c of asArr(body.contents).map(asObj)) {
    if (!c || (c.role !== undefined && c.role !== 'user')) continue;
    for (const p of asArr(c.parts).map(asObj)) {
      if (typeof p?.text === 'string') userTexts.push(p.text);
      if (p?.functionResponse !== undefined) toolResults++;
    }
  }
  const tools: Tool[] = asArr(body.tools)
    .flatMap((t) => asArr(asObj(t)?.functionDeclarations))
    .map(asObj)
    .filter((f): f is Obj => f !== null)
    .map((f) => ({ name: asStr(f.name), parameters: f.parametersJsonSchema ?? f.parameters }));
  const system = textOf(asObj(body.systemInstruction)?.parts ?? body.systemInstruction);
  return { system, userTexts, toolResults, tools, model };
}

export function geminiJson(r: Reply, model: string, u: Usage): Obj {
  const parts: Obj[] = [];
  if (r.text) parts.push({ text: r.text });
  for (const c of r.toolCalls)
    parts.push({ functionCall: { name: c.name, args: typeof c.input === 'string' ? { input: c.input } : c.input } });
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: u.input, candidatesTokenCount: u.output, totalTokenCount: u.input + u.output },
    modelVersion: model,
    responseId: id('gem'),
  };
}

export function geminiStream(r: Reply, model: string, u: Usage): string[] {
  return [`data: ${json(geminiJson(r, model, u))}\r\n\r\n`];
}

// ---------------------------------------------------------------------------------------------
// Faults: each vendor's own status, body and headers
// ---------------------------------------------------------------------------------------------

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: Obj;
}

export function errorResponse(api: Api, kind: Exclude<FaultKind, 'hang'>, retryAfterSeconds: number): ErrorResponse {
  const resetIso = new Date(Date.now() + retryAfterSeconds * 1000).toISOString();
  const limitHeaders: Record<string, string> = { 'retry-after': String(retryAfterSeconds) };
  if (api === 'anthropic') {
    const [status, type, message] = {
      'rate-limit': [429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'] as const,
      auth: [401, 'authentication_error', 'invalid x-api-key'] as const,
      overloaded: [529, 'overloaded_error', 'Overloaded'] as const,
      'server-error': [500, 'api_error', 'Internal server error'] as const,
    }[kind];
    const headers: Record<string, string> =
      kind === 'rate-limit'
        ? { ...limitHeaders, 'anthropic-ratelimit-requests-remaining': '0', 'anthropic-ratelimit-requests-reset': resetIso }
        : {};
    return { status, headers, body: { type: 'error', error: { type, message }, request_id: id('req') } };
  }
  if (api === 'gemini') {
    const [status, state, message] = {
      'rate-limit': [429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).'] as const,
      auth: [400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.'] as const,
      overloaded: [503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'] as const,
      'server-error': [
        500,
        'INTERNAL',
        'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
      ] as const,
    }[kind];
    const details =
      kind === 'rate-limit'
        ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfterSeconds}s` }]
        : kind === 'auth'
          ? [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }]
          : [];
    return {
      status,
      headers: kind === 'rate-limit' ? limitHeaders : {},
      body: { error: { code: status, message, status: state, details } },
    };
  }
  const [status, type, code, message] = {
    'rate-limit': [
      429,
      'requests',
      'rate_limit_exceeded',
      `Rate limit reached for requests. Please try again in ${retryAfterSeconds}s.`,
    ] as const,
    auth: [
      401,
      'invalid_request_error',
      'invalid_api_key',
      'Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.',
    ] as const,
    overloaded: [503, 'server_error', 'server_is_overloaded', 'The server is overloaded or not ready yet.'] as const,
    'server-error': [500, 'server_error', null, 'The server had an error while processing your request. Sorry about that!'] as const,
  }[kind];
  const headers: Record<string, string> =
    kind === 'rate-limit'
      ? { ...limitHeaders, 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': `${retryAfterSeconds}s` }
      : {};
  return { status, headers, body: { error: { message, type, param: null, code } } };
}
