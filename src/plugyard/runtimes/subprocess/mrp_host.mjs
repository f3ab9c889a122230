// plugyard's Node host for MRP-VM typed plugins (DS003): wrapper protocol v1 on
// stdin/stdout, one plugin per process.
//
//   node mrp_host.mjs <module>      (cwd: the plugin folder; <module> is its index.mjs)
//
// The module is loaded as MRP-VM's built-in loader loads it: its createPlugin (or
// default) export is called with the loader's dependency object, and the instance it
// returns is called as `instance[method](input, ctx)` with the DS003 runtime context.
// When the plugin lives in an MRP-VM tree (an ancestor holds config/plugins.json), the
// dependencies are built from that tree's own modules, as its boot does; the LLM-backed
// helpers get a bridge whose calls go to the host over this pipe. stdout carries only
// protocol lines; console output of the plugin goes to stderr.

import { createInterface } from 'node:readline';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const out = process.stdout;
const send = (message) => out.write(JSON.stringify(message) + '\n');
// The plugin's own logging must never corrupt the protocol stream.
for (const name of ['log', 'info', 'debug', 'warn']) {
  console[name] = (...args) => process.stderr.write(args.map(String).join(' ') + '\n');
}

const moduleFile = resolve(process.argv[2] || 'index.mjs');
const pluginDir = dirname(moduleFile);
const manifestFile = join(pluginDir, 'plugin.json');

// ------------------------------------------------------------------ host calls

let hostSeq = 0;
const pending = new Map();
let currentRequest = null;

function hostCall(capability, call, args = [], kwargs = {}) {
  const id = `h${++hostSeq}`;
  const params = { capability, call, args, kwargs };
  if (currentRequest !== null) params.request = currentRequest;
  send({ protocolVersion: 1, id, method: 'host', params });
  return new Promise((resolvePromise, reject) => pending.set(id, { resolvePromise, reject }));
}

function hostError(error) {
  const failure = new Error(error?.message || 'the host refused the call');
  failure.code = error?.code || 'plugin_error';
  failure.fromHost = true; // the host's own refusal (budget_exceeded, …) keeps its code
  return failure;
}

// What a plugin says of the answer's form travels to plugyard's model layer, which makes
// the answer well-formed by construction (a JSON schema becomes the model's grammar):
// `jsonSchema`, OpenAI's `responseFormat` / `response_format` (`json_schema` or
// `json_object`), `maxTokens` and `temperature`. MRP-VM's own bridge passes none of
// them, so its plugins get what they get there: the prompt alone says the form.
function formatHints(opts) {
  const hints = {};
  const format = opts.responseFormat || opts.response_format;
  let schema = opts.jsonSchema || opts.json_schema || null;
  if (!schema && format && typeof format === 'object') {
    if (format.type === 'json_schema') schema = format.json_schema?.schema || format.schema || null;
    else if (format.type === 'json_object') schema = { type: 'object' };
  }
  if (schema && typeof schema === 'object') hints.json_schema = schema;
  const maxTokens = opts.maxTokens ?? opts.max_tokens;
  if (Number.isInteger(maxTokens) && maxTokens > 0) hints.max_tokens = maxTokens;
  if (typeof opts.temperature === 'number' && opts.temperature >= 0) hints.temperature = opts.temperature;
  return hints;
}

// MRP-VM's LLMBridge surface (DS015): call(system, user, opts) answers the text.
const llmBridge = {
  agent: { name: 'plugyard' },
  async init() {},
  async call(systemPrompt, userMessage, opts = {}) {
    const messages = [];
    if (systemPrompt) messages.push({ role: 'system', content: String(systemPrompt) });
    messages.push({ role: 'user', content: String(userMessage ?? '') });
    const kwargs = { ...formatHints(opts) };
    if (opts.role) kwargs.role = opts.role;
    const answer = await hostCall('llm', 'chat', [messages], kwargs);
    return typeof answer?.text === 'string' ? answer.text : '';
  },
  async callWithRetry(systemPrompt, userMessage, opts = {}) {
    return this.call(systemPrompt, userMessage, opts);
  },
  getSupportedModes() { return ['fast', 'deep']; },
  getStats() { return {}; },
};

// ------------------------------------------------------------------ loading

function projectRoot(start) {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'config', 'plugins.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

async function optional(root, path, name) {
  const file = join(root, path);
  if (!existsSync(file)) return null;
  const mod = await import(pathToFileURL(file).href);
  return mod[name] ?? null;
}

// The dependencies MRP-VM's boot gives its built-in loader, built from the tree's own
// modules (facts of its layout); any that the tree lacks are left out.
async function treeDependencies(root) {
  const loadConfig = await optional(root, 'src/core/platform/config.mjs', 'loadConfig');
  const config = (name) => {
    try { return loadConfig ? loadConfig(name) : {}; } catch { return {}; }
  };
  const strategies = config('strategies');
  const modes = Array.isArray(strategies.enabledModes) ? strategies.enabledModes : ['symbolic-only', 'llm-assisted'];
  const sd = 'src/mrp-vm-sdk/seed-detection/builtin-helpers.mjs';
  const cn = 'src/mrp-vm-sdk/context-normalization/builtin-helpers.mjs';
  const rr = 'src/mrp-vm-sdk/response-rendering/builtin-helpers.mjs';
  const seedBundleGenerators = new Map();
  const contextNormalizers = new Map();
  const responseRenderers = new Map();
  const pairs = [
    ['llm-assisted', 'LLMAssisted', [llmBridge]],
    ['symbolic-only', 'RuleBasedSOP', []],
  ];
  for (const [mode, prefix, args] of pairs) {
    if (!modes.includes(mode)) continue;
    const Seed = await optional(root, sd, `${prefix}SeedBundleGenerator`);
    const Norm = await optional(root, cn, `${prefix}ContextNormalizer`);
    const Render = await optional(root, rr, `${prefix}ResponseRenderer`);
    if (Seed) seedBundleGenerators.set(mode, new Seed(...args));
    if (Norm) contextNormalizers.set(mode, new Norm(...args));
    if (Render) responseRenderers.set(mode, new Render(...args));
  }
  const NLNormalizer = await optional(root, 'src/core/normalizer/nl-normalizer.mjs', 'NLNormalizer');
  const Synthesizer = await optional(root, 'src/mrp-vm-sdk/synthesis/answer-synthesizer.mjs', 'AnswerSynthesizer');
  const Stats = await optional(root, 'src/plugins/runtime/planner-stats.mjs', 'PlannerStatsStore');
  const Registry = await optional(root, 'src/plugins/runtime/typed-registry.mjs', 'TypedPluginRegistry');
  const pluginsConfig = config('plugins');
  return {
    seedBundleGenerators,
    contextNormalizers,
    responseRenderers,
    normalizer: NLNormalizer ? new NLNormalizer() : null,
    synthesizer: Synthesizer ? new Synthesizer(config('engine')) : null,
    plannerStats: Stats ? new Stats(pluginsConfig) : null,
    typedPluginRegistry: Registry ? new Registry() : null,
    pluginsConfig,
  };
}

// A registry of one plugin for factories that take the loader's typedPluginRegistry.
function plainRegistry() {
  const plugins = new Map();
  return {
    register(plugin) { const d = plugin.getDescriptor?.() || {}; plugins.set(`${d.type}:${d.id}`, plugin); },
    get(type, id) { return plugins.get(`${type}:${id}`) || null; },
    list(type) { return [...plugins.values()].filter(p => !type || p.getDescriptor?.().type === type); },
    getAll() { return [...plugins.values()]; },
  };
}

let instance = null;
let loading = null;

async function load() {
  const root = projectRoot(pluginDir);
  if (root !== null) process.chdir(root);
  let mod;
  try {
    mod = await import(pathToFileURL(moduleFile).href);
  } catch (error) {
    throw loadFailure(`importing ${moduleFile} failed: ${nodeText(error)}`);
  }
  const factory = mod.createPlugin || mod.default;
  if (typeof factory !== 'function') {
    throw loadFailure(`${moduleFile} does not export createPlugin(...) or a default factory`);
  }
  const tree = root !== null ? await treeDependencies(root) : {};
  const typedPluginRegistry = tree.typedPluginRegistry || plainRegistry();
  const entry = { module: moduleFile, enabled: true };
  const pluginsConfig = tree.pluginsConfig || { builtins: [entry] };
  let plugin;
  try {
    plugin = await factory({ ...tree, llmBridge, entry, typedPluginRegistry, pluginsConfig });
  } catch (error) {
    throw loadFailure(`createPlugin(...) threw: ${nodeText(error)}`);
  }
  if (!plugin) {
    throw loadFailure('createPlugin(...) returned no plugin (MRP-VM skips such a module)');
  }
  try { typedPluginRegistry.register(plugin); } catch { /* the registry is the plugin's view only */ }
  return plugin;
}

// Node's own text of an error, without the frames of this host or of Node's loader.
function nodeText(error) {
  const stack = String(error?.stack || error);
  return stack.split('\n').filter((line) => !/mrp_host\.mjs|node:internal/.test(line)).join('\n');
}

function loadFailure(message) {
  const failure = new Error(message);
  failure.code = 'plugin_load_failed';
  return failure;
}

function plugin() {
  if (instance) return Promise.resolve(instance);
  loading = loading || load().then((found) => (instance = found));
  return loading;
}

// ------------------------------------------------------------------ requests

// DS003: { requestId, session, conversation, parser, decomposer, externalHelpers,
// modelSettings, logger, budgets } — read-only, with the callbacks MRP-VM's own give.
function runtimeContext(wire) {
  const settings = wire.modelSettings || {};
  const logger = {};
  for (const level of ['debug', 'info', 'warn', 'error']) {
    logger[level] = (...args) => process.stderr.write(`[${level}] ${args.map(a => typeof a === 'string' ? a : JSON.stringify(a)).join(' ')}\n`);
  }
  return Object.freeze({
    requestId: wire.requestId || wire.request_id || null,
    session: wire.session || {},
    conversation: wire.conversation || [],
    parser: null,
    decomposer: null,
    externalHelpers: {
      // MRP-VM's wrapper manager: what the DS016 helpers answer for the intents.
      collectOutputs: (resolvedIntents) => hostCall('helpers', 'collect', [resolvedIntents || []]),
      list: () => hostCall('helpers', 'list'),
    },
    modelSettings: {
      ...settings,
      resolveModel: ({ role, requestedModel, sessionModel } = {}) =>
        requestedModel || sessionModel || settings.roles?.[role]?.model || settings.model || null,
    },
    logger,
    budgets: wire.budgets || {},
    hookType: wire.hookType,
    kbRepositoryManager: wire.kbRepositoryManager || null,
  });
}

function methodOf(operation) {
  return String(operation).replace(/_([a-z])/g, (_, c) => c.toUpperCase());
}

async function execute(params) {
  const found = await plugin();
  const method = methodOf(params.operation);
  if (typeof found[method] !== 'function') {
    return { error: { code: 'operation_not_found', message: `the plugin has no ${method}(input, ctx)` } };
  }
  const result = await found[method](params.parameters || {}, runtimeContext(params.context || {}));
  if (result && typeof result === 'object' && result.status === 'error') {
    const error = result.error || {};
    return {
      result: {
        status: 'error',
        error: { code: 'plugin_error', message: error.message || 'the plugin answered status error', details: { mrp: error } },
        data: result,
      },
    };
  }
  return { result: { data: result ?? null } };
}

async function describe() {
  await plugin();
  return { result: JSON.parse(readFileSync(manifestFile, 'utf-8')) };
}

async function handle(message) {
  const { id, method, params } = message;
  currentRequest = typeof id === 'number' ? id : null;
  try {
    const answer = method === 'describe' ? await describe() : await execute(params || {});
    send({ id, ...answer });
  } catch (error) {
    const own = error?.code === 'plugin_load_failed' || error?.fromHost === true;
    const code = own && typeof error.code === 'string' ? error.code : 'plugin_error';
    send({ id, error: { code, message: String(error?.message || error) } });
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (!line.trim()) return;
  let message;
  try { message = JSON.parse(line); } catch { return; }
  if (typeof message.id === 'string' && pending.has(message.id)) {
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error) waiter.reject(hostError(message.error));
    else waiter.resolvePromise(message.result);
    return;
  }
  if (message.method === 'cancel') return;
  handle(message);
});
lines.on('close', () => process.exit(0));
