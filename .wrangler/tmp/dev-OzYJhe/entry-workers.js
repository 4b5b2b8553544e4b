var __defProp = Object.defineProperty;
var __name = (target, value) => __defProp(target, "name", { value, configurable: true });

// node_modules/unenv/dist/runtime/_internal/utils.mjs
// @__NO_SIDE_EFFECTS__
function createNotImplementedError(name) {
  return new Error(`[unenv] ${name} is not implemented yet!`);
}
__name(createNotImplementedError, "createNotImplementedError");
// @__NO_SIDE_EFFECTS__
function notImplemented(name) {
  const fn = /* @__PURE__ */ __name(() => {
    throw /* @__PURE__ */ createNotImplementedError(name);
  }, "fn");
  return Object.assign(fn, { __unenv__: true });
}
__name(notImplemented, "notImplemented");
// @__NO_SIDE_EFFECTS__
function notImplementedClass(name) {
  return class {
    __unenv__ = true;
    constructor() {
      throw new Error(`[unenv] ${name} is not implemented yet!`);
    }
  };
}
__name(notImplementedClass, "notImplementedClass");

// node_modules/unenv/dist/runtime/node/internal/perf_hooks/performance.mjs
var _timeOrigin = globalThis.performance?.timeOrigin ?? Date.now();
var _performanceNow = globalThis.performance?.now ? globalThis.performance.now.bind(globalThis.performance) : () => Date.now() - _timeOrigin;
var nodeTiming = {
  name: "node",
  entryType: "node",
  startTime: 0,
  duration: 0,
  nodeStart: 0,
  v8Start: 0,
  bootstrapComplete: 0,
  environment: 0,
  loopStart: 0,
  loopExit: 0,
  idleTime: 0,
  uvMetricsInfo: {
    loopCount: 0,
    events: 0,
    eventsWaiting: 0
  },
  detail: void 0,
  toJSON() {
    return this;
  }
};
var PerformanceEntry = class {
  static {
    __name(this, "PerformanceEntry");
  }
  __unenv__ = true;
  detail;
  entryType = "event";
  name;
  startTime;
  constructor(name, options) {
    this.name = name;
    this.startTime = options?.startTime || _performanceNow();
    this.detail = options?.detail;
  }
  get duration() {
    return _performanceNow() - this.startTime;
  }
  toJSON() {
    return {
      name: this.name,
      entryType: this.entryType,
      startTime: this.startTime,
      duration: this.duration,
      detail: this.detail
    };
  }
};
var PerformanceMark = class PerformanceMark2 extends PerformanceEntry {
  static {
    __name(this, "PerformanceMark");
  }
  entryType = "mark";
  constructor() {
    super(...arguments);
  }
  get duration() {
    return 0;
  }
};
var PerformanceMeasure = class extends PerformanceEntry {
  static {
    __name(this, "PerformanceMeasure");
  }
  entryType = "measure";
};
var PerformanceResourceTiming = class extends PerformanceEntry {
  static {
    __name(this, "PerformanceResourceTiming");
  }
  entryType = "resource";
  serverTiming = [];
  connectEnd = 0;
  connectStart = 0;
  decodedBodySize = 0;
  domainLookupEnd = 0;
  domainLookupStart = 0;
  encodedBodySize = 0;
  fetchStart = 0;
  initiatorType = "";
  name = "";
  nextHopProtocol = "";
  redirectEnd = 0;
  redirectStart = 0;
  requestStart = 0;
  responseEnd = 0;
  responseStart = 0;
  secureConnectionStart = 0;
  startTime = 0;
  transferSize = 0;
  workerStart = 0;
  responseStatus = 0;
};
var PerformanceObserverEntryList = class {
  static {
    __name(this, "PerformanceObserverEntryList");
  }
  __unenv__ = true;
  getEntries() {
    return [];
  }
  getEntriesByName(_name, _type) {
    return [];
  }
  getEntriesByType(type) {
    return [];
  }
};
var Performance = class {
  static {
    __name(this, "Performance");
  }
  __unenv__ = true;
  timeOrigin = _timeOrigin;
  eventCounts = /* @__PURE__ */ new Map();
  _entries = [];
  _resourceTimingBufferSize = 0;
  navigation = void 0;
  timing = void 0;
  timerify(_fn, _options) {
    throw createNotImplementedError("Performance.timerify");
  }
  get nodeTiming() {
    return nodeTiming;
  }
  eventLoopUtilization() {
    return {};
  }
  markResourceTiming() {
    return new PerformanceResourceTiming("");
  }
  onresourcetimingbufferfull = null;
  now() {
    if (this.timeOrigin === _timeOrigin) {
      return _performanceNow();
    }
    return Date.now() - this.timeOrigin;
  }
  clearMarks(markName) {
    this._entries = markName ? this._entries.filter((e) => e.name !== markName) : this._entries.filter((e) => e.entryType !== "mark");
  }
  clearMeasures(measureName) {
    this._entries = measureName ? this._entries.filter((e) => e.name !== measureName) : this._entries.filter((e) => e.entryType !== "measure");
  }
  clearResourceTimings() {
    this._entries = this._entries.filter((e) => e.entryType !== "resource" || e.entryType !== "navigation");
  }
  getEntries() {
    return this._entries;
  }
  getEntriesByName(name, type) {
    return this._entries.filter((e) => e.name === name && (!type || e.entryType === type));
  }
  getEntriesByType(type) {
    return this._entries.filter((e) => e.entryType === type);
  }
  mark(name, options) {
    const entry = new PerformanceMark(name, options);
    this._entries.push(entry);
    return entry;
  }
  measure(measureName, startOrMeasureOptions, endMark) {
    let start;
    let end;
    if (typeof startOrMeasureOptions === "string") {
      start = this.getEntriesByName(startOrMeasureOptions, "mark")[0]?.startTime;
      end = this.getEntriesByName(endMark, "mark")[0]?.startTime;
    } else {
      start = Number.parseFloat(startOrMeasureOptions?.start) || this.now();
      end = Number.parseFloat(startOrMeasureOptions?.end) || this.now();
    }
    const entry = new PerformanceMeasure(measureName, {
      startTime: start,
      detail: {
        start,
        end
      }
    });
    this._entries.push(entry);
    return entry;
  }
  setResourceTimingBufferSize(maxSize) {
    this._resourceTimingBufferSize = maxSize;
  }
  addEventListener(type, listener, options) {
    throw createNotImplementedError("Performance.addEventListener");
  }
  removeEventListener(type, listener, options) {
    throw createNotImplementedError("Performance.removeEventListener");
  }
  dispatchEvent(event) {
    throw createNotImplementedError("Performance.dispatchEvent");
  }
  toJSON() {
    return this;
  }
};
var PerformanceObserver = class {
  static {
    __name(this, "PerformanceObserver");
  }
  __unenv__ = true;
  static supportedEntryTypes = [];
  _callback = null;
  constructor(callback) {
    this._callback = callback;
  }
  takeRecords() {
    return [];
  }
  disconnect() {
    throw createNotImplementedError("PerformanceObserver.disconnect");
  }
  observe(options) {
    throw createNotImplementedError("PerformanceObserver.observe");
  }
  bind(fn) {
    return fn;
  }
  runInAsyncScope(fn, thisArg, ...args) {
    return fn.call(thisArg, ...args);
  }
  asyncId() {
    return 0;
  }
  triggerAsyncId() {
    return 0;
  }
  emitDestroy() {
    return this;
  }
};
var performance = globalThis.performance && "addEventListener" in globalThis.performance ? globalThis.performance : new Performance();

// node_modules/@cloudflare/unenv-preset/dist/runtime/polyfill/performance.mjs
if (!("__unenv__" in performance)) {
  const proto = Performance.prototype;
  for (const key of Object.getOwnPropertyNames(proto)) {
    if (key !== "constructor" && !(key in performance)) {
      const desc = Object.getOwnPropertyDescriptor(proto, key);
      if (desc) {
        Object.defineProperty(performance, key, desc);
      }
    }
  }
}
globalThis.performance = performance;
globalThis.Performance = Performance;
globalThis.PerformanceEntry = PerformanceEntry;
globalThis.PerformanceMark = PerformanceMark;
globalThis.PerformanceMeasure = PerformanceMeasure;
globalThis.PerformanceObserver = PerformanceObserver;
globalThis.PerformanceObserverEntryList = PerformanceObserverEntryList;
globalThis.PerformanceResourceTiming = PerformanceResourceTiming;

// node_modules/unenv/dist/runtime/node/console.mjs
import { Writable } from "node:stream";

// node_modules/unenv/dist/runtime/mock/noop.mjs
var noop_default = Object.assign(() => {
}, { __unenv__: true });

// node_modules/unenv/dist/runtime/node/console.mjs
var _console = globalThis.console;
var _ignoreErrors = true;
var _stderr = new Writable();
var _stdout = new Writable();
var log = _console?.log ?? noop_default;
var info = _console?.info ?? log;
var trace = _console?.trace ?? info;
var debug = _console?.debug ?? log;
var table = _console?.table ?? log;
var error = _console?.error ?? log;
var warn = _console?.warn ?? error;
var createTask = _console?.createTask ?? /* @__PURE__ */ notImplemented("console.createTask");
var clear = _console?.clear ?? noop_default;
var count = _console?.count ?? noop_default;
var countReset = _console?.countReset ?? noop_default;
var dir = _console?.dir ?? noop_default;
var dirxml = _console?.dirxml ?? noop_default;
var group = _console?.group ?? noop_default;
var groupEnd = _console?.groupEnd ?? noop_default;
var groupCollapsed = _console?.groupCollapsed ?? noop_default;
var profile = _console?.profile ?? noop_default;
var profileEnd = _console?.profileEnd ?? noop_default;
var time = _console?.time ?? noop_default;
var timeEnd = _console?.timeEnd ?? noop_default;
var timeLog = _console?.timeLog ?? noop_default;
var timeStamp = _console?.timeStamp ?? noop_default;
var Console = _console?.Console ?? /* @__PURE__ */ notImplementedClass("console.Console");
var _times = /* @__PURE__ */ new Map();
var _stdoutErrorHandler = noop_default;
var _stderrErrorHandler = noop_default;

// node_modules/@cloudflare/unenv-preset/dist/runtime/node/console.mjs
var workerdConsole = globalThis["console"];
var {
  assert,
  clear: clear2,
  // @ts-expect-error undocumented public API
  context,
  count: count2,
  countReset: countReset2,
  // @ts-expect-error undocumented public API
  createTask: createTask2,
  debug: debug2,
  dir: dir2,
  dirxml: dirxml2,
  error: error2,
  group: group2,
  groupCollapsed: groupCollapsed2,
  groupEnd: groupEnd2,
  info: info2,
  log: log2,
  profile: profile2,
  profileEnd: profileEnd2,
  table: table2,
  time: time2,
  timeEnd: timeEnd2,
  timeLog: timeLog2,
  timeStamp: timeStamp2,
  trace: trace2,
  warn: warn2
} = workerdConsole;
Object.assign(workerdConsole, {
  Console,
  _ignoreErrors,
  _stderr,
  _stderrErrorHandler,
  _stdout,
  _stdoutErrorHandler,
  _times
});
var console_default = workerdConsole;

// node_modules/wrangler/_virtual_unenv_global_polyfill-@cloudflare-unenv-preset-node-console
globalThis.console = console_default;

// node_modules/unenv/dist/runtime/node/internal/process/hrtime.mjs
var hrtime = /* @__PURE__ */ Object.assign(/* @__PURE__ */ __name(function hrtime2(startTime) {
  const now = Date.now();
  const seconds = Math.trunc(now / 1e3);
  const nanos = now % 1e3 * 1e6;
  if (startTime) {
    let diffSeconds = seconds - startTime[0];
    let diffNanos = nanos - startTime[0];
    if (diffNanos < 0) {
      diffSeconds = diffSeconds - 1;
      diffNanos = 1e9 + diffNanos;
    }
    return [diffSeconds, diffNanos];
  }
  return [seconds, nanos];
}, "hrtime"), { bigint: /* @__PURE__ */ __name(function bigint() {
  return BigInt(Date.now() * 1e6);
}, "bigint") });

// node_modules/unenv/dist/runtime/node/internal/process/process.mjs
import { EventEmitter } from "node:events";

// node_modules/unenv/dist/runtime/node/internal/tty/read-stream.mjs
var ReadStream = class {
  static {
    __name(this, "ReadStream");
  }
  fd;
  isRaw = false;
  isTTY = false;
  constructor(fd) {
    this.fd = fd;
  }
  setRawMode(mode) {
    this.isRaw = mode;
    return this;
  }
};

// node_modules/unenv/dist/runtime/node/internal/tty/write-stream.mjs
var WriteStream = class {
  static {
    __name(this, "WriteStream");
  }
  fd;
  columns = 80;
  rows = 24;
  isTTY = false;
  constructor(fd) {
    this.fd = fd;
  }
  clearLine(dir3, callback) {
    callback && callback();
    return false;
  }
  clearScreenDown(callback) {
    callback && callback();
    return false;
  }
  cursorTo(x, y, callback) {
    callback && typeof callback === "function" && callback();
    return false;
  }
  moveCursor(dx, dy, callback) {
    callback && callback();
    return false;
  }
  getColorDepth(env2) {
    return 1;
  }
  hasColors(count3, env2) {
    return false;
  }
  getWindowSize() {
    return [this.columns, this.rows];
  }
  write(str, encoding, cb) {
    if (str instanceof Uint8Array) {
      str = new TextDecoder().decode(str);
    }
    try {
      console.log(str);
    } catch {
    }
    cb && typeof cb === "function" && cb();
    return false;
  }
};

// node_modules/unenv/dist/runtime/node/internal/process/node-version.mjs
var NODE_VERSION = "22.14.0";

// node_modules/unenv/dist/runtime/node/internal/process/process.mjs
var Process = class _Process extends EventEmitter {
  static {
    __name(this, "Process");
  }
  env;
  hrtime;
  nextTick;
  constructor(impl) {
    super();
    this.env = impl.env;
    this.hrtime = impl.hrtime;
    this.nextTick = impl.nextTick;
    for (const prop of [...Object.getOwnPropertyNames(_Process.prototype), ...Object.getOwnPropertyNames(EventEmitter.prototype)]) {
      const value = this[prop];
      if (typeof value === "function") {
        this[prop] = value.bind(this);
      }
    }
  }
  // --- event emitter ---
  emitWarning(warning, type, code) {
    console.warn(`${code ? `[${code}] ` : ""}${type ? `${type}: ` : ""}${warning}`);
  }
  emit(...args) {
    return super.emit(...args);
  }
  listeners(eventName) {
    return super.listeners(eventName);
  }
  // --- stdio (lazy initializers) ---
  #stdin;
  #stdout;
  #stderr;
  get stdin() {
    return this.#stdin ??= new ReadStream(0);
  }
  get stdout() {
    return this.#stdout ??= new WriteStream(1);
  }
  get stderr() {
    return this.#stderr ??= new WriteStream(2);
  }
  // --- cwd ---
  #cwd = "/";
  chdir(cwd2) {
    this.#cwd = cwd2;
  }
  cwd() {
    return this.#cwd;
  }
  // --- dummy props and getters ---
  arch = "";
  platform = "";
  argv = [];
  argv0 = "";
  execArgv = [];
  execPath = "";
  title = "";
  pid = 200;
  ppid = 100;
  get version() {
    return `v${NODE_VERSION}`;
  }
  get versions() {
    return { node: NODE_VERSION };
  }
  get allowedNodeEnvironmentFlags() {
    return /* @__PURE__ */ new Set();
  }
  get sourceMapsEnabled() {
    return false;
  }
  get debugPort() {
    return 0;
  }
  get throwDeprecation() {
    return false;
  }
  get traceDeprecation() {
    return false;
  }
  get features() {
    return {};
  }
  get release() {
    return {};
  }
  get connected() {
    return false;
  }
  get config() {
    return {};
  }
  get moduleLoadList() {
    return [];
  }
  constrainedMemory() {
    return 0;
  }
  availableMemory() {
    return 0;
  }
  uptime() {
    return 0;
  }
  resourceUsage() {
    return {};
  }
  // --- noop methods ---
  ref() {
  }
  unref() {
  }
  // --- unimplemented methods ---
  umask() {
    throw createNotImplementedError("process.umask");
  }
  getBuiltinModule() {
    return void 0;
  }
  getActiveResourcesInfo() {
    throw createNotImplementedError("process.getActiveResourcesInfo");
  }
  exit() {
    throw createNotImplementedError("process.exit");
  }
  reallyExit() {
    throw createNotImplementedError("process.reallyExit");
  }
  kill() {
    throw createNotImplementedError("process.kill");
  }
  abort() {
    throw createNotImplementedError("process.abort");
  }
  dlopen() {
    throw createNotImplementedError("process.dlopen");
  }
  setSourceMapsEnabled() {
    throw createNotImplementedError("process.setSourceMapsEnabled");
  }
  loadEnvFile() {
    throw createNotImplementedError("process.loadEnvFile");
  }
  disconnect() {
    throw createNotImplementedError("process.disconnect");
  }
  cpuUsage() {
    throw createNotImplementedError("process.cpuUsage");
  }
  setUncaughtExceptionCaptureCallback() {
    throw createNotImplementedError("process.setUncaughtExceptionCaptureCallback");
  }
  hasUncaughtExceptionCaptureCallback() {
    throw createNotImplementedError("process.hasUncaughtExceptionCaptureCallback");
  }
  initgroups() {
    throw createNotImplementedError("process.initgroups");
  }
  openStdin() {
    throw createNotImplementedError("process.openStdin");
  }
  assert() {
    throw createNotImplementedError("process.assert");
  }
  binding() {
    throw createNotImplementedError("process.binding");
  }
  // --- attached interfaces ---
  permission = { has: /* @__PURE__ */ notImplemented("process.permission.has") };
  report = {
    directory: "",
    filename: "",
    signal: "SIGUSR2",
    compact: false,
    reportOnFatalError: false,
    reportOnSignal: false,
    reportOnUncaughtException: false,
    getReport: /* @__PURE__ */ notImplemented("process.report.getReport"),
    writeReport: /* @__PURE__ */ notImplemented("process.report.writeReport")
  };
  finalization = {
    register: /* @__PURE__ */ notImplemented("process.finalization.register"),
    unregister: /* @__PURE__ */ notImplemented("process.finalization.unregister"),
    registerBeforeExit: /* @__PURE__ */ notImplemented("process.finalization.registerBeforeExit")
  };
  memoryUsage = Object.assign(() => ({
    arrayBuffers: 0,
    rss: 0,
    external: 0,
    heapTotal: 0,
    heapUsed: 0
  }), { rss: /* @__PURE__ */ __name(() => 0, "rss") });
  // --- undefined props ---
  mainModule = void 0;
  domain = void 0;
  // optional
  send = void 0;
  exitCode = void 0;
  channel = void 0;
  getegid = void 0;
  geteuid = void 0;
  getgid = void 0;
  getgroups = void 0;
  getuid = void 0;
  setegid = void 0;
  seteuid = void 0;
  setgid = void 0;
  setgroups = void 0;
  setuid = void 0;
  // internals
  _events = void 0;
  _eventsCount = void 0;
  _exiting = void 0;
  _maxListeners = void 0;
  _debugEnd = void 0;
  _debugProcess = void 0;
  _fatalException = void 0;
  _getActiveHandles = void 0;
  _getActiveRequests = void 0;
  _kill = void 0;
  _preload_modules = void 0;
  _rawDebug = void 0;
  _startProfilerIdleNotifier = void 0;
  _stopProfilerIdleNotifier = void 0;
  _tickCallback = void 0;
  _disconnect = void 0;
  _handleQueue = void 0;
  _pendingMessage = void 0;
  _channel = void 0;
  _send = void 0;
  _linkedBinding = void 0;
};

// node_modules/@cloudflare/unenv-preset/dist/runtime/node/process.mjs
var globalProcess = globalThis["process"];
var getBuiltinModule = globalProcess.getBuiltinModule;
var workerdProcess = getBuiltinModule("node:process");
var unenvProcess = new Process({
  env: globalProcess.env,
  hrtime,
  // `nextTick` is available from workerd process v1
  nextTick: workerdProcess.nextTick
});
var { exit, features, platform } = workerdProcess;
var {
  _channel,
  _debugEnd,
  _debugProcess,
  _disconnect,
  _events,
  _eventsCount,
  _exiting,
  _fatalException,
  _getActiveHandles,
  _getActiveRequests,
  _handleQueue,
  _kill,
  _linkedBinding,
  _maxListeners,
  _pendingMessage,
  _preload_modules,
  _rawDebug,
  _send,
  _startProfilerIdleNotifier,
  _stopProfilerIdleNotifier,
  _tickCallback,
  abort,
  addListener,
  allowedNodeEnvironmentFlags,
  arch,
  argv,
  argv0,
  assert: assert2,
  availableMemory,
  binding,
  channel,
  chdir,
  config,
  connected,
  constrainedMemory,
  cpuUsage,
  cwd,
  debugPort,
  disconnect,
  dlopen,
  domain,
  emit,
  emitWarning,
  env,
  eventNames,
  execArgv,
  execPath,
  exitCode,
  finalization,
  getActiveResourcesInfo,
  getegid,
  geteuid,
  getgid,
  getgroups,
  getMaxListeners,
  getuid,
  hasUncaughtExceptionCaptureCallback,
  hrtime: hrtime3,
  initgroups,
  kill,
  listenerCount,
  listeners,
  loadEnvFile,
  mainModule,
  memoryUsage,
  moduleLoadList,
  nextTick,
  off,
  on,
  once,
  openStdin,
  permission,
  pid,
  ppid,
  prependListener,
  prependOnceListener,
  rawListeners,
  reallyExit,
  ref,
  release,
  removeAllListeners,
  removeListener,
  report,
  resourceUsage,
  send,
  setegid,
  seteuid,
  setgid,
  setgroups,
  setMaxListeners,
  setSourceMapsEnabled,
  setuid,
  setUncaughtExceptionCaptureCallback,
  sourceMapsEnabled,
  stderr,
  stdin,
  stdout,
  throwDeprecation,
  title,
  traceDeprecation,
  umask,
  unref,
  uptime,
  version,
  versions
} = unenvProcess;
var _process = {
  abort,
  addListener,
  allowedNodeEnvironmentFlags,
  hasUncaughtExceptionCaptureCallback,
  setUncaughtExceptionCaptureCallback,
  loadEnvFile,
  sourceMapsEnabled,
  arch,
  argv,
  argv0,
  chdir,
  config,
  connected,
  constrainedMemory,
  availableMemory,
  cpuUsage,
  cwd,
  debugPort,
  dlopen,
  disconnect,
  emit,
  emitWarning,
  env,
  eventNames,
  execArgv,
  execPath,
  exit,
  finalization,
  features,
  getBuiltinModule,
  getActiveResourcesInfo,
  getMaxListeners,
  hrtime: hrtime3,
  kill,
  listeners,
  listenerCount,
  memoryUsage,
  nextTick,
  on,
  off,
  once,
  pid,
  platform,
  ppid,
  prependListener,
  prependOnceListener,
  rawListeners,
  release,
  removeAllListeners,
  removeListener,
  report,
  resourceUsage,
  setMaxListeners,
  setSourceMapsEnabled,
  stderr,
  stdin,
  stdout,
  title,
  throwDeprecation,
  traceDeprecation,
  umask,
  uptime,
  version,
  versions,
  // @ts-expect-error old API
  domain,
  initgroups,
  moduleLoadList,
  reallyExit,
  openStdin,
  assert: assert2,
  binding,
  send,
  exitCode,
  channel,
  getegid,
  geteuid,
  getgid,
  getgroups,
  getuid,
  setegid,
  seteuid,
  setgid,
  setgroups,
  setuid,
  permission,
  mainModule,
  _events,
  _eventsCount,
  _exiting,
  _maxListeners,
  _debugEnd,
  _debugProcess,
  _fatalException,
  _getActiveHandles,
  _getActiveRequests,
  _kill,
  _preload_modules,
  _rawDebug,
  _startProfilerIdleNotifier,
  _stopProfilerIdleNotifier,
  _tickCallback,
  _disconnect,
  _handleQueue,
  _pendingMessage,
  _channel,
  _send,
  _linkedBinding
};
var process_default = _process;

// node_modules/wrangler/_virtual_unenv_global_polyfill-@cloudflare-unenv-preset-node-process
globalThis.process = process_default;

// gateway/src/core/auth/api-key.ts
var HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
var utf8 = new TextEncoder();
var API_KEY_PREFIX = "tsk_";
var MAX_API_KEY_LENGTH = 256;
async function sha256Hex(text) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(text)));
  let out = "";
  for (const byte of digest) out += HEX[byte];
  return out;
}
__name(sha256Hex, "sha256Hex");
function constantTimeEqual(a, b) {
  const sameLength = a.length === b.length;
  const other = sameLength ? b : a;
  let diff = sameLength ? 0 : 1;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ other.charCodeAt(i);
  return diff === 0;
}
__name(constantTimeEqual, "constantTimeEqual");
function generateApiKey() {
  return API_KEY_PREFIX + base64Url(crypto.getRandomValues(new Uint8Array(32)));
}
__name(generateApiKey, "generateApiKey");
function generateId(prefix) {
  return `${prefix}${base64Url(crypto.getRandomValues(new Uint8Array(9))).replace(/[-_]/g, "x")}`;
}
__name(generateId, "generateId");
function base64Url(bytes) {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
__name(base64Url, "base64Url");
var KEY_CHARS = /^[\x21-\x7e]+$/;
function presentedKey(headers) {
  const authorization = headers.get("authorization");
  const apiKeyHeader = headers.get("x-api-key");
  let fromAuthorization;
  if (authorization !== null) {
    const match2 = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (match2 === null) return { kind: "malformed", reason: "the Authorization header must be 'Bearer <key>'" };
    fromAuthorization = match2[1];
  }
  const fromHeader = apiKeyHeader?.trim();
  if (fromAuthorization !== void 0 && fromHeader !== void 0 && fromHeader !== fromAuthorization) {
    return { kind: "malformed", reason: "the Authorization and x-api-key headers carry different keys" };
  }
  const key = fromAuthorization ?? fromHeader;
  if (key === void 0) return { kind: "missing" };
  if (key === "") return { kind: "malformed", reason: "the API key is empty" };
  if (key.length > MAX_API_KEY_LENGTH || !KEY_CHARS.test(key)) {
    return { kind: "malformed", reason: `the API key must be 1-${MAX_API_KEY_LENGTH} printable ASCII characters` };
  }
  return { kind: "key", key };
}
__name(presentedKey, "presentedKey");

// shared/src/errors/tessera-error.ts
var ERROR_CODES = [
  "INVALID_ARG",
  "NOT_FOUND",
  "UNAVAILABLE",
  "UNSUPPORTED",
  "INTERNAL",
  "ALREADY_EXISTS",
  "CANCELLED",
  "DEADLINE_EXCEEDED",
  "RESOURCE_EXHAUSTED",
  "UNKNOWN"
];
var TesseraError = class _TesseraError extends Error {
  constructor(code, message, options) {
    super(message, options?.cause === void 0 ? void 0 : { cause: options.cause });
    this.code = code;
    this.retryAfterMs = options?.retryAfterMs;
  }
  static {
    __name(this, "TesseraError");
  }
  name = "TesseraError";
  /** When set, the caller may retry after this many ms (HTTP `Retry-After`); used by admission and rate limits. */
  retryAfterMs;
  static invalidArg(message) {
    return new _TesseraError("INVALID_ARG", message);
  }
  static notFound(message) {
    return new _TesseraError("NOT_FOUND", message);
  }
  static unavailable(message) {
    return new _TesseraError("UNAVAILABLE", message);
  }
  static unsupported(message) {
    return new _TesseraError("UNSUPPORTED", message);
  }
  static internal(message, cause) {
    return new _TesseraError("INTERNAL", message, { cause });
  }
  static alreadyExists(message) {
    return new _TesseraError("ALREADY_EXISTS", message);
  }
  static cancelled(message) {
    return new _TesseraError("CANCELLED", message);
  }
  static deadlineExceeded(message) {
    return new _TesseraError("DEADLINE_EXCEEDED", message);
  }
  static resourceExhausted(message) {
    return new _TesseraError("RESOURCE_EXHAUSTED", message);
  }
};
function toTesseraError(value) {
  if (value instanceof TesseraError) return value;
  if (value instanceof Error) return TesseraError.internal(value.message, value);
  return TesseraError.internal(String(value));
}
__name(toTesseraError, "toTesseraError");

// shared/src/errors/status-map.ts
var GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16
};
var MAPPING = {
  INVALID_ARG: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  UNAVAILABLE: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
  UNSUPPORTED: { http: 501, grpc: GrpcStatus.UNIMPLEMENTED },
  INTERNAL: { http: 500, grpc: GrpcStatus.INTERNAL },
  ALREADY_EXISTS: { http: 400, grpc: GrpcStatus.ALREADY_EXISTS },
  CANCELLED: { http: 400, grpc: GrpcStatus.CANCELLED },
  DEADLINE_EXCEEDED: { http: 504, grpc: GrpcStatus.DEADLINE_EXCEEDED },
  RESOURCE_EXHAUSTED: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  UNKNOWN: { http: 400, grpc: GrpcStatus.UNKNOWN }
};
function httpStatusOf(code) {
  return MAPPING[code].http;
}
__name(httpStatusOf, "httpStatusOf");
function errorBody(error3) {
  return { error: error3.message };
}
__name(errorBody, "errorBody");
function errorCodeFromHttp(status) {
  if (status === 404) return "NOT_FOUND";
  if (status === 503) return "UNAVAILABLE";
  if (status === 501) return "UNSUPPORTED";
  if (status === 504) return "DEADLINE_EXCEEDED";
  if (status === 429) return "RESOURCE_EXHAUSTED";
  if (status >= 500) return "INTERNAL";
  return "INVALID_ARG";
}
__name(errorCodeFromHttp, "errorCodeFromHttp");

// gateway/src/core/http/access-error.ts
var AccessError = class _AccessError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
  static {
    __name(this, "AccessError");
  }
  name = "AccessError";
  static unauthenticated(message) {
    return new _AccessError(401, message);
  }
  static forbidden(message) {
    return new _AccessError(403, message);
  }
};

// gateway/src/core/auth/authenticate.ts
var AuthRejected = class extends AccessError {
  constructor(status, message, reason) {
    super(status, message);
    this.reason = reason;
  }
  static {
    __name(this, "AuthRejected");
  }
};
async function authenticate(store, tiers, headers) {
  const presented = presentedKey(headers);
  if (presented.kind === "missing") {
    throw new AuthRejected(401, "missing API key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'", "missing");
  }
  if (presented.kind === "malformed") throw new AuthRejected(401, `malformed API key: ${presented.reason}`, "malformed");
  const hash = await sha256Hex(presented.key);
  const found = await store.findByKeyHash(hash);
  if (found === void 0 || found.key.revoked || !constantTimeEqual(hash, found.key.hash)) {
    throw new AuthRejected(401, "unknown or revoked API key", "unknown_key");
  }
  const { tenant, key } = found;
  if (tenant.disabled === true) throw new AuthRejected(403, `tenant '${tenant.id}' is disabled`, "disabled");
  const tier = Object.hasOwn(tiers, tenant.tier) ? tiers[tenant.tier] : void 0;
  if (tier === void 0) {
    throw TesseraError.internal(`tenant '${tenant.id}' belongs to tier '${tenant.tier}', which this gateway does not configure`);
  }
  return { tenant, tier, keyId: key.id };
}
__name(authenticate, "authenticate");
function listAllows(list, model) {
  return list === void 0 || list.includes("*") || list.includes(model);
}
__name(listAllows, "listAllows");
function mayUseModel(auth, model) {
  return listAllows(auth.tier.allowedModels, model) && listAllows(auth.tenant.allowedModels, model);
}
__name(mayUseModel, "mayUseModel");
function requireModel(auth, model) {
  if (!mayUseModel(auth, model)) {
    throw new AuthRejected(403, `tenant '${auth.tenant.id}' may not use model '${model}'`, "forbidden_model");
  }
}
__name(requireModel, "requireModel");
async function authenticateAdmin(adminKeyHash, headers) {
  if (adminKeyHash === null) {
    throw new AuthRejected(403, "the admin API is disabled: configure adminKeyHash or TESSERA_ADMIN_KEY", "admin");
  }
  const presented = presentedKey(headers);
  if (presented.kind !== "key") {
    throw new AuthRejected(401, presented.kind === "missing" ? "missing admin key" : `malformed admin key: ${presented.reason}`, "admin");
  }
  if (!constantTimeEqual(await sha256Hex(presented.key), adminKeyHash)) {
    throw new AuthRejected(401, "invalid admin key", "admin");
  }
}
__name(authenticateAdmin, "authenticateAdmin");

// gateway/src/core/auth/seed-tenants.ts
async function seedTenants(store, tenants, now) {
  for (const seed of tenants) {
    if (await store.getTenant(seed.id) === void 0) {
      const tenant = {
        id: seed.id,
        name: seed.name,
        tier: seed.tier,
        ...seed.allowedModels === void 0 ? {} : { allowedModels: seed.allowedModels }
      };
      await store.putTenant(tenant);
    }
    const stored = new Set((await store.listKeys(seed.id)).map((k) => k.id));
    for (const key of seed.keys) {
      if (!stored.has(key.id)) await store.putKey({ id: key.id, tenantId: seed.id, hash: key.hash, createdAt: now, revoked: false });
    }
  }
}
__name(seedTenants, "seedTenants");

// node_modules/hono/dist/http-exception.js
var HTTPException = class extends Error {
  static {
    __name(this, "HTTPException");
  }
  res;
  status;
  /**
  * Creates an instance of `HTTPException`.
  * @param status - HTTP status code for the exception. Defaults to 500.
  * @param options - Additional options for the exception.
  */
  constructor(status = 500, options) {
    super(options?.message, { cause: options?.cause });
    this.res = options?.res;
    this.status = status;
  }
  /**
  * Returns the response object associated with the exception.
  * If a response object is not provided, a new response is created with the error message and status code.
  * @returns The response object.
  */
  getResponse() {
    if (this.res) return new Response(this.res.body, {
      status: this.status,
      headers: this.res.headers
    });
    return new Response(this.message, { status: this.status });
  }
};

// node_modules/hono/dist/request/constants.js
var GET_MATCH_RESULT = /* @__PURE__ */ Symbol();

// node_modules/hono/dist/utils/buffer.js
var bufferToFormData = /* @__PURE__ */ __name((arrayBuffer, contentType) => {
  return new Response(arrayBuffer, { headers: { "Content-Type": contentType.replace(/^[^;]+/, (mediaType) => mediaType.toLowerCase()) } }).formData();
}, "bufferToFormData");

// node_modules/hono/dist/utils/body.js
var MAX_NESTED_OBJECTS = 1e4;
var isRawRequest = /* @__PURE__ */ __name((request) => "headers" in request, "isRawRequest");
var parseBody = /* @__PURE__ */ __name(async (request, options = /* @__PURE__ */ Object.create(null)) => {
  const { all = false, dot = false } = options;
  const mediaType = (isRawRequest(request) ? request.headers : request.raw.headers).get("Content-Type")?.split(";")[0].trim().toLowerCase();
  if (mediaType === "multipart/form-data" || mediaType === "application/x-www-form-urlencoded") return parseFormData(request, {
    all,
    dot
  });
  return {};
}, "parseBody");
async function parseFormData(request, options) {
  if (!isRawRequest(request) && request.bodyCache.formData) return convertFormDataToBodyData(await request.bodyCache.formData, options);
  const headers = isRawRequest(request) ? request.headers : request.raw.headers;
  const arrayBuffer = await request.arrayBuffer();
  const formDataPromise = bufferToFormData(arrayBuffer, headers.get("Content-Type") || "");
  if (!isRawRequest(request)) request.bodyCache.formData = formDataPromise;
  const formData = await formDataPromise;
  if (formData) return convertFormDataToBodyData(formData, options);
  return {};
}
__name(parseFormData, "parseFormData");
function convertFormDataToBodyData(formData, options) {
  const form = /* @__PURE__ */ Object.create(null);
  const nestingState = { count: 0 };
  formData.forEach((value, key) => {
    if (!(options.all || key.endsWith("[]"))) form[key] = value;
    else handleParsingAllValues(form, key, value);
  });
  if (options.dot) Object.entries(form).forEach(([key, value]) => {
    if (key.includes(".")) {
      handleParsingNestedValues(form, key, value, nestingState);
      delete form[key];
    }
  });
  return form;
}
__name(convertFormDataToBodyData, "convertFormDataToBodyData");
var handleParsingAllValues = /* @__PURE__ */ __name((form, key, value) => {
  if (form[key] !== void 0) {
    if (Array.isArray(form[key])) form[key].push(value);
    else form[key] = [form[key], value];
  } else if (!key.endsWith("[]")) form[key] = value;
  else form[key] = [value];
}, "handleParsingAllValues");
var handleParsingNestedValues = /* @__PURE__ */ __name((form, key, value, state) => {
  if (/(?:^|\.)__proto__\./.test(key)) return;
  let nestedForm = form;
  const keys = key.split(".", 34);
  if (keys.length > 33) throwNestingLimitExceeded();
  keys.forEach((key2, index) => {
    if (index === keys.length - 1) nestedForm[key2] = value;
    else {
      if (!nestedForm[key2] || typeof nestedForm[key2] !== "object" || Array.isArray(nestedForm[key2]) || nestedForm[key2] instanceof File) {
        if (state.count++ >= MAX_NESTED_OBJECTS) throwNestingLimitExceeded();
        nestedForm[key2] = /* @__PURE__ */ Object.create(null);
      }
      nestedForm = nestedForm[key2];
    }
  });
}, "handleParsingNestedValues");
var throwNestingLimitExceeded = /* @__PURE__ */ __name(() => {
  throw new Error("Nesting limit exceeded");
}, "throwNestingLimitExceeded");

// node_modules/hono/dist/utils/url.js
var splitPath = /* @__PURE__ */ __name((path) => {
  const paths = path.split("/");
  if (paths[0] === "") paths.shift();
  return paths;
}, "splitPath");
var splitRoutingPath = /* @__PURE__ */ __name((routePath2) => {
  const { groups, path } = extractGroupsFromPath(routePath2);
  const paths = splitPath(path);
  return replaceGroupMarks(paths, groups);
}, "splitRoutingPath");
var extractGroupsFromPath = /* @__PURE__ */ __name((path) => {
  const groups = [];
  path = path.replace(/\{[^}]+\}/g, (match2, index) => {
    const mark = `@${index}`;
    groups.push([mark, match2]);
    return mark;
  });
  return {
    groups,
    path
  };
}, "extractGroupsFromPath");
var replaceGroupMarks = /* @__PURE__ */ __name((paths, groups) => {
  for (let i = groups.length - 1; i >= 0; i--) {
    const [mark] = groups[i];
    for (let j = paths.length - 1; j >= 0; j--) if (paths[j].includes(mark)) {
      paths[j] = paths[j].replace(mark, groups[i][1]);
      break;
    }
  }
  return paths;
}, "replaceGroupMarks");
var patternCache = {};
var getPattern = /* @__PURE__ */ __name((label, next) => {
  if (label === "*") return "*";
  const match2 = label.match(/^\:([^\{\}]+)(?:\{(.+)\})?$/);
  if (match2) {
    const cacheKey = `${label}#${next}`;
    if (!patternCache[cacheKey]) {
      if (match2[2]) patternCache[cacheKey] = next && next[0] !== ":" && next[0] !== "*" ? [
        cacheKey,
        match2[1],
        new RegExp(`^${match2[2]}(?=/${next})`)
      ] : [
        label,
        match2[1],
        new RegExp(`^${match2[2]}$`)
      ];
      else patternCache[cacheKey] = [
        label,
        match2[1],
        true
      ];
    }
    return patternCache[cacheKey];
  }
  return null;
}, "getPattern");
var tryDecode = /* @__PURE__ */ __name((str, decoder) => {
  try {
    return decoder(str);
  } catch {
    return str.replace(/(?:%[0-9A-Fa-f]{2})+/g, (match2) => {
      try {
        return decoder(match2);
      } catch {
        return match2;
      }
    });
  }
}, "tryDecode");
var decodeURIWithPreservedPercent = /* @__PURE__ */ __name((value) => decodeURI(value.includes("%25") ? value.replace(/%25/g, "%2525") : value), "decodeURIWithPreservedPercent");
var getPath = /* @__PURE__ */ __name((request) => {
  const url = request.url;
  const start = url.indexOf("/", url.indexOf(":") + 4);
  let i = start;
  for (; i < url.length; i++) {
    const charCode = url.charCodeAt(i);
    if (charCode === 37) {
      const queryIndex = url.indexOf("?", i);
      const hashIndex = url.indexOf("#", i);
      const end = queryIndex === -1 ? hashIndex === -1 ? void 0 : hashIndex : hashIndex === -1 ? queryIndex : Math.min(queryIndex, hashIndex);
      const path = url.slice(start, end);
      const decoded = tryDecode(path, decodeURIWithPreservedPercent);
      if (/%(?![0-9A-Fa-f]{2})/.test(path)) {
        const rewritten = new URL("http://localhost");
        rewritten.pathname = decoded.replace(/[\\\t\n\r]/g, encodeURIComponent);
        if (tryDecode(rewritten.pathname, decodeURIWithPreservedPercent) !== decoded) return tryDecode(path.replace(/%(?![0-9A-Fa-f]{2})/g, "%25"), decodeURIWithPreservedPercent);
      }
      return decoded;
    } else if (charCode === 63 || charCode === 35) break;
  }
  return url.slice(start, i);
}, "getPath");
var getPathNoStrict = /* @__PURE__ */ __name((request) => {
  const result = getPath(request);
  return result.length > 1 && result.at(-1) === "/" ? result.slice(0, -1) : result;
}, "getPathNoStrict");
var mergePath = /* @__PURE__ */ __name((base, sub, ...rest) => {
  if (rest.length) sub = mergePath(sub, ...rest);
  return `${base?.[0] === "/" ? "" : "/"}${base}${sub === "/" ? "" : `${base?.at(-1) === "/" ? "" : "/"}${sub?.[0] === "/" ? sub.slice(1) : sub}`}`;
}, "mergePath");
var checkOptionalParameter = /* @__PURE__ */ __name((path) => {
  if (path.charCodeAt(path.length - 1) !== 63 || !path.includes(":")) return null;
  const segments = path.split("/");
  const results = [];
  let basePath = "";
  segments.forEach((segment) => {
    if (segment !== "" && !/\:/.test(segment)) basePath += "/" + segment;
    else if (/\:/.test(segment)) {
      if (segment.charCodeAt(segment.length - 1) === 63) {
        if (results.length === 0 && basePath === "") results.push("/");
        else results.push(basePath);
        const optionalSegment = segment.slice(0, -1);
        basePath += "/" + optionalSegment;
        results.push(basePath);
      } else basePath += "/" + segment;
    }
  });
  return results.filter((v, i, a) => a.indexOf(v) === i);
}, "checkOptionalParameter");
var tryDecodeURIComponent = /* @__PURE__ */ __name((str) => str.indexOf("%") !== -1 ? tryDecode(str, decodeURIComponent_) : str, "tryDecodeURIComponent");
var _decodeURI = /* @__PURE__ */ __name((value) => {
  if (value.indexOf("+") !== -1) value = value.replace(/\+/g, " ");
  return tryDecodeURIComponent(value);
}, "_decodeURI");
var _getQueryParam = /* @__PURE__ */ __name((url, key, multiple) => {
  const hashIndex = url.indexOf("#", 8);
  if (hashIndex !== -1) url = url.slice(0, hashIndex);
  let encoded;
  if (!multiple && key && !/[%+&=]/.test(key)) {
    const queryIndex = url.indexOf("?", 8);
    let keyIndex2 = queryIndex;
    if (keyIndex2 === -1) return;
    if (!url.startsWith(key, keyIndex2 + 1)) keyIndex2 = url.indexOf(`&${key}`, keyIndex2 + 1);
    while (keyIndex2 !== -1) {
      const trailingKeyCode = url.charCodeAt(keyIndex2 + key.length + 1);
      if (trailingKeyCode === 61 || trailingKeyCode === 38 || isNaN(trailingKeyCode)) {
        if (keyIndex2 > queryIndex && /(?:^|&)[^=&]*[%+]/.test(url.slice(queryIndex + 1, keyIndex2))) break;
        if (trailingKeyCode === 61) {
          const valueIndex = keyIndex2 + key.length + 2;
          const endIndex = url.indexOf("&", valueIndex);
          return _decodeURI(url.slice(valueIndex, endIndex === -1 ? void 0 : endIndex));
        }
        return "";
      }
      keyIndex2 = url.indexOf(`&${key}`, keyIndex2 + 1);
    }
    encoded = /[%+]/.test(url);
    if (!encoded) return;
  }
  const results = /* @__PURE__ */ Object.create(null);
  encoded ??= /[%+]/.test(url);
  let keyIndex = url.indexOf("?", 8);
  while (keyIndex !== -1) {
    const nextKeyIndex = url.indexOf("&", keyIndex + 1);
    let valueIndex = url.indexOf("=", keyIndex);
    if (valueIndex > nextKeyIndex && nextKeyIndex !== -1) valueIndex = -1;
    let name = url.slice(keyIndex + 1, valueIndex === -1 ? nextKeyIndex === -1 ? void 0 : nextKeyIndex : valueIndex);
    if (encoded) name = _decodeURI(name);
    keyIndex = nextKeyIndex;
    if (name === "") continue;
    let value;
    if (valueIndex === -1) value = "";
    else {
      value = url.slice(valueIndex + 1, nextKeyIndex === -1 ? void 0 : nextKeyIndex);
      if (encoded) value = _decodeURI(value);
    }
    if (multiple) {
      if (!(results[name] && Array.isArray(results[name]))) results[name] = [];
      results[name].push(value);
    } else results[name] ??= value;
  }
  return key ? results[key] : results;
}, "_getQueryParam");
var getQueryParam = _getQueryParam;
var getQueryParams = /* @__PURE__ */ __name((url, key) => {
  return _getQueryParam(url, key, true);
}, "getQueryParams");
var decodeURIComponent_ = decodeURIComponent;

// node_modules/hono/dist/request.js
var HonoRequest = class {
  static {
    __name(this, "HonoRequest");
  }
  /**
  * `.raw` can get the raw Request object.
  *
  * @see {@link https://hono.dev/docs/api/request#raw}
  *
  * @example
  * ```ts
  * // For Cloudflare Workers
  * app.post('/', async (c) => {
  *   const metadata = c.req.raw.cf?.hostMetadata?
  *   ...
  * })
  * ```
  */
  raw;
  #validatedData;
  #matchResult;
  routeIndex = 0;
  /**
  * `.path` can get the pathname of the request.
  *
  * @see {@link https://hono.dev/docs/api/request#path}
  *
  * @example
  * ```ts
  * app.get('/about/me', (c) => {
  *   const pathname = c.req.path // `/about/me`
  * })
  * ```
  */
  path;
  bodyCache = {};
  constructor(request, path = "/", matchResult = [[]]) {
    this.raw = request;
    this.path = path;
    this.#matchResult = matchResult;
  }
  param(key) {
    return key ? this.#getDecodedParam(key) : this.#getAllDecodedParams();
  }
  #getDecodedParam(key) {
    const paramKey = this.#matchResult[0][this.routeIndex]?.[1][key];
    const param = this.#getParamValue(paramKey);
    return param && tryDecodeURIComponent(param);
  }
  #getAllDecodedParams() {
    const decoded = {};
    const keys = Object.keys(this.#matchResult[0][this.routeIndex]?.[1] ?? {});
    for (const key of keys) {
      const value = this.#getParamValue(this.#matchResult[0][this.routeIndex][1][key]);
      if (value !== void 0) decoded[key] = tryDecodeURIComponent(value);
    }
    return decoded;
  }
  #getParamValue(paramKey) {
    return this.#matchResult[1] ? this.#matchResult[1][paramKey] : paramKey;
  }
  query(key) {
    return getQueryParam(this.url, key);
  }
  queries(key) {
    return getQueryParams(this.url, key);
  }
  header(name) {
    if (name) return this.raw.headers.get(name) ?? void 0;
    const headerData = /* @__PURE__ */ Object.create(null);
    this.raw.headers.forEach((value, key) => {
      headerData[key] = value;
    });
    return headerData;
  }
  async parseBody(options) {
    return parseBody(this, options);
  }
  #cachedBody = /* @__PURE__ */ __name((key) => {
    const { bodyCache, raw: raw2 } = this;
    const cachedBody = bodyCache[key];
    if (cachedBody) return cachedBody;
    for (const anyCachedKey in bodyCache) return bodyCache[anyCachedKey].then((body) => {
      if (anyCachedKey === "json") body = JSON.stringify(body);
      const contentType = anyCachedKey === "formData" ? void 0 : raw2.headers.get("content-type");
      return new Response(body, { headers: contentType ? { "Content-Type": contentType } : void 0 })[key]();
    });
    return bodyCache[key] = raw2[key]();
  }, "#cachedBody");
  /**
  * `.json()` can parse Request body of type `application/json`
  *
  * @see {@link https://hono.dev/docs/api/request#json}
  *
  * @example
  * ```ts
  * app.post('/entry', async (c) => {
  *   const body = await c.req.json()
  * })
  * ```
  */
  json() {
    return this.#cachedBody("text").then((text) => JSON.parse(text));
  }
  /**
  * `.text()` can parse Request body of type `text/plain`
  *
  * @see {@link https://hono.dev/docs/api/request#text}
  *
  * @example
  * ```ts
  * app.post('/entry', async (c) => {
  *   const body = await c.req.text()
  * })
  * ```
  */
  text() {
    return this.#cachedBody("text");
  }
  /**
  * `.arrayBuffer()` parse Request body as an `ArrayBuffer`
  *
  * @see {@link https://hono.dev/docs/api/request#arraybuffer}
  *
  * @example
  * ```ts
  * app.post('/entry', async (c) => {
  *   const body = await c.req.arrayBuffer()
  * })
  * ```
  */
  arrayBuffer() {
    return this.#cachedBody("arrayBuffer");
  }
  /**
  * `.bytes()` parses the request body as a `Uint8Array`.
  *
  * @see {@link https://hono.dev/docs/api/request#bytes}
  *
  * @example
  * ```ts
  * app.post('/entry', async (c) => {
  *   const body = await c.req.bytes()
  * })
  * ```
  */
  bytes() {
    return this.#cachedBody("arrayBuffer").then((buffer) => new Uint8Array(buffer));
  }
  /**
  * Parses the request body as a `Blob`.
  * @example
  * ```ts
  * app.post('/entry', async (c) => {
  *   const body = await c.req.blob();
  * });
  * ```
  * @see https://hono.dev/docs/api/request#blob
  */
  blob() {
    return this.#cachedBody("blob");
  }
  /**
  * Parses the request body as `FormData`.
  * @example
  * ```ts
  * app.post('/entry', async (c) => {
  *   const body = await c.req.formData();
  * });
  * ```
  * @see https://hono.dev/docs/api/request#formdata
  */
  formData() {
    return this.#cachedBody("formData");
  }
  /**
  * Adds validated data to the request.
  *
  * @param target - The target of the validation.
  * @param data - The validated data to add.
  */
  addValidatedData(target, data) {
    (this.#validatedData ??= {})[target] = data;
  }
  valid(target) {
    return this.#validatedData?.[target];
  }
  /**
  * `.url` can get the request url strings.
  *
  * @see {@link https://hono.dev/docs/api/request#url}
  *
  * @example
  * ```ts
  * app.get('/about/me', (c) => {
  *   const url = c.req.url // `http://localhost:8787/about/me`
  *   ...
  * })
  * ```
  */
  get url() {
    return this.raw.url;
  }
  /**
  * `.method` can get the method name of the request.
  *
  * @see {@link https://hono.dev/docs/api/request#method}
  *
  * @example
  * ```ts
  * app.get('/about/me', (c) => {
  *   const method = c.req.method // `GET`
  * })
  * ```
  */
  get method() {
    return this.raw.method;
  }
  get [GET_MATCH_RESULT]() {
    return this.#matchResult;
  }
  /**
  * `.matchedRoutes` can return a matched route in the handler
  *
  * @deprecated
  *
  * Use matchedRoutes helper defined in "hono/route" instead.
  *
  * @see {@link https://hono.dev/docs/api/request#matchedroutes}
  *
  * @example
  * ```ts
  * app.use('*', async function logger(c, next) {
  *   await next()
  *   c.req.matchedRoutes.forEach(({ handler, method, path }, i) => {
  *     const name = handler.name || (handler.length < 2 ? '[handler]' : '[middleware]')
  *     console.log(
  *       method,
  *       ' ',
  *       path,
  *       ' '.repeat(Math.max(10 - path.length, 0)),
  *       name,
  *       i === c.req.routeIndex ? '<- respond from here' : ''
  *     )
  *   })
  * })
  * ```
  */
  get matchedRoutes() {
    return this.#matchResult[0].map(([[, route]]) => route);
  }
  /**
  * `.routePath` can retrieve the path registered within the handler
  *
  * @deprecated
  *
  * Use routePath helper defined in "hono/route" instead.
  *
  * @see {@link https://hono.dev/docs/api/request#routepath}
  *
  * @example
  * ```ts
  * app.get('/posts/:id', (c) => {
  *   return c.json({ path: c.req.routePath })
  * })
  * ```
  */
  get routePath() {
    return this.#matchResult[0].map(([[, route]]) => route)[this.routeIndex].path;
  }
};

// node_modules/hono/dist/utils/html.js
var HtmlEscapedCallbackPhase = {
  Stringify: 1,
  BeforeStream: 2,
  Stream: 3
};
var raw = /* @__PURE__ */ __name((value, callbacks) => {
  const escapedString = new String(value);
  escapedString.isEscaped = true;
  escapedString.callbacks = callbacks;
  return escapedString;
}, "raw");
var resolveCallback = /* @__PURE__ */ __name(async (str, phase, preserveCallbacks, context2, buffer) => {
  if (typeof str === "object" && !(str instanceof String)) {
    if (!(str instanceof Promise)) str = str.toString();
    if (str instanceof Promise) str = await str;
  }
  const callbacks = str.callbacks;
  if (!callbacks?.length) return Promise.resolve(str);
  if (buffer) buffer[0] += str;
  else buffer = [str];
  const resStr = Promise.all(callbacks.map((c) => c({
    phase,
    buffer,
    context: context2
  }))).then((res) => Promise.all(res.filter(Boolean).map((str2) => resolveCallback(str2, phase, false, context2, buffer))).then(() => buffer[0]));
  if (preserveCallbacks) return raw(await resStr, callbacks);
  else return resStr;
}, "resolveCallback");

// node_modules/hono/dist/context.js
var TEXT_PLAIN = "text/plain; charset=UTF-8";
var setDefaultContentType = /* @__PURE__ */ __name((contentType, headers) => {
  return {
    "Content-Type": contentType,
    ...headers
  };
}, "setDefaultContentType");
var createResponseInstance = /* @__PURE__ */ __name((body, init) => new Response(body, init), "createResponseInstance");
var Context = class {
  static {
    __name(this, "Context");
  }
  #rawRequest;
  #req;
  /**
  * `.env` can get bindings (environment variables, secrets, KV namespaces, D1 database, R2 bucket etc.) in Cloudflare Workers.
  *
  * @see {@link https://hono.dev/docs/api/context#env}
  *
  * @example
  * ```ts
  * // Environment object for Cloudflare Workers
  * app.get('*', async c => {
  *   const counter = c.env.COUNTER
  * })
  * ```
  */
  env = {};
  #var;
  finalized = false;
  /**
  * `.error` can get the error object from the middleware if the Handler throws an error.
  *
  * @see {@link https://hono.dev/docs/api/context#error}
  *
  * @example
  * ```ts
  * app.use('*', async (c, next) => {
  *   await next()
  *   if (c.error) {
  *     // do something...
  *   }
  * })
  * ```
  */
  error;
  #status;
  #executionCtx;
  #res;
  #layout;
  #renderer;
  #notFoundHandler;
  #preparedHeaders;
  #matchResult;
  #path;
  /**
  * Creates an instance of the Context class.
  *
  * @param req - The Request object.
  * @param options - Optional configuration options for the context.
  */
  constructor(req, options) {
    this.#rawRequest = req;
    if (options) {
      this.#executionCtx = options.executionCtx;
      this.env = options.env;
      this.#notFoundHandler = options.notFoundHandler;
      this.#path = options.path;
      this.#matchResult = options.matchResult;
    }
  }
  /**
  * `.req` is the instance of {@link HonoRequest}.
  */
  get req() {
    this.#req ??= new HonoRequest(this.#rawRequest, this.#path, this.#matchResult);
    return this.#req;
  }
  /**
  * @see {@link https://hono.dev/docs/api/context#event}
  * The FetchEvent associated with the current request.
  *
  * @throws Will throw an error if the context does not have a FetchEvent.
  */
  get event() {
    if (this.#executionCtx && "respondWith" in this.#executionCtx) return this.#executionCtx;
    else throw Error("This context has no FetchEvent");
  }
  /**
  * @see {@link https://hono.dev/docs/api/context#executionctx}
  * The ExecutionContext associated with the current request.
  *
  * @throws Will throw an error if the context does not have an ExecutionContext.
  */
  get executionCtx() {
    if (this.#executionCtx) return this.#executionCtx;
    else throw Error("This context has no ExecutionContext");
  }
  /**
  * @see {@link https://hono.dev/docs/api/context#res}
  * The Response object for the current request.
  */
  get res() {
    return this.#res ||= createResponseInstance(null, { headers: this.#preparedHeaders ??= new Headers() });
  }
  /**
  * Sets the Response object for the current request.
  *
  * @param _res - The Response object to set.
  */
  set res(_res) {
    if (this.#res && _res) {
      _res = createResponseInstance(_res.body, _res);
      for (const [k, v] of this.#res.headers.entries()) {
        if (k === "content-type") continue;
        if (k === "set-cookie") {
          const cookies = this.#res.headers.getSetCookie();
          _res.headers.delete("set-cookie");
          for (const cookie of cookies) _res.headers.append("set-cookie", cookie);
        } else _res.headers.set(k, v);
      }
    }
    this.#res = _res;
    this.finalized = true;
  }
  /**
  * `.render()` can create a response within a layout.
  *
  * @see {@link https://hono.dev/docs/api/context#render-setrenderer}
  *
  * @example
  * ```ts
  * app.get('/', (c) => {
  *   return c.render('Hello!')
  * })
  * ```
  */
  render = /* @__PURE__ */ __name((...args) => {
    this.#renderer ??= (content) => this.html(content);
    return this.#renderer(...args);
  }, "render");
  /**
  * Sets the layout for the response.
  *
  * @param layout - The layout to set.
  * @returns The layout function.
  */
  setLayout = /* @__PURE__ */ __name((layout) => this.#layout = layout, "setLayout");
  /**
  * Gets the current layout for the response.
  *
  * @returns The current layout function.
  */
  getLayout = /* @__PURE__ */ __name(() => this.#layout, "getLayout");
  /**
  * `.setRenderer()` can set the layout in the custom middleware.
  *
  * @see {@link https://hono.dev/docs/api/context#render-setrenderer}
  *
  * @example
  * ```tsx
  * app.use('*', async (c, next) => {
  *   c.setRenderer((content) => {
  *     return c.html(
  *       <html>
  *         <body>
  *           <p>{content}</p>
  *         </body>
  *       </html>
  *     )
  *   })
  *   await next()
  * })
  * ```
  */
  setRenderer = /* @__PURE__ */ __name((renderer) => {
    this.#renderer = renderer;
  }, "setRenderer");
  /**
  * `.header()` can set headers.
  *
  * @see {@link https://hono.dev/docs/api/context#header}
  *
  * @example
  * ```ts
  * app.get('/welcome', (c) => {
  *   // Set headers
  *   c.header('X-Message', 'Hello!')
  *   c.header('Content-Type', 'text/plain')
  *
  *   // Append multiple headers using the append option (e.g. Vary)
  *   c.header('Vary', 'Accept-Encoding', { append: true })
  *   c.header('Vary', 'User-Agent', { append: true })
  *
  *   return c.body('Thank you for coming')
  * })
  * ```
  */
  header = /* @__PURE__ */ __name((name, value, options) => {
    if (this.finalized && !this.#res.bodyUsed) this.#res = createResponseInstance(this.#res.body, this.#res);
    const headers = this.#res ? this.#res.headers : this.#preparedHeaders ??= new Headers();
    if (value === void 0) headers.delete(name);
    else if (options?.append) headers.append(name, value);
    else headers.set(name, value);
  }, "header");
  status = /* @__PURE__ */ __name((status) => {
    this.#status = status;
  }, "status");
  /**
  * `.set()` can set the value specified by the key.
  *
  * @see {@link https://hono.dev/docs/api/context#set-get}
  *
  * @example
  * ```ts
  * app.use('*', async (c, next) => {
  *   c.set('message', 'Hono is hot!!')
  *   await next()
  * })
  * ```
  */
  set = /* @__PURE__ */ __name((key, value) => {
    this.#var ??= /* @__PURE__ */ new Map();
    this.#var.set(key, value);
  }, "set");
  /**
  * `.get()` can use the value specified by the key.
  *
  * @see {@link https://hono.dev/docs/api/context#set-get}
  *
  * @example
  * ```ts
  * app.get('/', (c) => {
  *   const message = c.get('message')
  *   return c.text(`The message is "${message}"`)
  * })
  * ```
  */
  get = /* @__PURE__ */ __name((key) => {
    return this.#var ? this.#var.get(key) : void 0;
  }, "get");
  /**
  * `.var` can access the value of a variable.
  *
  * @see {@link https://hono.dev/docs/api/context#var}
  *
  * @example
  * ```ts
  * const result = c.var.client.oneMethod()
  * ```
  */
  get var() {
    if (!this.#var) return {};
    return Object.fromEntries(this.#var);
  }
  #newResponse(data, arg, headers) {
    let responseHeaders = this.#res ? new Headers(this.#res.headers) : this.#preparedHeaders;
    if (typeof arg === "object" && arg.headers) {
      responseHeaders ??= new Headers();
      for (const [key, value] of new Headers(arg.headers)) if (key === "set-cookie") responseHeaders.append(key, value);
      else responseHeaders.set(key, value);
    }
    if (headers) {
      if (!responseHeaders) {
        let count3 = 0;
        for (const k in headers) if (++count3 > 1 || typeof headers[k] !== "string") {
          responseHeaders = new Headers();
          break;
        }
      }
      if (responseHeaders) for (const k in headers) {
        const v = headers[k];
        if (typeof v === "string") responseHeaders.set(k, v);
        else {
          responseHeaders.delete(k);
          for (const v2 of v) responseHeaders.append(k, v2);
        }
      }
    }
    const status = typeof arg === "number" ? arg : arg?.status ?? this.#status;
    return createResponseInstance(data, {
      status,
      headers: responseHeaders ?? headers
    });
  }
  newResponse = /* @__PURE__ */ __name((...args) => this.#newResponse(...args), "newResponse");
  /**
  * `.body()` can return the HTTP response.
  * You can set headers with `.header()` and set HTTP status code with `.status`.
  * This can also be set in `.text()`, `.json()` and so on.
  *
  * @see {@link https://hono.dev/docs/api/context#body}
  *
  * @example
  * ```ts
  * app.get('/welcome', (c) => {
  *   // Set headers
  *   c.header('X-Message', 'Hello!')
  *   c.header('Content-Type', 'text/plain')
  *   // Set HTTP status code
  *   c.status(201)
  *
  *   // Return the response body
  *   return c.body('Thank you for coming')
  * })
  * ```
  */
  body = /* @__PURE__ */ __name((data, arg, headers) => this.#newResponse(data, arg, headers), "body");
  /**
  * `.text()` can render text as `Content-Type:text/plain`.
  *
  * @see {@link https://hono.dev/docs/api/context#text}
  *
  * @example
  * ```ts
  * app.get('/say', (c) => {
  *   return c.text('Hello!')
  * })
  * ```
  */
  text = /* @__PURE__ */ __name((text, arg, headers) => {
    return !this.#preparedHeaders && !this.#status && !arg && !headers && !this.finalized ? new Response(text) : this.#newResponse(text, arg, setDefaultContentType(TEXT_PLAIN, headers));
  }, "text");
  /**
  * `.json()` can render JSON as `Content-Type:application/json`.
  *
  * @see {@link https://hono.dev/docs/api/context#json}
  *
  * @example
  * ```ts
  * app.get('/api', (c) => {
  *   return c.json({ message: 'Hello!' })
  * })
  * ```
  */
  json = /* @__PURE__ */ __name((object, arg, headers) => {
    return this.#newResponse(JSON.stringify(object), arg, setDefaultContentType("application/json", headers));
  }, "json");
  html = /* @__PURE__ */ __name((html, arg, headers) => {
    const res = /* @__PURE__ */ __name((html2) => this.#newResponse(html2, arg, setDefaultContentType("text/html; charset=UTF-8", headers)), "res");
    return typeof html === "object" ? resolveCallback(html, HtmlEscapedCallbackPhase.Stringify, false, {}).then(res) : res(html);
  }, "html");
  /**
  * `.redirect()` can Redirect, default status code is 302.
  *
  * @see {@link https://hono.dev/docs/api/context#redirect}
  *
  * @example
  * ```ts
  * app.get('/redirect', (c) => {
  *   return c.redirect('/')
  * })
  * app.get('/redirect-permanently', (c) => {
  *   return c.redirect('/', 301)
  * })
  * ```
  */
  redirect = /* @__PURE__ */ __name((location, status) => {
    const locationString = String(location);
    this.header("Location", !/[^\x00-\xFF]/.test(locationString) ? locationString : encodeURI(locationString));
    return this.newResponse(null, status ?? 302);
  }, "redirect");
  /**
  * `.notFound()` can return the Not Found Response.
  *
  * @see {@link https://hono.dev/docs/api/context#notfound}
  *
  * @example
  * ```ts
  * app.get('/notfound', (c) => {
  *   return c.notFound()
  * })
  * ```
  */
  notFound = /* @__PURE__ */ __name(() => {
    this.#notFoundHandler ??= () => createResponseInstance();
    return this.#notFoundHandler(this);
  }, "notFound");
};

// node_modules/hono/dist/compose.js
var compose = /* @__PURE__ */ __name((middleware, onError, onNotFound) => {
  return (context2, next) => {
    let index = -1;
    return dispatch(0);
    async function dispatch(i) {
      if (i <= index) throw new Error("next() called multiple times");
      index = i;
      let res;
      let isError = false;
      let handler;
      if (middleware[i]) {
        handler = middleware[i][0][0];
        context2.req.routeIndex = i;
      } else handler = i === middleware.length && next || void 0;
      if (handler) try {
        res = await handler(context2, () => dispatch(i + 1));
      } catch (err) {
        if (err instanceof Error && onError) {
          context2.error = err;
          res = await onError(err, context2);
          isError = true;
        } else throw err;
      }
      else if (context2.finalized === false && onNotFound) res = await onNotFound(context2);
      if (res && (context2.finalized === false || isError)) context2.res = res;
      return context2;
    }
    __name(dispatch, "dispatch");
  };
}, "compose");

// node_modules/hono/dist/helper/route/index.js
var matchedRoutes = /* @__PURE__ */ __name((c) => c.req[GET_MATCH_RESULT][0].map(([[, route]]) => route), "matchedRoutes");
var routePath = /* @__PURE__ */ __name((c, index) => matchedRoutes(c).at(index ?? c.req.routeIndex)?.path ?? "", "routePath");

// node_modules/hono/dist/router.js
var METHODS = [
  "get",
  "post",
  "put",
  "delete",
  "options",
  "patch",
  "query"
];
var MESSAGE_MATCHER_IS_ALREADY_BUILT = "Can not add a route since the matcher is already built.";
var UnsupportedPathError = class extends Error {
  static {
    __name(this, "UnsupportedPathError");
  }
};

// node_modules/hono/dist/utils/constants.js
var COMPOSED_HANDLER = "__COMPOSED_HANDLER";

// node_modules/hono/dist/utils/mount.js
var countTrailingSlashes = /* @__PURE__ */ __name((path) => {
  let index = path.length;
  while (index > 0 && path.charCodeAt(index - 1) === 47) index--;
  return path.length - index;
}, "countTrailingSlashes");
var getPathPrefixLength = /* @__PURE__ */ __name((c, pathPrefix, routePath2) => {
  if (!/[:*]/.test(pathPrefix)) return pathPrefix.length;
  const path = c.req.path;
  const matchResult = c.req[GET_MATCH_RESULT];
  const paramNames = /* @__PURE__ */ new Set();
  let length = 0;
  for (const part of splitRoutingPath(pathPrefix)) {
    if (part[0] === ":" && part.endsWith("}?")) throw new Error(`mount(): Optional regular expression parameters are not supported in "${routePath2}".`);
    const pattern = getPattern(part);
    if (pattern && pattern !== "*") {
      const name = pattern[1];
      if (paramNames.has(name)) throw new Error(`mount(): Duplicate path parameter "${name}" in "${routePath2}".`);
      paramNames.add(name);
    }
    if (pattern && pattern !== "*" && pattern[2] !== true) {
      const value = matchResult.length === 2 ? matchResult[1][matchResult[0][c.req.routeIndex][1][pattern[1]]] : matchResult[0][c.req.routeIndex][1][pattern[1]];
      length += value.length + 1;
    } else if (pattern || part.endsWith("*")) {
      const end = path.indexOf("/", length + 1);
      length = end === -1 ? path.length : end;
    } else length += part.length + 1;
  }
  return length;
}, "getPathPrefixLength");
var createMountedRequest = /* @__PURE__ */ __name((c, pathPrefix, routePath2) => {
  if (/[^/]\*$/.test(routePath2)) throw new Error(`mount(): Wildcard must follow "/" in "${routePath2}".`);
  const prefixLength = getPathPrefixLength(c, pathPrefix, routePath2);
  const path = c.req.path.slice(prefixLength) || "/";
  if (prefixLength > c.req.path.length || path[0] !== "/" || /\/(?:\.|%2e){1,2}(?:\/|$)/i.test(path)) throw new HTTPException(400, { message: "Invalid mounted path" });
  const rawUrl = c.req.raw.url;
  if (/^[^/?#]*\/\/[^/?#\\]*[?#\\]/.test(rawUrl)) throw new HTTPException(400, { message: "Invalid mounted path" });
  const rawPathEnd = rawUrl.search(/[?#]/);
  const rawTrailingSlashes = countTrailingSlashes(rawPathEnd === -1 ? rawUrl : rawUrl.slice(0, rawPathEnd));
  if (rawTrailingSlashes > 1 && countTrailingSlashes(c.req.path) === rawTrailingSlashes - 1) throw new HTTPException(400, { message: "Invalid mounted path" });
  const url = new URL(rawUrl);
  url.pathname = path.replace(/[\\\t\n\r]/g, encodeURIComponent);
  if (path.includes("%")) {
  }
  return new Request(url, c.req.raw);
}, "createMountedRequest");

// node_modules/hono/dist/hono-base.js
var notFoundHandler = /* @__PURE__ */ __name((c) => {
  return c.text("404 Not Found", 404);
}, "notFoundHandler");
var errorHandler = /* @__PURE__ */ __name((err, c) => {
  if ("getResponse" in err) {
    const res = err.getResponse();
    return c.newResponse(res.body, res);
  }
  console.error(err);
  return c.text("Internal Server Error", 500);
}, "errorHandler");
var Hono = class Hono2 {
  static {
    __name(this, "Hono");
  }
  get;
  post;
  put;
  delete;
  options;
  patch;
  query;
  all;
  on;
  use;
  router;
  getPath;
  _basePath = "/";
  #path = "/";
  routes = [];
  constructor(options = {}) {
    [...METHODS, "all"].forEach((method) => {
      this[method] = (args1, ...args) => {
        const methodName = method.toUpperCase();
        if (typeof args1 === "string") this.#path = args1;
        else this.#addRoute(methodName, this.#path, args1);
        args.forEach((handler) => {
          this.#addRoute(methodName, this.#path, handler);
        });
        return this;
      };
    });
    this.on = (method, path, ...handlers) => {
      for (const p of [path].flat()) {
        this.#path = p;
        for (const m of [method].flat()) {
          const methodName = m.toUpperCase();
          for (const handler of handlers) this.#addRoute(methodName, this.#path, handler);
        }
      }
      return this;
    };
    this.use = (arg1, ...handlers) => {
      if (typeof arg1 === "string") this.#path = arg1;
      else {
        this.#path = "*";
        handlers.unshift(arg1);
      }
      handlers.forEach((handler) => {
        this.#addRoute("ALL", this.#path, handler);
      });
      return this;
    };
    const { strict, ...optionsWithoutStrict } = options;
    Object.assign(this, optionsWithoutStrict);
    this.getPath = strict ?? true ? options.getPath ?? getPath : getPathNoStrict;
  }
  #clone() {
    const clone = new Hono2({
      router: this.router,
      getPath: this.getPath
    });
    clone.errorHandler = this.errorHandler;
    clone.#notFoundHandler = this.#notFoundHandler;
    clone.routes = this.routes;
    return clone;
  }
  #notFoundHandler = notFoundHandler;
  errorHandler = errorHandler;
  /**
  * `.route()` allows grouping other Hono instance in routes.
  *
  * @see {@link https://hono.dev/docs/api/routing#grouping}
  *
  * @param {string} path - base Path
  * @param {Hono} app - other Hono instance
  * @returns {Hono} routed Hono instance
  *
  * @example
  * ```ts
  * const app = new Hono()
  * const app2 = new Hono()
  *
  * app2.get("/user", (c) => c.text("user"))
  * app.route("/api", app2) // GET /api/user
  * ```
  */
  route(path, app) {
    const subApp = this.basePath(path);
    app.routes.map((r) => {
      let handler;
      if (app.errorHandler === errorHandler) handler = r.handler;
      else {
        handler = /* @__PURE__ */ __name(async (c, next) => (await compose([], app.errorHandler)(c, () => r.handler(c, next))).res, "handler");
        handler[COMPOSED_HANDLER] = r.handler;
      }
      subApp.#addRoute(r.method, r.path, handler, r.basePath);
    });
    return this;
  }
  /**
  * `.basePath()` allows base paths to be specified.
  *
  * @see {@link https://hono.dev/docs/api/routing#base-path}
  *
  * @param {string} path - base Path
  * @returns {Hono} changed Hono instance
  *
  * @example
  * ```ts
  * const api = new Hono().basePath('/api')
  * ```
  */
  basePath(path) {
    const subApp = this.#clone();
    subApp._basePath = mergePath(this._basePath, path);
    return subApp;
  }
  /**
  * `.onError()` handles an error and returns a customized Response.
  *
  * @see {@link https://hono.dev/docs/api/hono#error-handling}
  *
  * @param {ErrorHandler} handler - request Handler for error
  * @returns {Hono} changed Hono instance
  *
  * @example
  * ```ts
  * app.onError((err, c) => {
  *   console.error(`${err}`)
  *   return c.text('Custom Error Message', 500)
  * })
  * ```
  */
  onError = /* @__PURE__ */ __name((handler) => {
    this.errorHandler = handler;
    return this;
  }, "onError");
  /**
  * `.notFound()` allows you to customize a Not Found Response.
  *
  * @see {@link https://hono.dev/docs/api/hono#not-found}
  *
  * @param {NotFoundHandler} handler - request handler for not-found
  * @returns {Hono} changed Hono instance
  *
  * @example
  * ```ts
  * app.notFound((c) => {
  *   return c.text('Custom 404 Message', 404)
  * })
  * ```
  */
  notFound = /* @__PURE__ */ __name((handler) => {
    this.#notFoundHandler = handler;
    return this;
  }, "notFound");
  /**
  * `.mount()` allows you to mount applications built with other frameworks into your Hono application.
  *
  * @deprecated Use `mount()` from `hono/mount` instead. `.mount()` will be removed in v5.
  *
  * @see {@link https://hono.dev/docs/api/hono#mount}
  *
  * @param {string} path - base Path
  * @param {Function} applicationHandler - other Request Handler
  * @param {MountOptions} [options] - options of `.mount()`
  * @returns {Hono} mounted Hono instance
  * @throws {Error} If automatic request rewriting encounters duplicate path parameter names or an optional regular expression parameter.
  * @throws {HTTPException} With status 400 if automatic request rewriting cannot safely preserve the routed path.
  *
  * @example
  * ```ts
  * import { Router as IttyRouter } from 'itty-router'
  * import { Hono } from 'hono'
  * // Create itty-router application
  * const ittyRouter = IttyRouter()
  * // GET /itty-router/hello
  * ittyRouter.get('/hello', () => new Response('Hello from itty-router'))
  *
  * const app = new Hono()
  * app.mount('/itty-router', ittyRouter.handle)
  * ```
  *
  * @example
  * ```ts
  * const app = new Hono()
  * // Send the request to another application without modification.
  * app.mount('/app', anotherApp, {
  *   replaceRequest: (req) => req,
  * })
  * ```
  */
  mount(path, applicationHandler, options) {
    let replaceRequest;
    let optionHandler;
    if (options) {
      if (typeof options === "function") optionHandler = options;
      else {
        optionHandler = options.optionHandler;
        if (options.replaceRequest === false) replaceRequest = /* @__PURE__ */ __name((request) => request, "replaceRequest");
        else replaceRequest = options.replaceRequest;
      }
    }
    const getOptions = optionHandler ? (c) => {
      const options2 = optionHandler(c);
      return Array.isArray(options2) ? options2 : [options2];
    } : (c) => {
      let executionContext = void 0;
      try {
        executionContext = c.executionCtx;
      } catch {
      }
      return [c.env, executionContext];
    };
    const defaultReplaceRequest = /* @__PURE__ */ __name((c) => {
      const mountedRoutePath = routePath(c);
      return createMountedRequest(c, mountedRoutePath.replace(/\/?\*$/, ""), mountedRoutePath);
    }, "defaultReplaceRequest");
    const handler = /* @__PURE__ */ __name(async (c, next) => {
      const res = await applicationHandler(replaceRequest ? replaceRequest(c.req.raw) : defaultReplaceRequest(c), ...getOptions(c));
      if (res) return res;
      await next();
    }, "handler");
    this.#addRoute("ALL", mergePath(path, "*"), handler);
    return this;
  }
  #addRoute(method, path, handler, baseRoutePath) {
    path = mergePath(this._basePath, path);
    const r = {
      basePath: baseRoutePath !== void 0 ? mergePath(this._basePath, baseRoutePath) : this._basePath,
      path,
      method,
      handler
    };
    this.router.add(method, path, [handler, r]);
    this.routes.push(r);
  }
  #handleError(err, c) {
    if (err instanceof Error) return this.errorHandler(err, c);
    throw err;
  }
  #dispatch(request, executionCtx, env2, method) {
    if (method === "HEAD") return (async () => new Response(null, await this.#dispatch(request, executionCtx, env2, "GET")))();
    const path = this.getPath(request, { env: env2 });
    const matchResult = this.router.match(method, path);
    const c = new Context(request, {
      path,
      matchResult,
      env: env2,
      executionCtx,
      notFoundHandler: this.#notFoundHandler
    });
    if (matchResult[0].length === 1) {
      let res;
      try {
        res = matchResult[0][0][0][0](c, async () => {
          c.res = await this.#notFoundHandler(c);
        });
      } catch (err) {
        return this.#handleError(err, c);
      }
      return res instanceof Promise ? res.then((resolved) => resolved || (c.finalized ? c.res : this.#notFoundHandler(c))).catch((err) => this.#handleError(err, c)) : res ?? this.#notFoundHandler(c);
    }
    const composed = compose(matchResult[0], this.errorHandler, this.#notFoundHandler);
    return (async () => {
      try {
        const context2 = await composed(c);
        if (!context2.finalized) throw new Error("Context is not finalized. Did you forget to return a Response object or `await next()`?");
        return context2.res;
      } catch (err) {
        return this.#handleError(err, c);
      }
    })();
  }
  /**
  * `.fetch()` will be entry point of your app.
  *
  * @see {@link https://hono.dev/docs/api/hono#fetch}
  *
  * @param {Request} request - request Object of request
  * @param {Env} env - env Object
  * @param {ExecutionContext} executionCtx - context of execution
  * @returns {Response | Promise<Response>} response of request
  *
  */
  fetch = /* @__PURE__ */ __name((request, ...rest) => {
    return this.#dispatch(request, rest[1], rest[0], request.method);
  }, "fetch");
  /**
  * `.request()` is a useful method for testing.
  * You can pass a URL or pathname to send a GET request.
  * app will return a Response object.
  * ```ts
  * test('GET /hello is ok', async () => {
  *   const res = await app.request('/hello')
  *   expect(res.status).toBe(200)
  * })
  * ```
  * @see https://hono.dev/docs/api/hono#request
  */
  request = /* @__PURE__ */ __name((input, requestInit, Env, executionCtx) => {
    if (input instanceof Request) return this.fetch(requestInit ? new Request(input, requestInit) : input, Env, executionCtx);
    input = input.toString();
    return this.fetch(new Request(/^https?:\/\//.test(input) ? input : `http://localhost${mergePath("/", input)}`, requestInit), Env, executionCtx);
  }, "request");
  /**
  * `.fire()` automatically adds a global fetch event listener.
  * This can be useful for environments that adhere to the Service Worker API, such as non-ES module Cloudflare Workers.
  * @deprecated
  * Use `fire` from `hono/service-worker` instead.
  * ```ts
  * import { Hono } from 'hono'
  * import { fire } from 'hono/service-worker'
  *
  * const app = new Hono()
  * // ...
  * fire(app)
  * ```
  * @see https://hono.dev/docs/api/hono#fire
  * @see https://developer.mozilla.org/en-US/docs/Web/API/Service_Worker_API
  * @see https://developers.cloudflare.com/workers/reference/migrate-to-module-workers/
  */
  fire = /* @__PURE__ */ __name(() => {
    addEventListener("fetch", (event) => {
      event.respondWith(this.#dispatch(event.request, event, void 0, event.request.method));
    });
  }, "fire");
};

// node_modules/hono/dist/router/utils.js
var createNullObject = /* @__PURE__ */ __name(() => /* @__PURE__ */ Object.create(null), "createNullObject");

// node_modules/hono/dist/router/reg-exp-router/matcher.js
var emptyParam = [];
function match(method, path) {
  const matchers = this.buildAllMatchers();
  const match2 = /* @__PURE__ */ __name(((method2, path2) => {
    const matcher = matchers[method2] || matchers["ALL"];
    const staticMatch = matcher[2][path2];
    if (staticMatch) return staticMatch;
    const match3 = path2.match(matcher[0]);
    if (!match3) return [[], emptyParam];
    const index = match3.indexOf("", 1);
    return [matcher[1][index], match3];
  }), "match");
  this.match = match2;
  return match2(method, path);
}
__name(match, "match");

// node_modules/hono/dist/router/reg-exp-router/node.js
var LABEL_REG_EXP_STR = "[^/]+";
var ONLY_WILDCARD_REG_EXP_STR = "[^]*";
var TAIL_WILDCARD_REG_EXP_STR = "(?:|/[^]*)";
var PATH_ERROR = /* @__PURE__ */ Symbol();
var regExpMetaChars = /* @__PURE__ */ new Set(".\\+*[^]$()");
function compareKey(a, b) {
  if (a.length === 1) return b.length === 1 ? a < b ? -1 : 1 : -1;
  if (b.length === 1) return 1;
  if (a === "[^]*" || a === "(?:|/[^]*)") return b === "[^]*" ? -1 : 1;
  else if (b === "[^]*" || b === "(?:|/[^]*)") return -1;
  if (a === "[^/]+") return 1;
  else if (b === "[^/]+") return -1;
  return a.length === b.length ? a < b ? -1 : 1 : b.length - a.length;
}
__name(compareKey, "compareKey");
var Node = class Node2 {
  static {
    __name(this, "Node");
  }
  #index;
  #varIndex;
  #children = createNullObject();
  insert(tokens, index, paramMap, context2, keys) {
    let node = this;
    for (let i = 0, len = tokens.length; i < len; i++) {
      const token = tokens[i];
      const pattern = token.length === 1 ? token === "*" ? i === len - 1 ? [
        "",
        "",
        ONLY_WILDCARD_REG_EXP_STR
      ] : [
        "",
        "",
        LABEL_REG_EXP_STR
      ] : null : token === "/*" ? [
        "",
        "",
        TAIL_WILDCARD_REG_EXP_STR
      ] : token.match(/^\:([^\{\}]+)(?:\{(.+)\})?$/);
      let nextNode;
      if (pattern) {
        const name = pattern[1];
        let regexpStr = pattern[2] || "[^/]+";
        if (name && pattern[2]) {
          if (new RegExp(regexpStr).test("")) throw PATH_ERROR;
          regexpStr = regexpStr.replace(/^\((?!\?:)(?=[^)]+\)$)/, "(?:");
          if (/\((?!\?:)/.test(regexpStr)) throw PATH_ERROR;
          if (regexpStr.length === 1 && regExpMetaChars.has(regexpStr)) throw PATH_ERROR;
        }
        keys.push(regexpStr);
        nextNode = node.#children[regexpStr];
        if (!nextNode) {
          if (regexpStr !== "[^]*" && regexpStr !== "(?:|/[^]*)") {
            for (const k in node.#children) if ((regexpStr.length > 1 || k.length > 1) && k !== "[^]*" && k !== "(?:|/[^]*)") throw PATH_ERROR;
          }
          nextNode = node.#children[regexpStr] = new Node2();
        }
        if (name !== "") {
          nextNode.#varIndex ??= context2.varIndex++;
          paramMap.push([name, nextNode.#varIndex]);
        }
      } else {
        keys.push(token);
        nextNode = node.#children[token];
        if (!nextNode) {
          for (const k in node.#children) if (k.length > 1 && k !== "[^]*" && k !== "(?:|/[^]*)") throw PATH_ERROR;
          nextNode = node.#children[token] = new Node2();
        }
      }
      node = nextNode;
    }
    if (node.#index !== void 0) throw PATH_ERROR;
    node.#index = index;
  }
  buildRegExpStr() {
    const strList = Object.keys(this.#children).sort(compareKey).map((k) => {
      const c = this.#children[k];
      const childStr = c.buildRegExpStr();
      return childStr === "" ? "" : (typeof c.#varIndex === "number" ? `(${k})@${c.#varIndex}` : regExpMetaChars.has(k) ? `\\${k}` : k) + childStr;
    }).filter(Boolean);
    if (typeof this.#index === "number" && this.#index !== -1) strList.unshift(`#${this.#index}`);
    if (strList.length === 0) return "";
    if (strList.length === 1) return strList[0];
    return "(?:" + strList.join("|") + ")";
  }
};

// node_modules/hono/dist/router/reg-exp-router/trie.js
var Trie = class {
  static {
    __name(this, "Trie");
  }
  #context = { varIndex: 0 };
  #root = new Node();
  #index = 0;
  paths = createNullObject();
  insert(path, isStatic) {
    const keys = [];
    if (isStatic) {
      this.#root.insert(path.split(""), -1, [], this.#context, keys);
      this.paths[path] = [
        -1,
        [],
        keys
      ];
      return;
    }
    const paramAssoc = [];
    const groups = [];
    let markedPath = path;
    for (let i = 0; ; ) {
      let replaced = false;
      markedPath = markedPath.replace(/\{(?:\{[\d,]+\}|[^}])+\}/g, (m) => {
        const mark = `@\\${i}`;
        groups[i] = [mark, m];
        i++;
        replaced = true;
        return mark;
      });
      if (!replaced) break;
    }
    const tokens = markedPath.match(/(?::[^\/]+)|(?:\/\*$)|./gs) || [];
    for (let i = groups.length - 1; i >= 0; i--) {
      const [mark] = groups[i];
      for (let j = tokens.length - 1; j >= 0; j--) if (tokens[j].indexOf(mark) !== -1) {
        tokens[j] = tokens[j].replace(mark, groups[i][1]);
        break;
      }
    }
    this.#root.insert(tokens, this.#index, paramAssoc, this.#context, keys);
    this.paths[path] = [
      this.#index++,
      paramAssoc,
      keys
    ];
  }
  buildRegExp() {
    let regexp = this.#root.buildRegExpStr();
    if (regexp === "") return [
      /^$/,
      [],
      []
    ];
    let captureIndex = 0;
    const indexReplacementMap = [];
    const paramReplacementMap = [];
    regexp = regexp.replace(/#(\d+)|@(\d+)|\.\*\$/g, (_, handlerIndex, paramIndex) => {
      if (handlerIndex !== void 0) {
        indexReplacementMap[++captureIndex] = Number(handlerIndex);
        return "$()";
      }
      if (paramIndex !== void 0) {
        paramReplacementMap[Number(paramIndex)] = ++captureIndex;
        return "";
      }
      return "";
    });
    return [
      new RegExp(`^${regexp}`),
      indexReplacementMap,
      paramReplacementMap
    ];
  }
};

// node_modules/hono/dist/router/reg-exp-router/router.js
function endsWithWildcard(keys) {
  const tail = keys[keys.length - 1];
  return tail === "[^]*" || tail === "(?:|/[^]*)";
}
__name(endsWithWildcard, "endsWithWildcard");
function covers(wildcard, target) {
  const last = wildcard.length - 1;
  for (let i = 0; i < last; i++) if (wildcard[i] !== target[i]) return false;
  return wildcard[last] === "[^]*" || target.length === last || target[last] === "/";
}
__name(covers, "covers");
var RegExpRouter = class {
  static {
    __name(this, "RegExpRouter");
  }
  name = "RegExpRouter";
  #handlers;
  #tries;
  constructor() {
    this.#handlers = { ["ALL"]: [] };
    this.#tries = { ["ALL"]: new Trie() };
  }
  #insertPath(method, path) {
    try {
      this.#tries[method].insert(path, !/\*|\/:/.test(path));
    } catch (e) {
      throw e === PATH_ERROR ? new UnsupportedPathError(path) : e;
    }
  }
  add(method, path, handler) {
    const handlers = this.#handlers;
    if (!handlers) throw new Error(MESSAGE_MATCHER_IS_ALREADY_BUILT);
    const tries = this.#tries;
    if (!handlers[method]) {
      tries[method] = new Trie();
      handlers[method] = [...handlers["ALL"]];
      for (const p in tries["ALL"].paths) this.#insertPath(method, p);
    }
    if (path === "/*") path = "*";
    const methods = method === "ALL" ? Object.keys(handlers) : [method];
    const paths = checkOptionalParameter(path) || [path];
    for (const path2 of paths) for (const m of methods) {
      if (!tries[m].paths[path2]) this.#insertPath(m, path2);
      handlers[m].push([handler, path2]);
    }
  }
  match = match;
  buildAllMatchers() {
    const matchers = createNullObject();
    for (const method of Object.keys(this.#handlers)) matchers[method] = this.#buildMatcher(method);
    this.#handlers = this.#tries = void 0;
    return matchers;
  }
  #buildMatcher(method) {
    const handlers = this.#handlers[method];
    const trie = this.#tries[method];
    const staticMap = createNullObject();
    const handlerData = [];
    const [regexp, indexReplacementMap, paramReplacementMap] = trie.buildRegExp();
    const own2 = createNullObject();
    const entries = handlers.map(([h, p], i) => {
      (own2[p] ??= []).push(i);
      return [h, trie.paths[p][1].reduceRight((map, [key, varIndex]) => {
        map[key] = paramReplacementMap[varIndex];
        return map;
      }, createNullObject())];
    });
    const wildcards = Object.keys(own2).filter((p) => endsWithWildcard(trie.paths[p][2]));
    for (const path in trie.paths) {
      const [index, , keys] = trie.paths[path];
      const indexes = [...own2[path]];
      for (const p of wildcards) if (p !== path && covers(trie.paths[p][2], keys)) indexes.push(...own2[p]);
      const data = indexes.sort((a, b) => a - b).map((i) => entries[i]);
      if (index === -1) {
        const last = Math.max(-1, ...data.flatMap(([, map]) => Object.values(map)));
        staticMap[path] = [data, last === -1 ? emptyParam : path.match(regexp).slice(0, last + 1)];
      } else handlerData[index] = data;
    }
    return [
      regexp,
      indexReplacementMap.map((i) => handlerData[i]),
      staticMap
    ];
  }
};

// node_modules/hono/dist/router/smart-router/router.js
var SmartRouter = class {
  static {
    __name(this, "SmartRouter");
  }
  name = "SmartRouter";
  #routers = [];
  #routes = [];
  constructor(init) {
    this.#routers = init.routers;
  }
  add(method, path, handler) {
    if (!this.#routes) throw new Error(MESSAGE_MATCHER_IS_ALREADY_BUILT);
    this.#routes.push([
      method,
      path,
      handler
    ]);
  }
  match(method, path) {
    if (!this.#routes) throw new Error("Fatal error");
    const routers = this.#routers;
    const routes = this.#routes;
    const len = routers.length;
    let i = 0;
    let res;
    for (; i < len; i++) {
      const router = routers[i];
      try {
        for (let i2 = 0, len2 = routes.length; i2 < len2; i2++) router.add(...routes[i2]);
        res = router.match(method, path);
      } catch (e) {
        if (e instanceof UnsupportedPathError) continue;
        throw e;
      }
      this.match = router.match.bind(router);
      this.#routers = [router];
      this.#routes = void 0;
      break;
    }
    if (i === len) throw new Error("Fatal error");
    this.name = `SmartRouter + ${this.activeRouter.name}`;
    return res;
  }
  get activeRouter() {
    if (this.#routes || this.#routers.length !== 1) throw new Error("No active router has been determined yet.");
    return this.#routers[0];
  }
};

// node_modules/hono/dist/router/trie-router/node.js
var emptyParams = createNullObject();
var order = 0;
var Node3 = class Node4 {
  static {
    __name(this, "Node");
  }
  #methods = [];
  #children = createNullObject();
  #patterns = [];
  #pattern;
  #params = emptyParams;
  insert(method, path, handler) {
    let curNode = this;
    const parts = splitRoutingPath(path);
    const possibleKeys = /* @__PURE__ */ new Set();
    let i = 0;
    for (const p of parts) {
      const nextP = parts[++i];
      const pattern = getPattern(p, nextP) || (nextP === void 0 && p && p.indexOf("*") === p.length - 1 ? p : null);
      const isParam = Array.isArray(pattern);
      const key = isParam ? pattern[0] : pattern || p;
      const child = curNode.#children[key] ||= new Node4();
      if (pattern && !child.#pattern) {
        child.#pattern = pattern;
        curNode.#patterns.push(child);
      }
      curNode = child;
      if (isParam) possibleKeys.add(pattern[1]);
    }
    curNode.#methods.push({ [method]: {
      handler,
      possibleKeys: [...possibleKeys],
      score: ++order
    } });
  }
  #pushHandlerSets(handlerSets, node, method, nodeParams, params) {
    for (let i = 0, len = node.#methods.length; i < len; i++) {
      const m = node.#methods[i];
      const handlerSet = m[method] || m["ALL"];
      if (handlerSet) {
        handlerSet.params = createNullObject();
        handlerSets.push(handlerSet);
        for (let i2 = 0, len2 = handlerSet.possibleKeys.length; i2 < len2; i2++) {
          const key = handlerSet.possibleKeys[i2];
          handlerSet.params[key] = params?.[key] && !i2 ? params[key] : nodeParams[key] ?? params?.[key];
        }
      }
    }
  }
  search(method, path) {
    const handlerSets = [];
    this.#params = emptyParams;
    let curNodes = [this];
    const parts = splitPath(path);
    const curNodesQueue = [];
    const len = parts.length;
    let partOffsets = null;
    for (let i = 0; i < len; i++) {
      const part = parts[i];
      const isLast = i === len - 1;
      const tempNodes = [];
      for (let j = 0, len2 = curNodes.length; j < len2; j++) {
        const node = curNodes[j];
        const nextNode = node.#children[part];
        if (nextNode) {
          nextNode.#params = node.#params;
          if (isLast) {
            if (nextNode.#children["*"]) this.#pushHandlerSets(handlerSets, nextNode.#children["*"], method, node.#params);
            this.#pushHandlerSets(handlerSets, nextNode, method, node.#params);
          } else tempNodes.push(nextNode);
        }
        for (const child of node.#patterns) {
          const pattern = child.#pattern;
          const params = node.#params === emptyParams ? {} : { ...node.#params };
          if (typeof pattern === "string") {
            if (pattern === "*" || part.startsWith(pattern.slice(0, -1))) {
              this.#pushHandlerSets(handlerSets, child, method, node.#params);
              if (pattern === "*") {
                child.#params = params;
                tempNodes.push(child);
              }
            }
            continue;
          }
          const [, name, matcher] = pattern;
          if (!part && matcher === true) continue;
          if (matcher !== true) {
            if (!partOffsets) {
              partOffsets = [];
              let offset = path[0] === "/" ? 1 : 0;
              for (let p = 0; p < len; p++) {
                partOffsets[p] = offset;
                offset += parts[p].length + 1;
              }
            }
            const restPathString = path.slice(partOffsets[i]);
            const m = matcher.exec(restPathString);
            if (m) {
              if (!Object.hasOwn(params, name)) params[name] = m[0];
              this.#pushHandlerSets(handlerSets, child, method, node.#params, params);
              if (m[0].length === restPathString.length && child.#children["*"]) this.#pushHandlerSets(handlerSets, child.#children["*"], method, node.#params, params);
              for (const _ in child.#children) {
                child.#params = params;
                const componentCount = m[0].match(/\//g)?.length ?? 0;
                (curNodesQueue[componentCount] ||= []).push(child);
                break;
              }
              continue;
            }
          }
          if (matcher === true || matcher.test(part)) {
            if (!Object.hasOwn(params, name)) params[name] = part;
            if (isLast) {
              this.#pushHandlerSets(handlerSets, child, method, params, node.#params);
              if (child.#children["*"]) this.#pushHandlerSets(handlerSets, child.#children["*"], method, params, node.#params);
            } else {
              child.#params = params;
              tempNodes.push(child);
            }
          }
        }
      }
      const shifted = curNodesQueue.shift();
      curNodes = shifted ? tempNodes.concat(shifted) : tempNodes;
    }
    if (handlerSets[1]) handlerSets.sort((a, b) => {
      return a.score - b.score;
    });
    return [handlerSets.map(({ handler, params }) => [handler, params])];
  }
};

// node_modules/hono/dist/router/trie-router/router.js
var TrieRouter = class {
  static {
    __name(this, "TrieRouter");
  }
  name = "TrieRouter";
  #node = new Node3();
  add(method, path, handler) {
    for (const result of checkOptionalParameter(path) || [path]) this.#node.insert(method, result, handler);
  }
  match(method, path) {
    return this.#node.search(method, path);
  }
};

// node_modules/hono/dist/hono.js
var Hono3 = class extends Hono {
  static {
    __name(this, "Hono");
  }
  /**
  * Creates an instance of the Hono class.
  *
  * @param options - Optional configuration options for the Hono instance.
  */
  constructor(options = {}) {
    super(options);
    this.router = options.router ?? new SmartRouter({ routers: [new RegExpRouter(), new TrieRouter()] });
  }
};

// shared/src/tracing/trace-context.ts
var TRACEPARENT_HEADER = "traceparent";
var TRACESTATE_HEADER = "tracestate";
var VERSION_00_LENGTH = 55;
var HEX2 = /^[0-9a-f]{2}$/;
var TRACE_ID = /^[0-9a-f]{32}$/;
var SPAN_ID = /^[0-9a-f]{16}$/;
var ALL_ZERO = /^0+$/;
var MAX_TRACESTATE_MEMBERS = 32;
var MAX_TRACESTATE_LENGTH = 512;
var TRACESTATE_KEY = /^(?:[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})$/;
var TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
function isValidTraceId(id) {
  return TRACE_ID.test(id) && !ALL_ZERO.test(id);
}
__name(isValidTraceId, "isValidTraceId");
function isValidSpanId(id) {
  return SPAN_ID.test(id) && !ALL_ZERO.test(id);
}
__name(isValidSpanId, "isValidSpanId");
function parseTraceparent(traceparent, tracestate) {
  if (traceparent === null || traceparent === void 0) return void 0;
  const header = traceparent.trim();
  if (header.length < VERSION_00_LENGTH) return void 0;
  const version2 = header.slice(0, 2);
  if (!HEX2.test(version2) || version2 === "ff") return void 0;
  if (version2 === "00" ? header.length !== VERSION_00_LENGTH : header.length > VERSION_00_LENGTH && header[VERSION_00_LENGTH] !== "-") {
    return void 0;
  }
  if (header[2] !== "-" || header[35] !== "-" || header[52] !== "-") return void 0;
  const traceId = header.slice(3, 35);
  const spanId = header.slice(36, 52);
  const flags = header.slice(53, 55);
  if (!isValidTraceId(traceId) || !isValidSpanId(spanId) || !HEX2.test(flags)) return void 0;
  const state = parseTracestate(tracestate);
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16), ...state === void 0 ? {} : { traceState: state } };
}
__name(parseTraceparent, "parseTraceparent");
function parseTracestate(tracestate) {
  if (tracestate === null || tracestate === void 0) return void 0;
  if (tracestate.length > MAX_TRACESTATE_LENGTH * 2) return void 0;
  const seen = /* @__PURE__ */ new Set();
  const members = [];
  for (const raw2 of tracestate.split(",")) {
    const member = raw2.trim();
    if (member === "") continue;
    const eq = member.indexOf("=");
    if (eq <= 0) continue;
    const key = member.slice(0, eq);
    const value = member.slice(eq + 1);
    if (!TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(value) || seen.has(key)) continue;
    seen.add(key);
    members.push(`${key}=${value}`);
    if (members.length === MAX_TRACESTATE_MEMBERS) break;
  }
  const joined = members.join(",");
  return joined === "" || joined.length > MAX_TRACESTATE_LENGTH ? void 0 : joined;
}
__name(parseTracestate, "parseTracestate");
function extractTraceContext(get) {
  return parseTraceparent(get(TRACEPARENT_HEADER), get(TRACESTATE_HEADER));
}
__name(extractTraceContext, "extractTraceContext");

// shared/src/tracing/tracer.ts
function noopSpan(parent) {
  return {
    setAttribute: /* @__PURE__ */ __name(() => {
    }, "setAttribute"),
    setError: /* @__PURE__ */ __name(() => {
    }, "setError"),
    end: /* @__PURE__ */ __name(() => {
    }, "end"),
    context: /* @__PURE__ */ __name(() => parent, "context")
  };
}
__name(noopSpan, "noopSpan");
var ROOT_NOOP_SPAN = noopSpan(void 0);
var noopTracer = {
  enabled: false,
  startSpan: /* @__PURE__ */ __name((_name, options) => options?.parent === void 0 ? ROOT_NOOP_SPAN : noopSpan(options.parent), "startSpan")
};
async function inSpan(tracer, name, options, work) {
  const span = tracer.startSpan(name, options);
  try {
    return await work(span);
  } catch (error3) {
    span.setError(error3);
    throw error3;
  } finally {
    span.end();
  }
}
__name(inSpan, "inSpan");

// gateway/src/core/http/responses.ts
function jsonResponse(value, status = 200, headers = {}) {
  return new Response(JSON.stringify(value), { status, headers: { "Content-Type": "application/json", ...headers } });
}
__name(jsonResponse, "jsonResponse");
function emptyResponse(status) {
  return new Response(null, { status });
}
__name(emptyResponse, "emptyResponse");
function errorResponse(error3, logger2) {
  if (error3 instanceof AccessError) {
    const headers2 = error3.status === 401 ? { "WWW-Authenticate": "Bearer" } : {};
    return jsonResponse({ error: error3.message }, error3.status, headers2);
  }
  const wasOurs = error3 instanceof TesseraError;
  const tessera = toTesseraError(error3);
  const status = httpStatusOf(tessera.code);
  if (!wasOurs || status >= 500) {
    logger2.error("request failed", { code: tessera.code, error: tessera.message, ...wasOurs ? {} : { stack: error3?.stack } });
  }
  const headers = {};
  if (tessera.retryAfterMs !== void 0) headers["Retry-After"] = String(Math.max(1, Math.ceil(tessera.retryAfterMs / 1e3)));
  return jsonResponse(errorBody(tessera), status, headers);
}
__name(errorResponse, "errorResponse");

// gateway/src/core/http/read-body.ts
async function readBodyLimited(request, maxBytes) {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) {
    throw TesseraError.invalidArg(`request body of ${declared} bytes exceeds the gateway's limit of ${maxBytes} bytes`);
  }
  if (request.body === null) return new Uint8Array(0);
  const coding = (request.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  let stream = request.body;
  if (coding === "gzip" || coding === "deflate") {
    stream = stream.pipeThrough(new DecompressionStream(coding));
  } else if (coding !== "identity" && coding !== "") {
    throw TesseraError.unsupported(`Unsupported compression type '${coding}' (gzip and deflate are)`);
  }
  const chunks = [];
  let total = 0;
  const reader = stream.getReader();
  try {
    for (; ; ) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {
        });
        throw TesseraError.invalidArg(`request body exceeds the gateway's limit of ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
  } catch (error3) {
    if (error3 instanceof TesseraError) throw error3;
    throw TesseraError.invalidArg(`could not read the request body: ${error3.message}`);
  }
  if (chunks.length === 1) return chunks[0];
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.length;
  }
  return body;
}
__name(readBodyLimited, "readBodyLimited");

// gateway/src/core/jobs/bytes.ts
var CHUNK = 32768;
function toBase64(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}
__name(toBase64, "toBase64");
function fromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
__name(fromBase64, "fromBase64");
function toHex(bytes) {
  return Array.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}
__name(toHex, "toHex");
async function sha256HexOf(...parts) {
  const utf87 = new TextEncoder();
  const chunks = parts.map((p) => typeof p === "string" ? utf87.encode(p) : p);
  const joined = new Uint8Array(chunks.reduce((n, c) => n + c.length + 1, 0));
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.length + 1;
  }
  return toHex(await crypto.subtle.digest("SHA-256", joined));
}
__name(sha256HexOf, "sha256HexOf");

// gateway/src/core/jobs/idempotency.ts
var IDEMPOTENCY_HEADER = "idempotency-key";
var KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
function idempotencyKeyOf(headers) {
  const raw2 = headers.get(IDEMPOTENCY_HEADER);
  if (raw2 === null) return void 0;
  const key = raw2.trim().replace(/^"(.*)"$/, "$1");
  if (!KEY_PATTERN.test(key)) {
    throw TesseraError.invalidArg("Idempotency-Key must be 1-255 printable ASCII characters without spaces");
  }
  return key;
}
__name(idempotencyKeyOf, "idempotencyKeyOf");
async function idempotentJobId(tenantId, key) {
  return `k${(await sha256HexOf("idempotency", tenantId, key)).slice(0, 40)}`;
}
__name(idempotentJobId, "idempotentJobId");
function randomJobId() {
  return `j${crypto.randomUUID().replaceAll("-", "")}`;
}
__name(randomJobId, "randomJobId");
var JOB_ID_PATTERN = /^(?:k[0-9a-f]{40}|j[0-9a-f]{32})$/;
async function requestFingerprint(model, version2, body) {
  return sha256HexOf(model, version2 ?? "", body);
}
__name(requestFingerprint, "requestFingerprint");

// shared/src/kserve/header-length.ts
var INFERENCE_HEADER_CONTENT_LENGTH = "Inference-Header-Content-Length";
var INT32_MAX = 2147483647;
function parseHeaderLength(value, bodyLength) {
  if (value === void 0 || value === null) return null;
  const text = value.trim();
  const parsed = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  if (!(parsed <= INT32_MAX) || parsed > bodyLength) {
    throw TesseraError.invalidArg(
      `${INFERENCE_HEADER_CONTENT_LENGTH} must be an integer in [0, ${Math.min(bodyLength, INT32_MAX)}] (the body length), got '${value.length > 40 ? `${value.slice(0, 37)}...` : value}'`
    );
  }
  return parsed;
}
__name(parseHeaderLength, "parseHeaderLength");

// shared/src/kserve/json-text.ts
function writeJson(value) {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      if (Object.is(value, -0)) return "-0";
      return Number.isFinite(value) ? String(value) : "null";
    case "bigint":
      return value.toString();
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) return `[${value.map((v) => writeJson(v)).join(",")}]`;
      const parts = [];
      for (const [k, v] of Object.entries(value)) {
        if (v !== void 0) parts.push(`${JSON.stringify(k)}:${writeJson(v)}`);
      }
      return `{${parts.join(",")}}`;
    }
    default:
      return "null";
  }
}
__name(writeJson, "writeJson");
function isJsonObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
__name(isJsonObject, "isJsonObject");
function own(obj, key) {
  return Object.hasOwn(obj, key) ? obj[key] : void 0;
}
__name(own, "own");
function describeJson(value) {
  if (value === void 0) return "nothing";
  let text;
  try {
    text = writeJson(value);
  } catch {
    text = typeof value;
  }
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
__name(describeJson, "describeJson");
var utf8Strict = new TextDecoder("utf-8", { fatal: true });
function parseJsonBytes(bytes, what) {
  let text;
  try {
    text = utf8Strict.decode(bytes);
  } catch {
    throw TesseraError.invalidArg(`failed to parse the ${what} JSON buffer: it is not valid UTF-8`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw TesseraError.invalidArg(`failed to parse the ${what} JSON buffer: ${reason}`);
  }
}
__name(parseJsonBytes, "parseJsonBytes");

// shared/src/kserve/parameters.ts
var RESERVED_PREFIX = "triton_";
function objectOrEmpty(value, what) {
  if (value === void 0) return {};
  if (!isJsonObject(value)) {
    throw TesseraError.invalidArg(`'parameters' of ${what} must be a JSON object, got ${describeJson(value)}`);
  }
  return value;
}
__name(objectOrEmpty, "objectOrEmpty");
function isUint(value) {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}
__name(isUint, "isUint");
function parseRequestParameters(value) {
  const obj = objectOrEmpty(value, "the request");
  const entries = [];
  let binaryDataOutput;
  for (const [key, v] of Object.entries(obj)) {
    const bad = /* @__PURE__ */ __name((expected) => TesseraError.invalidArg(`request parameter '${key}' must be ${expected}, got ${describeJson(v)}`), "bad");
    switch (key) {
      case "sequence_id":
        if (!isUint(v) && typeof v !== "string") throw bad("an unsigned integer or a string");
        entries.push([key, v]);
        break;
      case "sequence_start":
      case "sequence_end":
        if (typeof v !== "boolean") throw bad("a boolean");
        entries.push([key, v]);
        break;
      case "priority":
      case "timeout":
        if (!isUint(v)) throw bad("an unsigned integer");
        entries.push([key, v]);
        break;
      case "binary_data_output":
        if (typeof v !== "boolean") throw bad("a boolean");
        binaryDataOutput = v;
        break;
      default:
        if (key.startsWith(RESERVED_PREFIX)) {
          throw TesseraError.invalidArg(
            `parameter '${key}' is not allowed: keys starting with '${RESERVED_PREFIX}' are reserved for the server`
          );
        }
        if (typeof v === "string" || typeof v === "boolean" || typeof v === "number" && Number.isFinite(v)) {
          entries.push([key, v]);
        } else {
          throw bad("a string, a number or a boolean");
        }
    }
  }
  return { parameters: Object.fromEntries(entries), binaryDataOutput };
}
__name(parseRequestParameters, "parseRequestParameters");
function parseInputDataSource(input, name) {
  const params = objectOrEmpty(own(input, "parameters"), `input '${name}'`);
  const hasData = own(input, "data") !== void 0;
  const binarySize = own(params, "binary_data_size");
  const region = own(params, "shared_memory_region");
  const set = [
    hasData ? "'data'" : null,
    binarySize !== void 0 ? "'binary_data_size'" : null,
    region !== void 0 ? "'shared_memory_region'" : null
  ].filter((s) => s !== null);
  if (set.length !== 1) {
    throw TesseraError.invalidArg(
      `input '${name}' must set exactly one of 'data', 'binary_data_size' in 'parameters' or 'shared_memory_region' in 'parameters', but it sets ${set.length === 0 ? "none of them" : set.join(" and ")}`
    );
  }
  if (region !== void 0) throw TesseraError.unsupported("shared memory is not supported");
  if (binarySize !== void 0) {
    if (!isUint(binarySize) || !Number.isSafeInteger(binarySize)) {
      throw TesseraError.invalidArg(
        `'binary_data_size' of input '${name}' must be a non-negative integer, got ${describeJson(binarySize)}`
      );
    }
    return { kind: "binary", byteSize: binarySize };
  }
  return { kind: "json" };
}
__name(parseInputDataSource, "parseInputDataSource");
function parseOutputParameters(value, name) {
  const params = objectOrEmpty(value, `output '${name}'`);
  if (own(params, "shared_memory_region") !== void 0) {
    throw TesseraError.unsupported("shared memory is not supported");
  }
  const binaryData = own(params, "binary_data");
  if (binaryData !== void 0 && typeof binaryData !== "boolean") {
    throw TesseraError.invalidArg(
      `'binary_data' of output '${name}' must be a boolean, got ${describeJson(binaryData)}`
    );
  }
  const classification = own(params, "classification");
  if (classification !== void 0 && !(isUint(classification) && classification > 0 && Number.isSafeInteger(classification))) {
    throw TesseraError.invalidArg(
      `'classification' of output '${name}' must be a positive integer, got ${describeJson(classification)}`
    );
  }
  return { binaryData, classification };
}
__name(parseOutputParameters, "parseOutputParameters");

// shared/src/tensors/tensor.ts
var DATATYPES = [
  "BOOL",
  "UINT8",
  "UINT16",
  "UINT32",
  "UINT64",
  "INT8",
  "INT16",
  "INT32",
  "INT64",
  "FP16",
  "FP32",
  "FP64",
  "BF16",
  "BYTES"
];

// shared/src/tensors/datatype.ts
var INFO = {
  BOOL: { byteSize: 1, configType: "TYPE_BOOL", typedArray: "Uint8Array" },
  UINT8: { byteSize: 1, configType: "TYPE_UINT8", typedArray: "Uint8Array" },
  UINT16: { byteSize: 2, configType: "TYPE_UINT16", typedArray: "Uint16Array" },
  UINT32: { byteSize: 4, configType: "TYPE_UINT32", typedArray: "Uint32Array" },
  UINT64: { byteSize: 8, configType: "TYPE_UINT64", typedArray: "BigUint64Array" },
  INT8: { byteSize: 1, configType: "TYPE_INT8", typedArray: "Int8Array" },
  INT16: { byteSize: 2, configType: "TYPE_INT16", typedArray: "Int16Array" },
  INT32: { byteSize: 4, configType: "TYPE_INT32", typedArray: "Int32Array" },
  INT64: { byteSize: 8, configType: "TYPE_INT64", typedArray: "BigInt64Array" },
  FP16: { byteSize: 2, configType: "TYPE_FP16", typedArray: "Uint16Array" },
  FP32: { byteSize: 4, configType: "TYPE_FP32", typedArray: "Float32Array" },
  FP64: { byteSize: 8, configType: "TYPE_FP64", typedArray: "Float64Array" },
  BF16: { byteSize: 2, configType: "TYPE_BF16", typedArray: "Uint16Array" },
  // The config enum keeps Triton's historical name for variable-length elements.
  BYTES: { byteSize: null, configType: "TYPE_STRING", typedArray: null }
};
var BY_CONFIG_TYPE = new Map(DATATYPES.map((dt) => [INFO[dt].configType, dt]));
var DATATYPE_SET = new Set(DATATYPES);
function isDatatype(value) {
  return typeof value === "string" && DATATYPE_SET.has(value);
}
__name(isDatatype, "isDatatype");
function parseDatatype(value, what = "tensor") {
  if (isDatatype(value)) return value;
  throw TesseraError.invalidArg(`invalid datatype ${JSON.stringify(value) ?? String(value)} for ${what}`);
}
__name(parseDatatype, "parseDatatype");
function datatypeByteSize(datatype) {
  return INFO[datatype].byteSize;
}
__name(datatypeByteSize, "datatypeByteSize");

// shared/src/tensors/shape.ts
var MAX_FORMATTED_DIMS = 16;
function formatShape(shape) {
  const shown = shape.slice(0, MAX_FORMATTED_DIMS).map((d) => String(d).slice(0, 24));
  return `[${shown.join(",")}${shape.length > MAX_FORMATTED_DIMS ? `,... (${shape.length} dims)` : ""}]`;
}
__name(formatShape, "formatShape");
function elementCount(shape, what = "tensor") {
  let hasZero = false;
  for (const dim of shape) {
    if (typeof dim !== "number" || !Number.isSafeInteger(dim)) {
      throw TesseraError.invalidArg(`invalid dimension ${String(dim)} in shape ${formatShape(shape)} of ${what}`);
    }
    if (dim < 0) {
      throw TesseraError.invalidArg(
        `all dimensions must be specified (non-negative) for ${what}, got ${formatShape(shape)}`
      );
    }
    if (dim === 0) hasZero = true;
  }
  if (hasZero) return 0;
  let count3 = 1;
  for (const dim of shape) {
    count3 *= dim;
    if (count3 > Number.MAX_SAFE_INTEGER) {
      throw TesseraError.invalidArg(`shape ${formatShape(shape)} of ${what} has too many elements`);
    }
  }
  return count3;
}
__name(elementCount, "elementCount");
function expectedByteSize(datatype, shape, what = "tensor") {
  const count3 = elementCount(shape, what);
  const size = datatypeByteSize(datatype);
  if (size === null) return null;
  const bytes = count3 * size;
  if (bytes > Number.MAX_SAFE_INTEGER) {
    throw TesseraError.invalidArg(`shape ${formatShape(shape)} of ${what} is too large`);
  }
  return bytes;
}
__name(expectedByteSize, "expectedByteSize");

// shared/src/tensors/bytes-elements.ts
var LENGTH_PREFIX = 4;
var MAX_ELEMENT_BYTES = 4294967295;
var utf8Encoder = new TextEncoder();
function encodeBytesElements(elements) {
  const encoded = elements.map((e) => typeof e === "string" ? utf8Encoder.encode(e) : e);
  let total = 0;
  for (const e of encoded) {
    if (e.length > MAX_ELEMENT_BYTES) {
      throw TesseraError.invalidArg(`BYTES element of ${e.length} bytes exceeds the 4-byte length prefix`);
    }
    total += LENGTH_PREFIX + e.length;
  }
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let offset = 0;
  for (const e of encoded) {
    view.setUint32(offset, e.length, true);
    out.set(e, offset + LENGTH_PREFIX);
    offset += LENGTH_PREFIX + e.length;
  }
  return out;
}
__name(encodeBytesElements, "encodeBytesElements");
function decodeBytesElements(data, expectedCount, what = "BYTES tensor") {
  const elements = [];
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let offset = 0;
  while (offset < data.length) {
    if (expectedCount !== void 0 && elements.length === expectedCount) {
      throw TesseraError.invalidArg(
        `${what} has ${data.length - offset} unexpected bytes after its ${expectedCount} BYTES elements`
      );
    }
    if (data.length - offset < LENGTH_PREFIX) {
      throw TesseraError.invalidArg(
        `${what} is truncated: element ${elements.length} needs a 4-byte length at offset ${offset}, but only ${data.length - offset} bytes remain`
      );
    }
    const length = view.getUint32(offset, true);
    const start = offset + LENGTH_PREFIX;
    if (length > data.length - start) {
      throw TesseraError.invalidArg(
        `${what} is truncated: element ${elements.length} declares ${length} bytes at offset ${offset}, but only ${data.length - start} remain`
      );
    }
    elements.push(data.subarray(start, start + length));
    offset = start + length;
  }
  if (expectedCount !== void 0 && elements.length !== expectedCount) {
    throw TesseraError.invalidArg(`${what} holds ${elements.length} BYTES elements, expected ${expectedCount}`);
  }
  return elements;
}
__name(decodeBytesElements, "decodeBytesElements");
function countBytesElements(data, what = "BYTES tensor", limit = Number.MAX_SAFE_INTEGER) {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let offset = 0;
  let count3 = 0;
  while (offset < data.length) {
    if (count3 > limit) return count3;
    if (data.length - offset < LENGTH_PREFIX) {
      throw TesseraError.invalidArg(
        `${what} is truncated: element ${count3} needs a 4-byte length at offset ${offset}, but only ${data.length - offset} bytes remain`
      );
    }
    const length = view.getUint32(offset, true);
    if (length > data.length - offset - LENGTH_PREFIX) {
      throw TesseraError.invalidArg(
        `${what} is truncated: element ${count3} declares ${length} bytes at offset ${offset}, but only ${data.length - offset - LENGTH_PREFIX} remain`
      );
    }
    offset += LENGTH_PREFIX + length;
    count3++;
  }
  return count3;
}
__name(countBytesElements, "countBytesElements");

// shared/src/tensors/validate.ts
function validateTensorData(tensor, what = `tensor '${tensor.name}'`) {
  if (!isDatatype(tensor.datatype)) {
    throw TesseraError.invalidArg(`invalid datatype '${String(tensor.datatype)}' for ${what}`);
  }
  if (!(tensor.data instanceof Uint8Array)) {
    throw TesseraError.invalidArg(`data of ${what} is not a byte array`);
  }
  const expected = expectedByteSize(tensor.datatype, tensor.shape, what);
  if (expected !== null) {
    if (tensor.data.length !== expected) {
      throw TesseraError.invalidArg(`byte size mismatch for ${what}: expected ${expected}, got ${tensor.data.length}`);
    }
    return;
  }
  const count3 = elementCount(tensor.shape, what);
  const found = countBytesElements(tensor.data, what, count3);
  if (found !== count3) {
    throw TesseraError.invalidArg(
      `element count mismatch for ${what}: shape needs ${count3} BYTES elements, data holds ${found > count3 ? "more" : found}`
    );
  }
}
__name(validateTensorData, "validateTensorData");

// shared/src/tensors/typed-array.ts
var HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// shared/src/tensors/json-data.ts
var MAX_JSON_DATA_NESTING = 100;
var DEFAULT_MAX_JSON_INPUT_BYTES = 64 * 1024 * 1024;
var INT_RANGES = {
  UINT8: [0, 255],
  UINT16: [0, 65535],
  UINT32: [0, 4294967295],
  INT8: [-128, 127],
  INT16: [-32768, 32767],
  INT32: [-2147483648, 2147483647]
};
var TWO_63 = 2 ** 63;
var TWO_64 = 2 ** 64;
var utf82 = new TextDecoder("utf-8");
function describe(value) {
  if (value === void 0) return "nothing";
  let text;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Array.isArray(value) ? "an array" : typeof value;
  }
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
__name(describe, "describe");
function notInJson(datatype, role, name, direction) {
  return TesseraError.invalidArg(
    `${direction} ${datatype} data via JSON is not supported. Please use the binary data format for ${role} '${name}'`
  );
}
__name(notInJson, "notInJson");
function flatten(data, shape, count3, what) {
  const nested = data.length > 0 && Array.isArray(data[0]);
  if (!nested) {
    if (data.length !== count3) {
      throw TesseraError.invalidArg(
        `unable to parse 'data' of ${what}: shape ${formatShape(shape)} needs ${count3} elements, got ${data.length}`
      );
    }
    return data;
  }
  if (shape.length > MAX_JSON_DATA_NESTING) {
    throw TesseraError.invalidArg(`unable to parse 'data' of ${what}: nested deeper than ${MAX_JSON_DATA_NESTING} levels`);
  }
  const leaves = [];
  const walk = /* @__PURE__ */ __name((node, depth) => {
    if (!Array.isArray(node) || depth >= shape.length || node.length !== shape[depth]) {
      throw TesseraError.invalidArg(
        `unable to parse 'data' of ${what}: nested arrays do not match shape ${formatShape(shape)}`
      );
    }
    if (depth === shape.length - 1) {
      for (const leaf of node) leaves.push(leaf);
      return;
    }
    for (const child of node) walk(child, depth + 1);
  }, "walk");
  walk(data, 0);
  return leaves;
}
__name(flatten, "flatten");
function tooLarge(what, bytes, max) {
  return TesseraError.invalidArg(
    `JSON data of ${what} needs ${bytes} bytes, more than the limit of ${max} bytes (--http-max-input-size); send it in the binary data format or raise the limit`
  );
}
__name(tooLarge, "tooLarge");
function jsonDataToTensorBytes(datatype, shape, data, options = {}) {
  const name = options.name ?? "";
  const role = options.role ?? "input";
  const what = options.name === void 0 ? role : `${role} '${name}'`;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_JSON_INPUT_BYTES;
  if (datatype === "FP16" || datatype === "BF16") throw notInJson(datatype, role, name, "receiving");
  const count3 = elementCount(shape, what);
  const size = datatypeByteSize(datatype);
  if (size !== null && count3 * size > maxBytes) throw tooLarge(what, count3 * size, maxBytes);
  if (!Array.isArray(data)) {
    throw TesseraError.invalidArg(`unable to parse 'data' of ${what}: expected an array, got ${describe(data)}`);
  }
  const leaves = flatten(data, shape, count3, what);
  const range = INT_RANGES[datatype];
  const expected = datatype === "BOOL" ? "true or false" : datatype === "BYTES" ? "a string" : range !== void 0 ? `an integer in [${range[0]}, ${range[1]}]` : datatype === "INT64" ? "a 64-bit signed integer" : datatype === "UINT64" ? "a 64-bit unsigned integer" : "a number";
  const bad = /* @__PURE__ */ __name((i) => TesseraError.invalidArg(
    `unable to parse 'data' of ${what}: element ${i} should be ${expected}, got ${describe(leaves[i])}`
  ), "bad");
  if (datatype === "BYTES") {
    let bytes = 0;
    leaves.forEach((v, i) => {
      if (typeof v !== "string") throw bad(i);
      bytes += 4 + v.length;
    });
    if (bytes > maxBytes) throw tooLarge(what, bytes, maxBytes);
    const out2 = encodeBytesElements(leaves);
    if (out2.length > maxBytes) throw tooLarge(what, out2.length, maxBytes);
    return out2;
  }
  const out = new Uint8Array(count3 * size);
  const view = new DataView(out.buffer);
  for (let i = 0; i < leaves.length; i++) {
    const v = leaves[i];
    if (datatype === "BOOL") {
      if (typeof v !== "boolean") throw bad(i);
      out[i] = v ? 1 : 0;
      continue;
    }
    const isFloat = datatype === "FP32" || datatype === "FP64";
    if (typeof v !== "number" || !Number.isFinite(v) && !(isFloat && options.allowNonFinite === true)) throw bad(i);
    if (datatype === "FP32") {
      view.setFloat32(i * 4, v, true);
    } else if (datatype === "FP64") {
      view.setFloat64(i * 8, v, true);
    } else if (range !== void 0) {
      if (!Number.isInteger(v) || v < range[0] || v > range[1]) throw bad(i);
      const offset = i * size;
      switch (datatype) {
        case "UINT8":
          view.setUint8(offset, v);
          break;
        case "INT8":
          view.setInt8(offset, v);
          break;
        case "UINT16":
          view.setUint16(offset, v, true);
          break;
        case "INT16":
          view.setInt16(offset, v, true);
          break;
        case "UINT32":
          view.setUint32(offset, v, true);
          break;
        default:
          view.setInt32(offset, v, true);
      }
    } else if (datatype === "INT64") {
      if (!Number.isInteger(v) || v < -TWO_63 || v > TWO_63) throw bad(i);
      view.setBigInt64(i * 8, v === TWO_63 ? 2n ** 63n - 1n : BigInt(v), true);
    } else {
      if (!Number.isInteger(v) || v < 0 || v > TWO_64) throw bad(i);
      view.setBigUint64(i * 8, v === TWO_64 ? 2n ** 64n - 1n : BigInt(v), true);
    }
  }
  return out;
}
__name(jsonDataToTensorBytes, "jsonDataToTensorBytes");
function tensorBytesToJsonData(tensor, role = "output") {
  const { datatype } = tensor;
  if (datatype === "FP16" || datatype === "BF16") throw notInJson(datatype, role, tensor.name, "sending");
  const what = `${role} '${tensor.name}'`;
  validateTensorData(tensor, what);
  const { data } = tensor;
  if (datatype === "BYTES") {
    return decodeBytesElements(data, void 0, what).map((e) => utf82.decode(e));
  }
  const size = datatypeByteSize(datatype);
  const count3 = data.length / size;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const out = new Array(count3);
  for (let i = 0; i < count3; i++) {
    const o = i * size;
    switch (datatype) {
      case "BOOL":
        out[i] = data[o] !== 0;
        break;
      case "UINT8":
        out[i] = view.getUint8(o);
        break;
      case "INT8":
        out[i] = view.getInt8(o);
        break;
      case "UINT16":
        out[i] = view.getUint16(o, true);
        break;
      case "INT16":
        out[i] = view.getInt16(o, true);
        break;
      case "UINT32":
        out[i] = view.getUint32(o, true);
        break;
      case "INT32":
        out[i] = view.getInt32(o, true);
        break;
      case "FP32":
        out[i] = view.getFloat32(o, true);
        break;
      case "FP64":
        out[i] = view.getFloat64(o, true);
        break;
      case "INT64":
      case "UINT64": {
        const big = datatype === "INT64" ? view.getBigInt64(o, true) : view.getBigUint64(o, true);
        const small = Number(big);
        out[i] = Number.isSafeInteger(small) ? small : big;
        break;
      }
    }
  }
  return out;
}
__name(tensorBytesToJsonData, "tensorBytesToJsonData");

// shared/src/kserve/raw-input.ts
function decodeRawInput(body, model, modelName) {
  const input = model.inputs[0];
  if (input === void 0 || model.inputs.length !== 1) {
    throw TesseraError.invalidArg(
      `Raw request must only have 1 input (found 1) to be deduced but got ${model.inputs.length} inputs in '${modelName}' model configuration`
    );
  }
  const shape = model.maxBatchSize > 0 ? [1, ...input.dims] : [...input.dims];
  const variable = shape.flatMap((d, i) => d < 0 ? [i] : []);
  if (variable.length > 1) {
    throw TesseraError.invalidArg(
      `The shape of the raw input '${input.name}' can not be deduced because there are more than one variable-sized dimension`
    );
  }
  const fixedCount = shape.reduce((n, d) => d < 0 ? n : n * d, 1);
  const size = datatypeByteSize(input.datatype);
  if (size === null) {
    if (variable.length > 0 || fixedCount !== 1) {
      throw TesseraError.invalidArg(
        `For BYTE datatype raw input '${input.name}', the model must have input shape [1], got ${formatShape(shape)}`
      );
    }
    const data = new Uint8Array(4 + body.length);
    new DataView(data.buffer).setUint32(0, body.length, true);
    data.set(body, 4);
    return { name: input.name, datatype: input.datatype, shape, data };
  }
  const rowBytes = fixedCount * size;
  const variableAt = variable[0];
  if (variableAt !== void 0) {
    if (rowBytes === 0 ? body.length !== 0 : body.length % rowBytes !== 0) {
      throw TesseraError.invalidArg(
        `unexpected size for raw input '${input.name}' for model '${modelName}': ${body.length} bytes is not a whole number of ${formatShape(shape)} ${input.datatype} elements`
      );
    }
    shape[variableAt] = rowBytes === 0 ? 0 : body.length / rowBytes;
  } else if (body.length !== rowBytes) {
    throw TesseraError.invalidArg(
      `unexpected size for raw input '${input.name}' for model '${modelName}': expected ${rowBytes} bytes, got ${body.length}`
    );
  }
  return { name: input.name, datatype: input.datatype, shape, data: body };
}
__name(decodeRawInput, "decodeRawInput");

// shared/src/kserve/infer-request-decode.ts
function requireString(obj, key, what) {
  const value = own(obj, key);
  if (typeof value !== "string") {
    throw TesseraError.invalidArg(
      value === void 0 ? `${what} is missing '${key}'` : `'${key}' of ${what} must be a string, got ${describeJson(value)}`
    );
  }
  return value;
}
__name(requireString, "requireString");
function parseShape(value, what) {
  if (!Array.isArray(value)) {
    throw TesseraError.invalidArg(
      value === void 0 ? `${what} is missing 'shape'` : `'shape' of ${what} must be an array, got ${describeJson(value)}`
    );
  }
  for (const dim of value) {
    if (typeof dim !== "number" || !Number.isInteger(dim)) {
      throw TesseraError.invalidArg(`'shape' of ${what} must hold integers, got ${describeJson(value)}`);
    }
  }
  return value;
}
__name(parseShape, "parseShape");
function decodeRaw(options) {
  if (options.rawInputModel === void 0) {
    throw TesseraError.unsupported(
      `raw binary requests (${INFERENCE_HEADER_CONTENT_LENGTH}: 0) are not supported for model '${options.modelName}'`
    );
  }
  const input = decodeRawInput(options.body, options.rawInputModel, options.modelName);
  return {
    request: { id: "", modelName: options.modelName, modelVersion: options.modelVersion, inputs: [input], parameters: {} },
    binaryOutputDefault: true,
    outputBinary: /* @__PURE__ */ new Map()
  };
}
__name(decodeRaw, "decodeRaw");
function decodeInferRequestBody(options) {
  const { body, modelName } = options;
  const maxJsonInputBytes = options.maxJsonInputBytes ?? DEFAULT_MAX_JSON_INPUT_BYTES;
  const headerLength = parseHeaderLength(options.headerLength, body.length);
  if (headerLength === 0) return decodeRaw(options);
  const jsonLength = headerLength ?? body.length;
  const json = parseJsonBytes(body.subarray(0, jsonLength), "request");
  if (!isJsonObject(json)) {
    throw TesseraError.invalidArg(`the request JSON must be an object, got ${describeJson(json)}`);
  }
  const id = own(json, "id") ?? "";
  if (typeof id !== "string") throw TesseraError.invalidArg(`request 'id' must be a string, got ${describeJson(id)}`);
  const { parameters, binaryDataOutput } = parseRequestParameters(own(json, "parameters"));
  const rawInputs = own(json, "inputs");
  if (!Array.isArray(rawInputs)) {
    throw TesseraError.invalidArg(
      rawInputs === void 0 ? "the request JSON is missing 'inputs'" : `'inputs' must be an array, got ${describeJson(rawInputs)}`
    );
  }
  const binary = body.subarray(jsonLength);
  let cursor = 0;
  const seen = /* @__PURE__ */ new Set();
  const inputs = [];
  for (const [index, entry] of rawInputs.entries()) {
    if (!isJsonObject(entry)) {
      throw TesseraError.invalidArg(`input #${index} must be a JSON object, got ${describeJson(entry)}`);
    }
    const name = requireString(entry, "name", `input #${index}`);
    const what = `input '${name}' for model '${modelName}'`;
    if (seen.has(name)) throw TesseraError.invalidArg(`input '${name}' appears more than once in the request`);
    seen.add(name);
    const datatype = parseDatatype(own(entry, "datatype"), `input '${name}'`);
    const shape = parseShape(own(entry, "shape"), `input '${name}'`);
    elementCount(shape, what);
    const source = parseInputDataSource(entry, name);
    let data;
    if (source.kind === "binary") {
      if (headerLength === null) {
        throw TesseraError.invalidArg(
          `input '${name}' has 'binary_data_size', so the request must carry a valid '${INFERENCE_HEADER_CONTENT_LENGTH}' header giving the size of the JSON part`
        );
      }
      const remaining = binary.length - cursor;
      if (source.byteSize > remaining) {
        throw TesseraError.invalidArg(
          `unexpected size for input '${name}', expecting ${source.byteSize} bytes but only ${remaining} remain in the request body for model '${modelName}'`
        );
      }
      data = binary.subarray(cursor, cursor + source.byteSize);
      cursor += source.byteSize;
    } else {
      data = jsonDataToTensorBytes(datatype, shape, own(entry, "data"), { name, maxBytes: maxJsonInputBytes });
    }
    const tensor = { name, datatype, shape, data };
    validateTensorData(tensor, what);
    inputs.push(tensor);
  }
  if (cursor !== binary.length) {
    throw TesseraError.invalidArg(`unexpected additional input data for model '${modelName}'`);
  }
  const { outputs, outputBinary } = parseOutputs(own(json, "outputs"));
  const request = {
    id,
    modelName,
    modelVersion: options.modelVersion,
    inputs,
    parameters,
    ...outputs === void 0 ? {} : { outputs }
  };
  return { request, binaryOutputDefault: binaryDataOutput ?? false, outputBinary };
}
__name(decodeInferRequestBody, "decodeInferRequestBody");
function parseOutputs(value) {
  const outputBinary = /* @__PURE__ */ new Map();
  if (value === void 0) return { outputs: void 0, outputBinary };
  if (!Array.isArray(value)) {
    throw TesseraError.invalidArg(`'outputs' must be an array, got ${describeJson(value)}`);
  }
  const outputs = [];
  const seen = /* @__PURE__ */ new Set();
  for (const [index, entry] of value.entries()) {
    if (!isJsonObject(entry)) {
      throw TesseraError.invalidArg(`output #${index} must be a JSON object, got ${describeJson(entry)}`);
    }
    const name = requireString(entry, "name", `output #${index}`);
    if (seen.has(name)) throw TesseraError.invalidArg(`output '${name}' is requested more than once`);
    seen.add(name);
    const { binaryData, classification } = parseOutputParameters(own(entry, "parameters"), name);
    if (binaryData !== void 0) outputBinary.set(name, binaryData);
    outputs.push({
      name,
      ...binaryData === void 0 ? {} : { binaryData },
      ...classification === void 0 ? {} : { classification }
    });
  }
  return { outputs, outputBinary };
}
__name(parseOutputs, "parseOutputs");

// shared/src/kserve/infer-response-encode.ts
var utf83 = new TextEncoder();
function assembleBody(jsonText, sections) {
  const header = utf83.encode(jsonText);
  if (sections.length === 0) {
    return { body: header, headers: { "Content-Type": "application/json" } };
  }
  const total = sections.reduce((n, s) => n + s.length, header.length);
  const body = new Uint8Array(total);
  body.set(header, 0);
  let offset = header.length;
  for (const s of sections) {
    body.set(s, offset);
    offset += s.length;
  }
  return {
    body,
    headers: {
      "Content-Type": "application/octet-stream",
      [INFERENCE_HEADER_CONTENT_LENGTH]: String(header.length)
    }
  };
}
__name(assembleBody, "assembleBody");
function encodeInferResponse(response, options) {
  const sections = [];
  const outputs = response.outputs.map((tensor) => {
    try {
      validateTensorData(tensor, `output '${tensor.name}' of model '${response.modelName}'`);
    } catch (err) {
      throw TesseraError.internal(`inconsistent inference output: ${err.message}`, err);
    }
    const binary = options.outputBinary?.get(tensor.name) ?? options.binaryOutputDefault;
    const base = { name: tensor.name, datatype: tensor.datatype, shape: tensor.shape };
    if (binary) {
      sections.push(tensor.data);
      return { ...base, parameters: { binary_data_size: tensor.data.length } };
    }
    return { ...base, data: tensorBytesToJsonData(tensor) };
  });
  const parameters = response.parameters;
  const json = {
    ...response.id !== "" ? { id: response.id } : {},
    model_name: response.modelName,
    model_version: String(response.modelVersion),
    ...parameters !== void 0 && Object.keys(parameters).length > 0 ? { parameters } : {},
    outputs
  };
  return assembleBody(writeJson(json), sections);
}
__name(encodeInferResponse, "encodeInferResponse");

// shared/src/kserve/infer-request-encode.ts
function encodeInferRequestBody(request, options = {}) {
  const choice = options.binaryInputs ?? true;
  const isBinary = /* @__PURE__ */ __name((name) => typeof choice === "boolean" ? choice : choice.includes(name), "isBinary");
  const sections = [];
  const inputs = request.inputs.map((tensor) => {
    validateTensorData(tensor, `input '${tensor.name}'`);
    const base = { name: tensor.name, shape: tensor.shape, datatype: tensor.datatype };
    if (isBinary(tensor.name)) {
      sections.push(tensor.data);
      return { ...base, parameters: { binary_data_size: tensor.data.length } };
    }
    return { ...base, data: tensorBytesToJsonData(tensor, "input") };
  });
  const parameters = {
    ...request.parameters,
    ...options.binaryDataOutput === void 0 ? {} : { binary_data_output: options.binaryDataOutput }
  };
  const outputs = request.outputs?.map((o) => {
    const params = {
      ...o.binaryData === void 0 ? {} : { binary_data: o.binaryData },
      ...o.classification === void 0 ? {} : { classification: o.classification }
    };
    return Object.keys(params).length > 0 ? { name: o.name, parameters: params } : { name: o.name };
  });
  const json = {
    ...request.id !== "" ? { id: request.id } : {},
    ...Object.keys(parameters).length > 0 ? { parameters } : {},
    inputs,
    ...outputs === void 0 ? {} : { outputs }
  };
  return assembleBody(writeJson(json), sections);
}
__name(encodeInferRequestBody, "encodeInferRequestBody");

// shared/src/kserve/infer-response-decode.ts
function malformed(message) {
  return TesseraError.internal(`malformed inference response: ${message}`);
}
__name(malformed, "malformed");
function parseOutput(entry, index, binary, cursor) {
  if (!isJsonObject(entry)) throw malformed(`output #${index} is not an object`);
  const name = own(entry, "name");
  if (typeof name !== "string") throw malformed(`output #${index} has no name`);
  const datatype = parseDatatype(own(entry, "datatype"), `output '${name}'`);
  const shape = own(entry, "shape");
  if (!Array.isArray(shape) || !shape.every((d) => typeof d === "number" && Number.isInteger(d))) {
    throw malformed(`output '${name}' has an invalid shape ${describeJson(shape)}`);
  }
  const params = own(entry, "parameters");
  const size = isJsonObject(params) ? own(params, "binary_data_size") : void 0;
  let data;
  if (size !== void 0) {
    if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0 || size > binary.length - cursor.at) {
      throw malformed(`output '${name}' has binary_data_size ${describeJson(size)} beyond the body`);
    }
    data = binary.subarray(cursor.at, cursor.at + size);
    cursor.at += size;
  } else {
    const raw2 = own(entry, "data");
    const values = Array.isArray(raw2) && (datatype === "FP32" || datatype === "FP64") ? raw2.map((v) => v ?? NaN) : raw2;
    data = jsonDataToTensorBytes(datatype, shape, values, {
      name,
      role: "output",
      maxBytes: Infinity,
      allowNonFinite: true
    });
  }
  const tensor = { name, datatype, shape, data };
  validateTensorData(tensor, `output '${name}'`);
  return tensor;
}
__name(parseOutput, "parseOutput");
function parseParameters(value) {
  if (value === void 0) return void 0;
  if (!isJsonObject(value)) throw malformed("'parameters' is not an object");
  const entries = Object.entries(value).map(([k, v]) => {
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
      throw malformed(`parameter '${k}' has unsupported value ${describeJson(v)}`);
    }
    return [k, v];
  });
  return Object.fromEntries(entries);
}
__name(parseParameters, "parseParameters");
function decodeInferResponseBody(body, headerLength) {
  try {
    const jsonLength = parseHeaderLength(headerLength, body.length) ?? body.length;
    const json = parseJsonBytes(body.subarray(0, jsonLength), "response");
    if (!isJsonObject(json)) throw malformed("the body is not a JSON object");
    const obj = json;
    const modelName = own(obj, "model_name");
    const modelVersion = own(obj, "model_version");
    const id = own(obj, "id") ?? "";
    if (typeof modelName !== "string") throw malformed("'model_name' is missing");
    if (typeof modelVersion !== "string" && typeof modelVersion !== "number") {
      throw malformed("'model_version' is missing");
    }
    if (typeof id !== "string") throw malformed("'id' is not a string");
    const rawOutputs = own(obj, "outputs") ?? [];
    if (!Array.isArray(rawOutputs)) throw malformed("'outputs' is not an array");
    const binary = body.subarray(jsonLength);
    const cursor = { at: 0 };
    const outputs = rawOutputs.map((o, i) => parseOutput(o, i, binary, cursor));
    if (cursor.at !== binary.length) throw malformed("unexpected bytes after the last binary output");
    const parameters = parseParameters(own(obj, "parameters"));
    return {
      id,
      modelName,
      modelVersion: String(modelVersion),
      outputs,
      ...parameters === void 0 ? {} : { parameters }
    };
  } catch (err) {
    if (err instanceof TesseraError && err.code !== "INTERNAL") throw malformed(err.message);
    throw err;
  }
}
__name(decodeInferResponseBody, "decodeInferResponseBody");
function httpErrorFromResponse(status, body) {
  let message = `HTTP status ${status}`;
  try {
    const json = parseJsonBytes(body, "error");
    const error3 = isJsonObject(json) ? own(json, "error") : void 0;
    if (typeof error3 === "string") message = error3;
  } catch {
  }
  return new TesseraError(errorCodeFromHttp(status), message);
}
__name(httpErrorFromResponse, "httpErrorFromResponse");

// gateway/src/core/app/rate-limit.ts
async function applyRateLimit(limiter, metrics, auth, elements, setHeaders) {
  const limits = auth.tier.rateLimits;
  if (limits.requestsPerSecond === 0 && limits.elementsPerSecond === 0) return;
  if (limits.elementsPerSecond > 0 && elements > limits.elementsBurst) {
    throw TesseraError.invalidArg(
      `the request carries ${elements} tensor elements; tier '${auth.tier.name}' allows at most ${limits.elementsBurst} per request`
    );
  }
  const decision = await limiter.take(auth.tenant.id, elements, limits);
  if (limits.requestsPerSecond > 0) {
    setHeaders({
      "RateLimit-Limit": String(decision.limit),
      "RateLimit-Remaining": String(Math.max(0, Math.floor(decision.remaining))),
      "RateLimit-Reset": String(Math.max(0, Math.ceil(decision.resetSeconds)))
    });
  }
  if (!decision.allowed) {
    metrics.rateLimited(auth.tenant.id, auth.tier.name);
    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1e3));
    throw new TesseraError("RESOURCE_EXHAUSTED", `rate limit exceeded for tenant '${auth.tenant.id}' (tier '${auth.tier.name}'); retry in ${seconds} s`, {
      retryAfterMs: decision.retryAfterMs
    });
  }
}
__name(applyRateLimit, "applyRateLimit");
var DEADLINE_HEADER = "x-tessera-deadline-ms";
function requestDeadline(headers, now, timeoutMs) {
  const raw2 = headers.get(DEADLINE_HEADER);
  if (raw2 === null) return now + timeoutMs;
  const trimmed = raw2.trim();
  if (!/^[0-9]{1,10}$/.test(trimmed) || Number(trimmed) === 0) {
    throw TesseraError.invalidArg(`${DEADLINE_HEADER} must be a positive integer number of milliseconds, got ${JSON.stringify(raw2)}`);
  }
  return now + Math.min(Number(trimmed), timeoutMs);
}
__name(requestDeadline, "requestDeadline");

// gateway/src/core/jobs/job-view.ts
var JOBS_PATH = "/v1/jobs";
var jobLocation = /* @__PURE__ */ __name((id) => `${JOBS_PATH}/${id}`, "jobLocation");
var iso = /* @__PURE__ */ __name((ms) => ms === void 0 ? void 0 : new Date(ms).toISOString(), "iso");
function jobView(record) {
  const { spec } = record;
  const view = {
    id: record.id,
    status: record.state,
    model: spec.model,
    ...spec.version !== void 0 ? { model_version: spec.version } : {},
    tier: spec.tier.name,
    created_at: iso(spec.submittedAt),
    ...record.startedAt !== void 0 ? { started_at: iso(record.startedAt) } : {},
    ...record.finishedAt !== void 0 ? { finished_at: iso(record.finishedAt) } : {},
    attempts: record.attempts,
    ...record.error !== void 0 ? { error: record.error } : {}
  };
  const result = record.result;
  if (record.state === "succeeded" && result !== void 0) {
    if (result.modelVersion !== "") view.model_version = result.modelVersion;
    if (!Object.keys(result.headers).some((h) => h.toLowerCase() === "inference-header-content-length")) {
      try {
        view.result = JSON.parse(new TextDecoder().decode(fromBase64(result.body)));
      } catch {
      }
    }
    view.result_url = `${jobLocation(record.id)}/result`;
  }
  return view;
}
__name(jobView, "jobView");

// gateway/src/core/jobs/webhook-signing.ts
function generateWebhookSecret() {
  return `whsec_${toHex(crypto.getRandomValues(new Uint8Array(32)))}`;
}
__name(generateWebhookSecret, "generateWebhookSecret");

// gateway/src/core/jobs/job-routes.ts
var WEBHOOK_URL_HEADER = "x-tessera-webhook-url";
var MAX_WEBHOOK_URL = 2048;
var INFER_HEADER_LENGTH = "inference-header-content-length";
var jobsNeedRedis = /* @__PURE__ */ __name(() => TesseraError.unavailable("async jobs need Redis: start the gateway with REDIS_URL (or redisUrl in the config)"), "jobsNeedRedis");
async function acceptJob(jobs, submission, ctx) {
  const { auth, model, version: version2, body } = submission;
  const webhookUrl = webhookUrlOf(submission.headers);
  if (webhookUrl !== void 0 && (auth.tenant.webhookSecret ?? "") === "") {
    throw TesseraError.invalidArg(
      `tenant '${auth.tenant.id}' has no webhook secret yet: an admin creates one with POST /admin/tenants/${auth.tenant.id}/webhook-secret`
    );
  }
  const key = idempotencyKeyOf(submission.headers);
  const id = key === void 0 ? randomJobId() : await idempotentJobId(auth.tenant.id, key);
  const fingerprint = await requestFingerprint(model, version2, body);
  const { record, created } = await jobs.submit(id, {
    tenantId: auth.tenant.id,
    tier: auth.tier,
    model,
    ...version2 === void 0 ? {} : { version: version2 },
    body: toBase64(body),
    headerLength: submission.headerLength,
    ...webhookUrl === void 0 ? {} : { webhookUrl },
    fingerprint,
    submittedAt: ctx.now()
  });
  if (!created && record.spec.fingerprint !== fingerprint) {
    throw TesseraError.invalidArg("this Idempotency-Key was already used with a different request (model, version or body)");
  }
  if (created) ctx.observer?.submitted(auth.tier.name, model, submission.spilled);
  const headers = { Location: jobLocation(record.id), ...ctx.extraHeaders };
  if (!created) headers["Idempotent-Replayed"] = "true";
  return jsonResponse(jobView(record), 202, headers);
}
__name(acceptJob, "acceptJob");
function webhookUrlOf(headers) {
  const raw2 = headers.get(WEBHOOK_URL_HEADER);
  if (raw2 === null || raw2.trim() === "") return void 0;
  let url;
  try {
    url = new URL(raw2.trim());
  } catch {
    throw TesseraError.invalidArg(`${WEBHOOK_URL_HEADER} must be an absolute http(s) URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:" || url.href.length > MAX_WEBHOOK_URL || url.username !== "" || url.password !== "") {
    throw TesseraError.invalidArg(`${WEBHOOK_URL_HEADER} must be an http(s) URL of at most ${MAX_WEBHOOK_URL} characters, without credentials`);
  }
  return url.href;
}
__name(webhookUrlOf, "webhookUrlOf");
function registerJobRoutes(app, ctx) {
  const authMiddleware = /* @__PURE__ */ __name(async (c, next) => {
    c.set("route", "jobs");
    c.set("auth", await authenticate(ctx.tenants, ctx.tiers, c.req.raw.headers));
    await next();
  }, "authMiddleware");
  app.use(JOBS_PATH, authMiddleware);
  app.use(`${JOBS_PATH}/*`, authMiddleware);
  const queue = /* @__PURE__ */ __name(() => {
    if (ctx.jobs === void 0) throw jobsNeedRedis();
    return ctx.jobs;
  }, "queue");
  const authOf = /* @__PURE__ */ __name((c) => {
    const auth = c.get("auth");
    if (auth === void 0) throw TesseraError.internal("auth middleware did not run");
    return auth;
  }, "authOf");
  const ownJob = /* @__PURE__ */ __name(async (c) => {
    const id = c.req.param("id") ?? "";
    const auth = authOf(c);
    const record = JOB_ID_PATTERN.test(id) ? await queue().get(auth.tenant.id, id) : void 0;
    if (record === void 0 || record.spec.tenantId !== auth.tenant.id) throw TesseraError.notFound(`unknown job '${id}'`);
    c.set("model", record.spec.model);
    return record;
  }, "ownJob");
  app.post(JOBS_PATH, async (c) => {
    const auth = authOf(c);
    const jobs = queue();
    const model = c.req.query("model") ?? "";
    const version2 = c.req.query("version");
    if (model === "") throw TesseraError.invalidArg("POST /v1/jobs needs the model: /v1/jobs?model=NAME[&version=N]");
    if (version2 !== void 0 && !/^[0-9]{1,19}$/.test(version2)) throw TesseraError.invalidArg(`version must be a number, got '${version2}'`);
    c.set("model", model);
    requireModel(auth, model);
    const body = await readBodyLimited(c.req.raw, ctx.maxBodyBytes);
    const headerLength = c.req.header(INFER_HEADER_LENGTH) ?? null;
    if (headerLength !== null && headerLength.trim() === "0") {
      throw TesseraError.unsupported("raw binary requests (Inference-Header-Content-Length: 0) are not supported for jobs; send the JSON header");
    }
    const normalizedVersion = version2 === void 0 ? void 0 : BigInt(version2).toString();
    const decoded = decodeInferRequestBody({ body, headerLength, modelName: model, ...normalizedVersion === void 0 ? {} : { modelVersion: normalizedVersion } });
    const elements = decoded.request.inputs.reduce((n, t) => n + elementCount(t.shape), 0);
    await applyRateLimit(ctx.rateLimiter, ctx.metrics, auth, elements, (h) => Object.assign(c.get("extraHeaders"), h));
    return acceptJob(jobs, { auth, model, version: normalizedVersion, body, headerLength, headers: c.req.raw.headers, spilled: false }, ctx);
  });
  app.get(`${JOBS_PATH}/:id`, async (c) => jsonResponse(jobView(await ownJob(c))));
  app.get(`${JOBS_PATH}/:id/result`, async (c) => {
    const record = await ownJob(c);
    if (record.state !== "succeeded" || record.result === void 0) {
      return jsonResponse({ error: `job '${record.id}' has no result: it is ${record.state}`, status: record.state }, 409);
    }
    return new Response(fromBase64(record.result.body), { status: 200, headers: { ...record.result.headers } });
  });
  app.delete(`${JOBS_PATH}/:id`, async (c) => {
    const record = await ownJob(c);
    const outcome = await queue().cancel(record.spec.tenantId, record.id);
    if (outcome === void 0) throw TesseraError.notFound(`unknown job '${record.id}'`);
    if (outcome.outcome === "too_late") {
      return jsonResponse({ error: `job '${record.id}' cannot be cancelled: it is ${outcome.record.state}`, status: outcome.record.state }, 409);
    }
    ctx.observer?.finished("cancelled", record.spec.tier.name, record.spec.model);
    return jsonResponse(jobView(outcome.record));
  });
  app.post("/admin/tenants/:id/webhook-secret", async (c) => {
    const id = c.req.param("id") ?? "";
    const tenant = await ctx.tenants.getTenant(id);
    if (tenant === void 0) throw TesseraError.notFound(`unknown tenant '${id}'`);
    const webhookSecret = generateWebhookSecret();
    await ctx.tenants.putTenant({ ...tenant, webhookSecret });
    ctx.logger.info("webhook secret rotated", { tenant: id });
    return jsonResponse({ tenantId: id, webhookSecret }, 201);
  });
}
__name(registerJobRoutes, "registerJobRoutes");

// gateway/src/core/jobs/prefer-header.ts
function asyncPreference(prefer) {
  if (prefer === null || prefer === void 0 || prefer.trim() === "") return { always: false, spillOver: false };
  const tokens = new Set(
    prefer.split(",").map((part) => part.split(";")[0].split("=")[0].trim().toLowerCase()).filter((t) => t !== "")
  );
  const spillOver = tokens.has("spill-over");
  return { always: tokens.has("respond-async") && !spillOver, spillOver };
}
__name(asyncPreference, "asyncPreference");

// gateway/src/core/admission/clock.ts
var MAX_TIMER_MS = 2 ** 31 - 1;
var systemClock = {
  now: /* @__PURE__ */ __name(() => Date.now(), "now"),
  setTimeout: /* @__PURE__ */ __name((callback, ms) => globalThis.setTimeout(callback, Math.min(Math.max(0, ms), MAX_TIMER_MS)), "setTimeout"),
  clearTimeout: /* @__PURE__ */ __name((handle) => globalThis.clearTimeout(handle), "clearTimeout")
};

// gateway/src/core/admission/admission-queue.ts
var DEFAULT_MAX_QUEUE = 256;
var DEFAULT_RETRY_AFTER_MS = 1e3;
var AdmissionQueue = class {
  constructor(options) {
    this.options = options;
    this.maxQueue = options.maxQueue ?? DEFAULT_MAX_QUEUE;
    if (!Number.isSafeInteger(this.maxQueue) || this.maxQueue < 1) {
      throw TesseraError.invalidArg(`admission maxQueue must be a positive integer (got ${this.maxQueue})`);
    }
    this.defaultRetryAfterMs = options.defaultRetryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
    this.clock = options.clock ?? systemClock;
  }
  static {
    __name(this, "AdmissionQueue");
  }
  maxQueue;
  defaultRetryAfterMs;
  clock;
  /** One FIFO per priority; `priorities` is kept sorted ascending (highest tier first). */
  lanes = /* @__PURE__ */ new Map();
  priorities = [];
  perTier = /* @__PURE__ */ new Map();
  size = 0;
  pumping = false;
  closed = false;
  /** Waiting entries. */
  get depth() {
    return this.size;
  }
  /** Waiting entries of one tier. */
  depthOf(tier) {
    return this.perTier.get(tier) ?? 0;
  }
  /** Admits, queues or rejects; exactly one of the handlers is called, exactly once (maybe before this returns). */
  admit(request, handlers) {
    const now = this.clock.now();
    const { name } = this.options;
    if (this.closed) return this.refuse(request, handlers, "closed", TesseraError.unavailable("the gateway is shutting down"));
    if (request.signal?.aborted) return this.refuse(request, handlers, "cancelled", TesseraError.cancelled("the client cancelled the request"));
    if (request.deadline <= now) {
      return this.refuse(request, handlers, "deadline", this.unavailable(`the request deadline passed before model '${name}' could be queued`));
    }
    const capacity = this.options.load.capacity();
    if (capacity <= 0) {
      return this.refuse(request, handlers, "no_capacity", this.unavailable(`no node is ready to serve model '${name}'`));
    }
    const allowed = Math.max(1, Math.floor(request.share * this.maxQueue));
    if (this.depthOf(request.tier) >= allowed) {
      return this.refuse(
        request,
        handlers,
        "share_full",
        this.unavailable(`tier '${request.tier}' already holds its share (${allowed}) of the queue of model '${name}'`)
      );
    }
    const exec = this.options.load.execTimeMs();
    if (exec !== null) {
      const waitMs = this.estimateWaitMs(this.aheadOf(request.priority), capacity, exec);
      if (now + waitMs + exec > request.deadline) {
        return this.refuse(
          request,
          handlers,
          "deadline",
          new TesseraError(
            "UNAVAILABLE",
            `model '${name}' cannot answer before the deadline (estimated ${Math.ceil(waitMs + exec)} ms, ${request.deadline - now} ms left)`,
            { retryAfterMs: Math.max(1, Math.ceil(waitMs)) }
          )
        );
      }
    }
    if (this.size >= this.maxQueue) {
      const victim = this.newestOfLowestTier();
      if (victim === void 0 || victim.request.priority <= request.priority) {
        return this.refuse(request, handlers, "queue_full", this.unavailable(`the queue of model '${name}' is full`));
      }
      this.remove(victim);
      this.settleRejected(victim, "evicted", this.unavailable(`evicted from the queue of model '${name}' by a higher-priority request`));
    }
    const entry = { request, handlers, enqueuedAt: now, timer: void 0, onAbort: void 0 };
    this.insert(entry);
    this.armTimer(entry);
    if (request.signal) {
      entry.onAbort = () => {
        this.remove(entry);
        this.settleRejected(entry, "cancelled", TesseraError.cancelled("the client cancelled the request"));
      };
      request.signal.addEventListener("abort", entry.onAbort, { once: true });
    }
    this.pump();
  }
  /** Dispatches head entries while there is room; call whenever room may have grown. */
  pump() {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.size > 0 && this.options.load.room() > 0) {
        const entry = this.head();
        if (entry === void 0) break;
        this.remove(entry);
        this.cleanup(entry);
        this.options.observer?.dispatched?.(this.options.name, entry.request.tier, this.clock.now() - entry.enqueuedAt);
        entry.handlers.dispatch();
      }
    } finally {
      this.pumping = false;
    }
  }
  /** Rejects every waiting entry and refuses newcomers. */
  close() {
    this.closed = true;
    for (const priority of [...this.priorities]) {
      for (const entry of [...this.lanes.get(priority) ?? []]) {
        this.remove(entry);
        this.settleRejected(entry, "closed", TesseraError.unavailable("the gateway is shutting down"));
      }
    }
  }
  estimateWaitMs(ahead, capacity, exec) {
    const room2 = this.options.load.room();
    const waves = ahead + 1 <= room2 ? 0 : Math.ceil((ahead + 1 - room2) / capacity);
    return waves * exec;
  }
  /** Retry-After for a full queue: about the time the queue needs to drain. */
  unavailable(message) {
    const exec = this.options.load.execTimeMs();
    const capacity = this.options.load.capacity();
    const retryAfterMs = exec === null || capacity <= 0 ? this.defaultRetryAfterMs : Math.max(1, Math.ceil(Math.ceil((this.size + 1) / capacity) * exec));
    return new TesseraError("UNAVAILABLE", message, { retryAfterMs });
  }
  aheadOf(priority) {
    let ahead = 0;
    for (const p of this.priorities) {
      if (p > priority) break;
      ahead += this.lanes.get(p)?.length ?? 0;
    }
    return ahead;
  }
  head() {
    for (const p of this.priorities) {
      const lane = this.lanes.get(p);
      if (lane && lane.length > 0) return lane[0];
    }
    return void 0;
  }
  newestOfLowestTier() {
    for (let i = this.priorities.length - 1; i >= 0; i--) {
      const lane = this.lanes.get(this.priorities[i]);
      if (lane && lane.length > 0) return lane[lane.length - 1];
    }
    return void 0;
  }
  insert(entry) {
    const p = entry.request.priority;
    let lane = this.lanes.get(p);
    if (lane === void 0) {
      lane = [];
      this.lanes.set(p, lane);
      this.priorities = [...this.priorities, p].sort((a, b) => a - b);
    }
    lane.push(entry);
    this.size++;
    this.perTier.set(entry.request.tier, this.depthOf(entry.request.tier) + 1);
  }
  remove(entry) {
    const p = entry.request.priority;
    const lane = this.lanes.get(p);
    const index = lane?.indexOf(entry) ?? -1;
    if (lane === void 0 || index < 0) return;
    lane.splice(index, 1);
    if (lane.length === 0) {
      this.lanes.delete(p);
      this.priorities = this.priorities.filter((q) => q !== p);
    }
    this.size--;
    const left = this.depthOf(entry.request.tier) - 1;
    if (left > 0) this.perTier.set(entry.request.tier, left);
    else this.perTier.delete(entry.request.tier);
  }
  armTimer(entry) {
    const delay = entry.request.deadline - this.clock.now();
    entry.timer = this.clock.setTimeout(() => {
      entry.timer = void 0;
      if (this.clock.now() < entry.request.deadline) return this.armTimer(entry);
      this.remove(entry);
      this.settleRejected(
        entry,
        "expired",
        this.unavailable(`the request waited in the queue of model '${this.options.name}' until its deadline`)
      );
    }, Math.min(delay, MAX_TIMER_MS));
  }
  cleanup(entry) {
    if (entry.timer !== void 0) this.clock.clearTimeout(entry.timer);
    entry.timer = void 0;
    if (entry.onAbort) entry.request.signal?.removeEventListener("abort", entry.onAbort);
    entry.onAbort = void 0;
  }
  settleRejected(entry, reason, error3) {
    this.cleanup(entry);
    this.refuse(entry.request, entry.handlers, reason, error3);
  }
  refuse(request, handlers, reason, error3) {
    this.options.observer?.rejected?.(this.options.name, request.tier, reason);
    rejectReasons.set(error3, reason);
    handlers.reject(error3);
  }
};
var rejectReasons = /* @__PURE__ */ new WeakMap();
function admissionRejectReasonOf(error3) {
  return typeof error3 === "object" && error3 !== null ? rejectReasons.get(error3) : void 0;
}
__name(admissionRejectReasonOf, "admissionRejectReasonOf");

// gateway/src/core/jobs/spill-over.ts
function isQueueTimeoutRejection(error3) {
  const reason = admissionRejectReasonOf(error3);
  return reason === "deadline" || reason === "expired";
}
__name(isQueueTimeoutRejection, "isQueueTimeoutRejection");

// gateway/src/config/gateway-config.ts
function modelCacheSettings(cache, model) {
  if (!cache.enabled) return { enabled: false, shared: false };
  return cache.models[model] ?? cache.models["*"] ?? { enabled: false, shared: false };
}
__name(modelCacheSettings, "modelCacheSettings");

// gateway/src/config/default-tiers.ts
var DEFAULT_TIERS = Object.freeze({
  premium: Object.freeze({
    name: "premium",
    priority: 1,
    queueTimeoutMs: 5e3,
    queueShare: 1,
    rateLimits: Object.freeze({ requestsPerSecond: 200, burst: 400, elementsPerSecond: 5e7, elementsBurst: 1e8 }),
    cacheTtlSeconds: 300,
    allowedModels: Object.freeze(["*"])
  }),
  standard: Object.freeze({
    name: "standard",
    priority: 2,
    queueTimeoutMs: 2e3,
    queueShare: 0.6,
    rateLimits: Object.freeze({ requestsPerSecond: 50, burst: 100, elementsPerSecond: 1e7, elementsBurst: 2e7 }),
    cacheTtlSeconds: 300,
    allowedModels: Object.freeze(["*"])
  }),
  free: Object.freeze({
    name: "free",
    priority: 3,
    queueTimeoutMs: 500,
    queueShare: 0.2,
    rateLimits: Object.freeze({ requestsPerSecond: 5, burst: 10, elementsPerSecond: 1e6, elementsBurst: 2e6 }),
    cacheTtlSeconds: 60,
    allowedModels: Object.freeze(["*"])
  })
});

// gateway/src/core/routing/node-load.ts
var DEFAULT_OVERCOMMIT = 1;
var UNKNOWN_LOAD = { queued: 0, inflight: 0, capacity: 1, execTimeEmaMs: null, versions: [] };
function modelLoadOf(node, model) {
  return node.models.get(model) ?? UNKNOWN_LOAD;
}
__name(modelLoadOf, "modelLoadOf");
function outstanding(node, model) {
  const load = modelLoadOf(node, model);
  return load.queued + load.inflight + (node.sentSinceReport ?? node.localInflight);
}
__name(outstanding, "outstanding");
function score(node, model) {
  return outstanding(node, model) / Math.max(1, modelLoadOf(node, model).capacity);
}
__name(score, "score");
function room(node, model, overcommit = DEFAULT_OVERCOMMIT) {
  const slots = Math.floor(Math.max(1, modelLoadOf(node, model).capacity) * (1 + overcommit));
  return Math.max(0, slots - outstanding(node, model));
}
__name(room, "room");
function reportedExecTimeMs(nodes, model) {
  let weighted = 0;
  let weight = 0;
  for (const node of nodes) {
    const load = modelLoadOf(node, model);
    if (load.execTimeEmaMs === null) continue;
    weighted += load.execTimeEmaMs * load.capacity;
    weight += load.capacity;
  }
  return weight === 0 ? null : weighted / weight;
}
__name(reportedExecTimeMs, "reportedExecTimeMs");

// gateway/src/core/routing/pickers.ts
function powerOfTwoChoices(random = Math.random) {
  return {
    pick(_model, nodes, score2) {
      if (nodes.length <= 1) return nodes[0];
      const i = Math.min(nodes.length - 1, Math.floor(random() * nodes.length));
      let j = Math.min(nodes.length - 2, Math.floor(random() * (nodes.length - 1)));
      if (j >= i) j++;
      const a = nodes[i];
      const b = nodes[j];
      return score2(b) < score2(a) ? b : a;
    }
  };
}
__name(powerOfTwoChoices, "powerOfTwoChoices");
function roundRobin() {
  const next = /* @__PURE__ */ new Map();
  return {
    pick(model, nodes) {
      if (nodes.length === 0) return void 0;
      const sorted = [...nodes].sort((x, y) => x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
      const turn = next.get(model) ?? 0;
      next.set(model, turn + 1);
      return sorted[turn % sorted.length];
    }
  };
}
__name(roundRobin, "roundRobin");
var PICKER_NAMES = ["p2c", "round-robin"];
var REGISTRY = {
  p2c: /* @__PURE__ */ __name((random) => powerOfTwoChoices(random), "p2c"),
  "round-robin": /* @__PURE__ */ __name(() => roundRobin(), "round-robin")
};
function createPicker(name, random = Math.random) {
  const factory = REGISTRY[name];
  if (factory === void 0) {
    throw TesseraError.invalidArg(`unknown routing policy '${name}': use one of ${PICKER_NAMES.join(", ")}`);
  }
  return factory(random);
}
__name(createPicker, "createPicker");

// gateway/src/core/routing/routing-ports.ts
function upstreamDetails(error3) {
  return typeof error3 === "object" && error3 !== null ? error3 : {};
}
__name(upstreamDetails, "upstreamDetails");
function isNotAccepted(error3) {
  return upstreamDetails(error3).notAccepted === true;
}
__name(isNotAccepted, "isNotAccepted");
function markNotAccepted(error3, notAccepted = true) {
  return Object.assign(error3, { notAccepted });
}
__name(markNotAccepted, "markNotAccepted");

// gateway/src/core/routing/version-splits.ts
var VERSION_PATTERN = /^[0-9]{1,19}$/;
var HEADER_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
function normalizeRoutingConfig(config2 = {}) {
  const fail = /* @__PURE__ */ __name((path, message) => {
    throw TesseraError.invalidArg(`invalid routing config: ${path} ${message}`);
  }, "fail");
  const policy = config2.policy ?? "p2c";
  if (!PICKER_NAMES.includes(policy)) fail("policy", `must be one of ${PICKER_NAMES.join(", ")} (got ${JSON.stringify(policy)})`);
  const models = {};
  for (const [model, routing] of Object.entries(config2.models ?? {})) {
    const path = `models.${model}`;
    const splits = (routing.splits ?? []).map((split, i) => {
      if (typeof split.version !== "string" || !VERSION_PATTERN.test(split.version)) {
        fail(`${path}.splits[${i}].version`, `must be a decimal version string (got ${JSON.stringify(split.version)})`);
      }
      if (typeof split.weight !== "number" || !Number.isFinite(split.weight) || split.weight <= 0) {
        fail(`${path}.splits[${i}].weight`, `must be a number > 0 (got ${JSON.stringify(split.weight)})`);
      }
      return Object.freeze({ version: split.version, weight: split.weight });
    });
    const seen = /* @__PURE__ */ new Set();
    for (const split of splits) {
      if (seen.has(split.version)) fail(`${path}.splits`, `lists version ${split.version} twice`);
      seen.add(split.version);
    }
    if (routing.stickyHeader !== void 0 && !HEADER_PATTERN.test(routing.stickyHeader)) {
      fail(`${path}.stickyHeader`, `must be a header name (got ${JSON.stringify(routing.stickyHeader)})`);
    }
    models[model] = Object.freeze({
      splits: Object.freeze(splits),
      ...routing.stickyHeader !== void 0 ? { stickyHeader: routing.stickyHeader.toLowerCase() } : {}
    });
  }
  return Object.freeze({ policy, models: Object.freeze(models) });
}
__name(normalizeRoutingConfig, "normalizeRoutingConfig");
function fnv1a32(text) {
  let hash = 2166136261;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 16777619) >>> 0;
  }
  return hash >>> 0;
}
__name(fnv1a32, "fnv1a32");
function selectVersion(model, routing, sticky, available, random = Math.random) {
  const splits = (routing?.splits ?? []).filter((split) => available(split.version));
  if (splits.length === 0) return void 0;
  const total = splits.reduce((sum, split) => sum + split.weight, 0);
  const point = sticky !== void 0 ? fnv1a32(`${model}\0${sticky}`) / 2 ** 32 * total : random() * total;
  let acc = 0;
  for (const split of splits) {
    acc += split.weight;
    if (point < acc) return split.version;
  }
  return splits[splits.length - 1].version;
}
__name(selectVersion, "selectVersion");

// gateway/src/core/routing/dispatcher.ts
var EMA_ALPHA = 0.2;
var DEFAULT_PUMP_INTERVAL_MS = 100;
function createDispatcher(options) {
  const { directory, transport, breakers, observer } = options;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const routing = normalizeRoutingConfig(options.routing);
  const picker = createPicker(routing.policy ?? "p2c", random);
  const overcommit = options.admission?.overcommit ?? DEFAULT_OVERCOMMIT;
  if (!Number.isFinite(overcommit) || overcommit < 0) {
    throw TesseraError.invalidArg(`admission overcommit must be a number >= 0 (got ${overcommit})`);
  }
  const pumpIntervalMs = options.admission?.pumpIntervalMs ?? DEFAULT_PUMP_INTERVAL_MS;
  const queues = /* @__PURE__ */ new Map();
  const measuredExecMs = /* @__PURE__ */ new Map();
  let pumpTimer;
  let closed = false;
  const eligible = /* @__PURE__ */ __name((model, version2) => directory.candidates(model, version2).filter((node) => !breakers?.isOpen(node.id)), "eligible");
  const known = /* @__PURE__ */ __name((model, version2) => directory.all().some((node) => {
    const load = node.models.get(model);
    return load !== void 0 && (version2 === void 0 || load.versions.includes(version2));
  }) || directory.candidates(model, version2).length > 0, "known");
  const notFound = /* @__PURE__ */ __name((model, version2) => TesseraError.notFound(
    version2 === void 0 ? `Request for unknown model: '${model}' is not found` : `Request for unknown model: '${model}' version ${version2} is not found`
  ), "notFound");
  function queueFor(model, version2) {
    const key = version2 === void 0 ? model : `${model}\0${version2}`;
    let entry = queues.get(key);
    if (entry === void 0) {
      const queue = new AdmissionQueue({
        name: version2 === void 0 ? model : `${model}@${version2}`,
        clock,
        ...options.admission?.maxQueue !== void 0 ? { maxQueue: options.admission.maxQueue } : {},
        ...options.admission?.defaultRetryAfterMs !== void 0 ? { defaultRetryAfterMs: options.admission.defaultRetryAfterMs } : {},
        ...observer !== void 0 ? { observer } : {},
        load: {
          room: /* @__PURE__ */ __name(() => eligible(model, version2).reduce((sum, node) => sum + room(node, model, overcommit), 0), "room"),
          capacity: /* @__PURE__ */ __name(() => eligible(model, version2).reduce((sum, node) => sum + Math.max(1, modelLoadOf(node, model).capacity), 0), "capacity"),
          execTimeMs: /* @__PURE__ */ __name(() => reportedExecTimeMs(eligible(model, version2), model) ?? measuredExecMs.get(model) ?? null, "execTimeMs")
        }
      });
      entry = { model, version: version2, queue };
      queues.set(key, entry);
    }
    return entry;
  }
  __name(queueFor, "queueFor");
  function pumpAll(model) {
    for (const entry of queues.values()) {
      if (model === void 0 || entry.model === model) entry.queue.pump();
    }
    schedulePump();
  }
  __name(pumpAll, "pumpAll");
  function schedulePump() {
    if (closed || pumpTimer !== void 0) return;
    if (![...queues.values()].some((entry) => entry.queue.depth > 0)) return;
    pumpTimer = clock.setTimeout(() => {
      pumpTimer = void 0;
      pumpAll();
    }, pumpIntervalMs);
  }
  __name(schedulePump, "schedulePump");
  const unsubscribe = options.fleetEvents?.onChange(() => pumpAll());
  function pickNode(model, version2, exclude, needRoom) {
    const nodes = eligible(model, version2).filter((node) => !exclude.has(node.id));
    const withRoom = needRoom ? nodes.filter((node) => room(node, model, overcommit) > 0) : nodes;
    const pool = withRoom.length > 0 ? withRoom : nodes;
    return picker.pick(model, pool, (node) => score(node, model));
  }
  __name(pickNode, "pickNode");
  function callOptions(request, ctx, span) {
    const remainingUs = Math.max(1, Math.floor((ctx.deadline - clock.now()) * 1e3));
    const clientTimeout = request.parameters.timeout;
    const timeoutUs = typeof clientTimeout === "number" && Number.isSafeInteger(clientTimeout) && clientTimeout > 0 ? Math.min(clientTimeout, remainingUs) : remainingUs;
    const trace3 = span?.context();
    return { deadline: ctx.deadline, priority: ctx.tier.priority, timeoutUs, ...ctx.signal ? { signal: ctx.signal } : {}, ...trace3 ? { trace: trace3 } : {} };
  }
  __name(callOptions, "callOptions");
  async function sendOnce(node, release2, request, ctx, retry) {
    const model = request.modelName;
    const started = clock.now();
    let outcome = "OK";
    const span = ctx.trace?.tracer.startSpan("upstream", {
      parent: ctx.trace.parent,
      kind: "client",
      attributes: { "tessera.node_id": node.id, "tessera.attempt": retry ? 2 : 1, "tessera.model": model, "tessera.model_version": request.modelVersion }
    });
    try {
      const result = await transport.infer(node, request, callOptions(request, ctx, span));
      if (result.load) directory.observe(node.id, model, result.load);
      const elapsed = clock.now() - started;
      const previous = measuredExecMs.get(model);
      measuredExecMs.set(model, previous === void 0 ? elapsed : previous + EMA_ALPHA * (elapsed - previous));
      return result;
    } catch (error3) {
      const load = upstreamDetails(error3).load;
      if (load) directory.observe(node.id, model, load);
      outcome = toTesseraError(error3).code;
      span?.setError(error3);
      throw error3;
    } finally {
      span?.end();
      release2();
      observer?.upstream?.({ model, nodeId: node.id, outcome, durationMs: clock.now() - started, retry });
      pumpAll(model);
    }
  }
  __name(sendOnce, "sendOnce");
  async function run(first, firstRelease, request, ctx, version2) {
    try {
      return await sendOnce(first, firstRelease, request, ctx, false);
    } catch (error3) {
      if (!isNotAccepted(error3) || ctx.signal?.aborted || clock.now() >= ctx.deadline) throw toTesseraError(error3);
      const next = pickNode(request.modelName, version2, /* @__PURE__ */ new Set([first.id]), false);
      if (next === void 0) throw toTesseraError(error3);
      const release2 = directory.track(next.id);
      try {
        return await sendOnce(next, release2, request, ctx, true);
      } catch (second) {
        throw toTesseraError(second);
      }
    }
  }
  __name(run, "run");
  async function metadataCall(model, version2, ctx, call) {
    const opts = { deadline: ctx.deadline, ...ctx.signal ? { signal: ctx.signal } : {} };
    const first = pickNode(model, version2, /* @__PURE__ */ new Set(), false);
    if (first === void 0) {
      if (!known(model, version2)) throw notFound(model, version2);
      throw new TesseraError("UNAVAILABLE", `no node is ready to serve model '${model}'`, { retryAfterMs: 1e3 });
    }
    try {
      return await call(first, opts);
    } catch (error3) {
      if (!isNotAccepted(error3) || ctx.signal?.aborted || clock.now() >= ctx.deadline) throw toTesseraError(error3);
      const next = pickNode(model, version2, /* @__PURE__ */ new Set([first.id]), false);
      if (next === void 0) throw toTesseraError(error3);
      return call(next, opts).catch((second) => {
        throw toTesseraError(second);
      });
    }
  }
  __name(metadataCall, "metadataCall");
  return {
    dispatch(request, ctx) {
      if (closed) return Promise.reject(TesseraError.unavailable("the gateway is shutting down"));
      const model = request.modelName;
      const asked = request.modelVersion === void 0 || request.modelVersion === "" ? void 0 : request.modelVersion;
      const modelRouting = routing.models?.[model];
      const header = modelRouting?.stickyHeader;
      const sticky = header !== void 0 ? ctx.headers?.get(header) ?? void 0 : void 0;
      const version2 = asked ?? selectVersion(model, modelRouting, sticky, (v) => eligible(model, v).length > 0, random);
      if (!known(model, version2)) return Promise.reject(notFound(model, version2));
      const routed = version2 === asked ? request : { ...request, modelVersion: version2 };
      const { queue } = queueFor(model, version2);
      const admission = ctx.trace?.tracer.startSpan("admission", {
        parent: ctx.trace.parent,
        attributes: { "tessera.model": model, "tessera.model_version": version2, "tessera.tier": ctx.tier.name, "tessera.priority": ctx.tier.priority, "tessera.queue_depth": queue.depth }
      });
      return new Promise((resolve, reject) => {
        queue.admit(
          { tier: ctx.tier.name, priority: ctx.tier.priority, share: ctx.tier.queueShare, deadline: ctx.deadline, ...ctx.signal ? { signal: ctx.signal } : {} },
          {
            dispatch: /* @__PURE__ */ __name(() => {
              admission?.end();
              const node = pickNode(model, version2, /* @__PURE__ */ new Set(), true);
              if (node === void 0) {
                reject(new TesseraError("UNAVAILABLE", `no node is ready to serve model '${model}'`, { retryAfterMs: 1e3 }));
                return;
              }
              const release2 = directory.track(node.id);
              run(node, release2, routed, ctx, version2).then(resolve, reject);
            }, "dispatch"),
            reject: /* @__PURE__ */ __name((error3) => {
              admission?.setError(error3);
              admission?.end();
              reject(error3);
            }, "reject")
          }
        );
        schedulePump();
      });
    },
    modelConfig: /* @__PURE__ */ __name((model, version2, ctx) => metadataCall(model, version2, ctx, (node, opts) => transport.modelConfig(node, model, version2, opts)), "modelConfig"),
    modelMetadata: /* @__PURE__ */ __name((model, version2, ctx) => metadataCall(model, version2, ctx, (node, opts) => transport.modelMetadata(node, model, version2, opts)), "modelMetadata"),
    modelReady: /* @__PURE__ */ __name((model, version2) => eligible(model, version2).length > 0, "modelReady"),
    queueDepth: /* @__PURE__ */ __name((model) => [...queues.values()].reduce((sum, entry) => entry.model === model ? sum + entry.queue.depth : sum, 0), "queueDepth"),
    async close() {
      if (closed) return;
      closed = true;
      unsubscribe?.();
      if (pumpTimer !== void 0) clock.clearTimeout(pumpTimer);
      pumpTimer = void 0;
      for (const entry of queues.values()) entry.queue.close();
    }
  };
}
__name(createDispatcher, "createDispatcher");

// gateway/src/config/load-gateway-config.ts
var IDENTIFIER_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
var SHA256_HEX = /^[0-9a-f]{64}$/;
var HOST_PORT = /^[^\s/]+:\d{1,5}$/;
var DEFAULT_PORT = 8080;
var DEFAULT_REQUEST_TIMEOUT_MS = 3e4;
var DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
var DEFAULT_MAX_CACHE_ENTRY_BYTES = 1024 * 1024;
var isObject = /* @__PURE__ */ __name((v) => typeof v === "object" && v !== null && !Array.isArray(v), "isObject");
var Checker = class {
  static {
    __name(this, "Checker");
  }
  issues = [];
  issue(path, message) {
    this.issues.push(`${path}: ${message}`);
    return void 0;
  }
  object(value, path) {
    if (value === void 0) return void 0;
    return isObject(value) ? value : this.issue(path, `must be an object, got ${describe2(value)}`);
  }
  unknownKeys(obj, allowed, path) {
    for (const key of Object.keys(obj)) {
      if (!allowed.includes(key)) this.issue(`${path}.${key}`, `unknown field (known: ${allowed.join(", ")})`);
    }
  }
  number(value, path, opts = {}) {
    if (value === void 0) return void 0;
    if (typeof value !== "number" || !Number.isFinite(value)) return this.issue(path, `must be a number, got ${describe2(value)}`);
    if (opts.integer === true && !Number.isInteger(value)) return this.issue(path, `must be an integer, got ${value}`);
    if (opts.min !== void 0 && (opts.exclusiveMin === true ? value <= opts.min : value < opts.min)) {
      return this.issue(path, `must be ${opts.exclusiveMin === true ? ">" : ">="} ${opts.min}, got ${value}`);
    }
    if (opts.max !== void 0 && value > opts.max) return this.issue(path, `must be <= ${opts.max}, got ${value}`);
    return value;
  }
  string(value, path, pattern, what) {
    if (value === void 0) return void 0;
    if (typeof value !== "string") return this.issue(path, `must be a string, got ${describe2(value)}`);
    if (pattern !== void 0 && !pattern.test(value)) return this.issue(path, `must be ${what ?? `like ${pattern}`}, got ${JSON.stringify(value)}`);
    return value;
  }
  boolean(value, path) {
    if (value === void 0) return void 0;
    return typeof value === "boolean" ? value : this.issue(path, `must be true or false, got ${describe2(value)}`);
  }
  stringList(value, path) {
    if (value === void 0) return void 0;
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || v === "")) {
      return this.issue(path, `must be an array of non-empty strings, got ${describe2(value)}`);
    }
    return value;
  }
  array(value, path) {
    if (value === void 0) return void 0;
    return Array.isArray(value) ? value : this.issue(path, `must be an array, got ${describe2(value)}`);
  }
};
function describe2(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `${typeof value} ${JSON.stringify(value)}`;
}
__name(describe2, "describe");
var TOP_KEYS = [
  "port",
  "host",
  "adminKeyHash",
  "redisUrl",
  "keyPrefix",
  "requestTimeoutMs",
  "maxBodyBytes",
  "metrics",
  "tiers",
  "tenants",
  "nodes",
  "routing",
  "cache"
];
var TIER_KEYS = ["priority", "queueTimeoutMs", "queueShare", "rateLimits", "cacheTtlSeconds", "allowedModels"];
var RATE_KEYS = ["requestsPerSecond", "burst", "elementsPerSecond", "elementsBurst"];
function loadGatewayConfig(text) {
  let raw2;
  try {
    raw2 = JSON.parse(text);
  } catch (error3) {
    throw TesseraError.invalidArg(`invalid gateway config: not valid JSON: ${error3.message}`);
  }
  const c = new Checker();
  const root = isObject(raw2) ? raw2 : c.issue("$", `must be a JSON object, got ${describe2(raw2)}`) ?? {};
  c.unknownKeys(root, TOP_KEYS, "$");
  const port = c.number(root.port, "$.port", { min: 0, max: 65535, integer: true }) ?? DEFAULT_PORT;
  const host = c.string(root.host, "$.host") ?? "0.0.0.0";
  const adminKeyHash = c.string(root.adminKeyHash, "$.adminKeyHash", SHA256_HEX, "a lowercase sha256 hex digest (64 characters)") ?? null;
  const redisUrl = c.string(root.redisUrl, "$.redisUrl", /^rediss?:\/\//, "a redis:// or rediss:// URL") ?? null;
  const keyPrefix = c.string(root.keyPrefix, "$.keyPrefix", /^[A-Za-z0-9._:-]{0,64}$/, 'letters, digits, ".", "_", ":" or "-" (no braces)') ?? "tessera:";
  const requestTimeoutMs = c.number(root.requestTimeoutMs, "$.requestTimeoutMs", { min: 1, integer: true }) ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const maxBodyBytes = c.number(root.maxBodyBytes, "$.maxBodyBytes", { min: 1, integer: true }) ?? DEFAULT_MAX_BODY_BYTES;
  const metricsObj = c.object(root.metrics, "$.metrics") ?? {};
  c.unknownKeys(metricsObj, ["requireAdminKey"], "$.metrics");
  const metrics = { requireAdminKey: c.boolean(metricsObj.requireAdminKey, "$.metrics.requireAdminKey") ?? false };
  const tiers = readTiers(c, root.tiers);
  const tenants = readTenants(c, root.tenants, tiers);
  const nodes = readNodes(c, root.nodes);
  const routing = readRouting(c, root.routing);
  const cache = readCache(c, root.cache);
  if (c.issues.length > 0) {
    const n = c.issues.length;
    throw TesseraError.invalidArg(`invalid gateway config (${n} problem${n === 1 ? "" : "s"}):
  - ${c.issues.join("\n  - ")}`);
  }
  return deepFreeze({
    port,
    host,
    adminKeyHash,
    redisUrl,
    keyPrefix,
    requestTimeoutMs,
    maxBodyBytes,
    metrics,
    tiers,
    tenants,
    nodes,
    routing,
    cache
  });
}
__name(loadGatewayConfig, "loadGatewayConfig");
function readRateLimits(c, value, path, base) {
  const obj = c.object(value, path);
  if (obj === void 0 && value !== void 0) return void 0;
  const o = obj ?? {};
  c.unknownKeys(o, RATE_KEYS, path);
  const out = {};
  let complete = true;
  for (const key of RATE_KEYS) {
    const v = c.number(o[key], `${path}.${key}`, { min: 0 }) ?? base?.[key];
    if (v === void 0) {
      if (o[key] === void 0) c.issue(`${path}.${key}`, "is required for a new tier");
      complete = false;
    }
    out[key] = v;
  }
  if (!complete) return void 0;
  const limits = out;
  if (limits.requestsPerSecond > 0 && limits.burst < 1) c.issue(`${path}.burst`, "must be >= 1 when requestsPerSecond is set");
  if (limits.elementsPerSecond > 0 && limits.elementsBurst < 1) c.issue(`${path}.elementsBurst`, "must be >= 1 when elementsPerSecond is set");
  return limits;
}
__name(readRateLimits, "readRateLimits");
function readTiers(c, value) {
  const tiers = { ...DEFAULT_TIERS };
  const obj = c.object(value, "$.tiers");
  if (obj === void 0) return tiers;
  for (const [name, entry] of Object.entries(obj)) {
    const path = `$.tiers.${name}`;
    if (!IDENTIFIER_PATTERN.test(name)) c.issue(path, 'a tier name must be 1-64 letters, digits, ".", "_" or "-"');
    const t = c.object(entry, path);
    if (t === void 0) continue;
    c.unknownKeys(t, TIER_KEYS, path);
    const base = Object.hasOwn(DEFAULT_TIERS, name) ? DEFAULT_TIERS[name] : void 0;
    const need = /* @__PURE__ */ __name((v, key, raw2) => {
      if (v === void 0 && raw2 === void 0) c.issue(`${path}.${key}`, "is required for a new tier");
      return v;
    }, "need");
    const priority = need(c.number(t.priority, `${path}.priority`, { min: 1, integer: true }) ?? base?.priority, "priority", t.priority);
    const queueTimeoutMs = need(c.number(t.queueTimeoutMs, `${path}.queueTimeoutMs`, { min: 1, integer: true }) ?? base?.queueTimeoutMs, "queueTimeoutMs", t.queueTimeoutMs);
    const queueShare = need(c.number(t.queueShare, `${path}.queueShare`, { min: 0, max: 1, exclusiveMin: true }) ?? base?.queueShare, "queueShare", t.queueShare);
    const rateLimits = readRateLimits(c, t.rateLimits, `${path}.rateLimits`, base?.rateLimits);
    const cacheTtlSeconds = need(c.number(t.cacheTtlSeconds, `${path}.cacheTtlSeconds`, { min: 0, integer: true }) ?? base?.cacheTtlSeconds, "cacheTtlSeconds", t.cacheTtlSeconds);
    const allowedModels = need(c.stringList(t.allowedModels, `${path}.allowedModels`) ?? base?.allowedModels, "allowedModels", t.allowedModels);
    if (priority !== void 0 && queueTimeoutMs !== void 0 && queueShare !== void 0 && rateLimits !== void 0 && cacheTtlSeconds !== void 0 && allowedModels !== void 0) {
      tiers[name] = { name, priority, queueTimeoutMs, queueShare, rateLimits, cacheTtlSeconds, allowedModels: [...allowedModels] };
    }
  }
  return tiers;
}
__name(readTiers, "readTiers");
function readTenants(c, value, tiers) {
  const list = c.array(value, "$.tenants") ?? [];
  const tenants = [];
  const tenantIds = /* @__PURE__ */ new Set();
  const keyIds = /* @__PURE__ */ new Set();
  const hashes = /* @__PURE__ */ new Set();
  list.forEach((entry, i) => {
    const path = `$.tenants[${i}]`;
    const t = c.object(entry, path);
    if (t === void 0) return;
    c.unknownKeys(t, ["id", "name", "tier", "allowedModels", "keys"], path);
    const id = c.string(t.id, `${path}.id`, IDENTIFIER_PATTERN, '1-64 letters, digits, ".", "_" or "-"');
    if (t.id === void 0) c.issue(`${path}.id`, "is required");
    if (id !== void 0 && tenantIds.has(id)) c.issue(`${path}.id`, `duplicate tenant id '${id}'`);
    if (id !== void 0) tenantIds.add(id);
    const name = c.string(t.name, `${path}.name`) ?? id ?? "";
    const tier = c.string(t.tier, `${path}.tier`);
    if (t.tier === void 0) c.issue(`${path}.tier`, "is required");
    if (tier !== void 0 && !Object.hasOwn(tiers, tier)) {
      c.issue(`${path}.tier`, `unknown tier '${tier}' (known: ${Object.keys(tiers).join(", ")})`);
    }
    const allowedModels = c.stringList(t.allowedModels, `${path}.allowedModels`);
    const keys = [];
    (c.array(t.keys, `${path}.keys`) ?? []).forEach((k, j) => {
      const kp = `${path}.keys[${j}]`;
      const ko = c.object(k, kp);
      if (ko === void 0) return;
      c.unknownKeys(ko, ["id", "hash"], kp);
      const keyId = c.string(ko.id, `${kp}.id`, IDENTIFIER_PATTERN, '1-64 letters, digits, ".", "_" or "-"');
      if (ko.id === void 0) c.issue(`${kp}.id`, "is required");
      const hash = c.string(ko.hash, `${kp}.hash`, SHA256_HEX, "a lowercase sha256 hex digest of the key (never the key itself)");
      if (ko.hash === void 0) c.issue(`${kp}.hash`, "is required");
      if (keyId !== void 0 && keyIds.has(keyId)) c.issue(`${kp}.id`, `duplicate key id '${keyId}'`);
      if (hash !== void 0 && hashes.has(hash)) c.issue(`${kp}.hash`, "the same key hash appears twice");
      if (keyId !== void 0) keyIds.add(keyId);
      if (hash !== void 0) hashes.add(hash);
      if (keyId !== void 0 && hash !== void 0) keys.push({ id: keyId, hash });
    });
    if (id !== void 0 && tier !== void 0) {
      tenants.push({ id, name, tier, keys, ...allowedModels === void 0 ? {} : { allowedModels } });
    }
  });
  return tenants;
}
__name(readTenants, "readTenants");
function readNodes(c, value) {
  const nodes = [];
  const ids = /* @__PURE__ */ new Set();
  (c.array(value, "$.nodes") ?? []).forEach((entry, i) => {
    const path = `$.nodes[${i}]`;
    const n = c.object(entry, path);
    if (n === void 0) return;
    c.unknownKeys(n, ["id", "grpc", "http"], path);
    const grpc = c.string(n.grpc, `${path}.grpc`, HOST_PORT, '"host:port"') ?? null;
    const http = c.string(n.http, `${path}.http`, HOST_PORT, '"host:port"') ?? null;
    if (n.grpc === void 0 && n.http === void 0) c.issue(path, 'needs "grpc" or "http" (host:port)');
    const id = c.string(n.id, `${path}.id`, /^[A-Za-z0-9._:-]{1,128}$/, "a node id") ?? grpc ?? http ?? `node-${i}`;
    if (ids.has(id)) c.issue(`${path}.id`, `duplicate node id '${id}'`);
    ids.add(id);
    nodes.push({ id, grpc, http });
  });
  return nodes;
}
__name(readNodes, "readNodes");
function readRouting(c, value) {
  const obj = c.object(value, "$.routing") ?? {};
  c.unknownKeys(obj, ["policy", "models"], "$.routing");
  const policy = c.string(obj.policy, "$.routing.policy");
  if (policy !== void 0 && !PICKER_NAMES.includes(policy)) {
    c.issue("$.routing.policy", `must be one of ${PICKER_NAMES.join(", ")}, got ${JSON.stringify(policy)}`);
  }
  const models = {};
  for (const [model, routing] of Object.entries(c.object(obj.models, "$.routing.models") ?? {})) {
    const path = `$.routing.models.${model}`;
    const r = c.object(routing, path);
    if (r === void 0) continue;
    c.unknownKeys(r, ["splits", "stickyHeader"], path);
    c.array(r.splits, `${path}.splits`);
    try {
      normalizeRoutingConfig({ models: { [model]: r } });
      models[model] = r;
    } catch (error3) {
      c.issue(path, error3.message.replace(/^invalid routing config: /, ""));
    }
  }
  return normalizeRoutingConfig({ ...policy !== void 0 && PICKER_NAMES.includes(policy) ? { policy } : {}, models });
}
__name(readRouting, "readRouting");
function readCache(c, value) {
  const obj = c.object(value, "$.cache") ?? {};
  c.unknownKeys(obj, ["enabled", "maxEntryBytes", "models"], "$.cache");
  const enabled = c.boolean(obj.enabled, "$.cache.enabled") ?? true;
  const maxEntryBytes = c.number(obj.maxEntryBytes, "$.cache.maxEntryBytes", { min: 1, integer: true }) ?? DEFAULT_MAX_CACHE_ENTRY_BYTES;
  const models = {};
  const m = c.object(obj.models, "$.cache.models") ?? {};
  for (const [model, settings] of Object.entries(m)) {
    const path = `$.cache.models.${model}`;
    const s = c.object(settings, path);
    if (s === void 0) continue;
    c.unknownKeys(s, ["enabled", "shared"], path);
    models[model] = {
      enabled: c.boolean(s.enabled, `${path}.enabled`) ?? true,
      shared: c.boolean(s.shared, `${path}.shared`) ?? false
    };
  }
  return { enabled, maxEntryBytes, models };
}
__name(readCache, "readCache");
function deepFreeze(value) {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
__name(deepFreeze, "deepFreeze");

// gateway/src/config/cli-options.ts
import { parseArgs } from "node:util";

// gateway/src/core/app/admin-routes.ts
var MAX_ADMIN_BODY = 64 * 1024;
async function readJsonObject(request) {
  const body = await readBodyLimited(request, MAX_ADMIN_BODY);
  if (body.length === 0) return {};
  let value;
  try {
    value = JSON.parse(new TextDecoder().decode(body));
  } catch (error3) {
    throw TesseraError.invalidArg(`the request body is not valid JSON: ${error3.message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw TesseraError.invalidArg("the request body must be a JSON object");
  }
  return value;
}
__name(readJsonObject, "readJsonObject");
function optionalId(value, what) {
  if (value === void 0) return void 0;
  if (typeof value !== "string" || !IDENTIFIER_PATTERN.test(value)) {
    throw TesseraError.invalidArg(`${what} must be 1-64 letters, digits, '.', '_' or '-'`);
  }
  return value;
}
__name(optionalId, "optionalId");
function publicKey(record) {
  return { id: record.id, createdAt: record.createdAt, revoked: record.revoked };
}
__name(publicKey, "publicKey");
function publicTenant(tenant) {
  const { webhookSecret: _secret, ...rest } = tenant;
  return rest;
}
__name(publicTenant, "publicTenant");
function registerAdminRoutes(app, ctx) {
  const { tenants, tiers, logger: logger2 } = ctx;
  async function tenantWithKeys(tenant) {
    return { ...publicTenant(tenant), keys: (await tenants.listKeys(tenant.id)).map(publicKey) };
  }
  __name(tenantWithKeys, "tenantWithKeys");
  async function requireTenant(id) {
    const tenant = await tenants.getTenant(id);
    if (tenant === void 0) throw TesseraError.notFound(`unknown tenant '${id}'`);
    return tenant;
  }
  __name(requireTenant, "requireTenant");
  app.post("/admin/tenants", async (c) => {
    const body = await readJsonObject(c.req.raw);
    const id = optionalId(body.id, "'id'") ?? generateId("t_");
    const tier = body.tier;
    if (typeof tier !== "string" || !Object.hasOwn(tiers, tier)) {
      throw TesseraError.invalidArg(`'tier' must be one of ${Object.keys(tiers).join(", ")}, got ${JSON.stringify(tier)}`);
    }
    if (body.name !== void 0 && typeof body.name !== "string") throw TesseraError.invalidArg("'name' must be a string");
    const allowed = body.allowedModels;
    if (allowed !== void 0 && (!Array.isArray(allowed) || allowed.some((m) => typeof m !== "string" || m === ""))) {
      throw TesseraError.invalidArg("'allowedModels' must be an array of model names");
    }
    if (body.disabled !== void 0 && typeof body.disabled !== "boolean") throw TesseraError.invalidArg("'disabled' must be a boolean");
    if (await tenants.getTenant(id) !== void 0) throw TesseraError.alreadyExists(`tenant '${id}' already exists`);
    const tenant = {
      id,
      name: body.name ?? id,
      tier,
      ...allowed === void 0 ? {} : { allowedModels: allowed },
      ...body.disabled === true ? { disabled: true } : {}
    };
    await tenants.putTenant(tenant);
    logger2.info("tenant created", { tenant: id, tier });
    return jsonResponse(publicTenant(tenant), 201);
  });
  app.get("/admin/tenants", async () => {
    const list = await tenants.listTenants();
    return jsonResponse({ tenants: await Promise.all(list.map(tenantWithKeys)) });
  });
  app.get("/admin/tenants/:id", async (c) => jsonResponse(await tenantWithKeys(await requireTenant(c.req.param("id") ?? ""))));
  app.delete("/admin/tenants/:id", async (c) => {
    const tenant = await requireTenant(c.req.param("id") ?? "");
    for (const key of await tenants.listKeys(tenant.id)) {
      if (!key.revoked) await tenants.revokeKey(key.id);
    }
    await tenants.deleteTenant(tenant.id);
    logger2.info("tenant deleted", { tenant: tenant.id });
    return jsonResponse({ deleted: tenant.id });
  });
  app.post("/admin/tenants/:id/keys", async (c) => {
    const tenant = await requireTenant(c.req.param("id") ?? "");
    const keyId = generateId("k_");
    const key = generateApiKey();
    const record = { id: keyId, tenantId: tenant.id, hash: await sha256Hex(key), createdAt: ctx.now(), revoked: false };
    await tenants.putKey(record);
    logger2.info("api key created", { tenant: tenant.id, keyId });
    return jsonResponse({ id: keyId, tenantId: tenant.id, key, createdAt: record.createdAt }, 201);
  });
  app.delete("/admin/keys/:id", async (c) => {
    const keyId = c.req.param("id") ?? "";
    if (!await tenants.revokeKey(keyId)) throw TesseraError.notFound(`unknown or already revoked key '${keyId}'`);
    logger2.info("api key revoked", { keyId });
    return jsonResponse({ revoked: keyId });
  });
}
__name(registerAdminRoutes, "registerAdminRoutes");

// gateway/src/core/cache/cache-types.ts
var noopCacheObserver = {
  hit: /* @__PURE__ */ __name(() => {
  }, "hit"),
  miss: /* @__PURE__ */ __name(() => {
  }, "miss"),
  bypass: /* @__PURE__ */ __name(() => {
  }, "bypass"),
  notStored: /* @__PURE__ */ __name(() => {
  }, "notStored")
};

// gateway/src/core/cache/cache-control.ts
function parseCacheControl(cacheControl, pragma) {
  if (cacheControl === null || cacheControl === void 0) {
    return pragma !== null && pragma !== void 0 && directives(pragma).has("no-cache") ? "no-cache" : "default";
  }
  const found = directives(cacheControl);
  if (found.has("no-store")) return "no-store";
  if (found.has("no-cache")) return "no-cache";
  const maxAge = found.get("max-age");
  if (maxAge !== void 0 && /^"?0+"?$/.test(maxAge)) return "no-cache";
  return "default";
}
__name(parseCacheControl, "parseCacheControl");
function directives(header) {
  const found = /* @__PURE__ */ new Map();
  for (const part of header.split(",")) {
    const text = part.trim();
    if (text === "") continue;
    const eq = text.indexOf("=");
    const name = (eq < 0 ? text : text.slice(0, eq)).trim().toLowerCase();
    if (!found.has(name)) found.set(name, eq < 0 ? "" : text.slice(eq + 1).trim());
  }
  return found;
}
__name(directives, "directives");

// gateway/src/core/cache/single-flight.ts
var SingleFlight = class {
  static {
    __name(this, "SingleFlight");
  }
  flights = /* @__PURE__ */ new Map();
  /** Flights running now (for tests and diagnostics). */
  get size() {
    return this.flights.size;
  }
  /** Joins the flight for `key`, or starts one with `work`. */
  join(key, work, signal) {
    if (signal?.aborted) return { leader: false, result: Promise.reject(cancelledBy(signal)) };
    const existing = this.flights.get(key);
    const flight = existing ?? this.start(key, work);
    return { leader: existing === void 0, result: this.wait(key, flight, signal) };
  }
  start(key, work) {
    const controller = new AbortController();
    const promise = new Promise((resolve) => resolve(work(controller.signal)));
    const flight = { controller, promise, waiters: 0, settled: false };
    const settle = /* @__PURE__ */ __name(() => {
      flight.settled = true;
      if (this.flights.get(key) === flight) this.flights.delete(key);
    }, "settle");
    promise.then(settle, settle);
    this.flights.set(key, flight);
    return flight;
  }
  wait(key, flight, signal) {
    flight.waiters += 1;
    if (signal === void 0) return flight.promise;
    return new Promise((resolve, reject) => {
      const onAbort = /* @__PURE__ */ __name(() => {
        this.leave(key, flight);
        reject(cancelledBy(signal));
      }, "onAbort");
      signal.addEventListener("abort", onAbort, { once: true });
      flight.promise.then(
        (value) => {
          signal.removeEventListener("abort", onAbort);
          resolve(value);
        },
        (error3) => {
          signal.removeEventListener("abort", onAbort);
          reject(error3);
        }
      );
    });
  }
  leave(key, flight) {
    flight.waiters -= 1;
    if (flight.waiters > 0 || flight.settled) return;
    if (this.flights.get(key) === flight) this.flights.delete(key);
    flight.controller.abort(TesseraError.cancelled("every request waiting for this result was cancelled"));
  }
};
function cancelledBy(signal) {
  const reason = signal.reason;
  return reason instanceof TesseraError ? reason : TesseraError.cancelled("the request was cancelled");
}
__name(cancelledBy, "cancelledBy");

// gateway/src/core/cache/store-health.ts
var systemClock2 = { now: /* @__PURE__ */ __name(() => Date.now(), "now") };
var StoreHealth = class {
  constructor(logger2, clock, probeIntervalMs) {
    this.logger = logger2;
    this.clock = clock;
    this.probeIntervalMs = probeIntervalMs;
  }
  static {
    __name(this, "StoreHealth");
  }
  healthy = true;
  outageStartedAt = 0;
  nextProbeAt = 0;
  skipped = 0;
  failures = 0;
  get inOutage() {
    return !this.healthy;
  }
  /** True when the caller may call the store now (always while healthy; one probe per interval otherwise). */
  mayUse() {
    if (this.healthy) return true;
    const now = this.clock.now();
    if (now >= this.nextProbeAt) {
      this.nextProbeAt = now + this.probeIntervalMs;
      return true;
    }
    this.skipped += 1;
    return false;
  }
  succeeded() {
    if (this.healthy) return;
    this.healthy = true;
    this.logger.info("response cache store is reachable again; caching resumed", {
      outageMs: this.clock.now() - this.outageStartedAt,
      failedCalls: this.failures,
      skippedCalls: this.skipped
    });
  }
  failed(operation, error3) {
    const now = this.clock.now();
    this.nextProbeAt = now + this.probeIntervalMs;
    if (!this.healthy) {
      this.failures += 1;
      return;
    }
    this.healthy = false;
    this.outageStartedAt = now;
    this.failures = 1;
    this.skipped = 0;
    this.logger.warn("response cache store failed; requests bypass the cache until it recovers", {
      operation,
      error: error3 instanceof Error ? error3.message : String(error3),
      probeIntervalMs: this.probeIntervalMs
    });
  }
};

// gateway/src/core/cache/cache-layer.ts
var DEFAULT_MAX_ENTRY_BYTES = 1024 * 1024;
var DEFAULT_OUTAGE_PROBE_INTERVAL_MS = 1e3;
var NEVER_ABORTED = new AbortController().signal;
function createCacheLayer(options) {
  const maxEntryBytes = options.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES;
  if (!Number.isSafeInteger(maxEntryBytes) || maxEntryBytes <= 0) {
    throw TesseraError.invalidArg(`cache maxEntryBytes must be a positive integer, got ${maxEntryBytes}`);
  }
  const probeMs = options.outageProbeIntervalMs ?? DEFAULT_OUTAGE_PROBE_INTERVAL_MS;
  if (!Number.isFinite(probeMs) || probeMs < 0) {
    throw TesseraError.invalidArg(`cache outageProbeIntervalMs must be a number >= 0, got ${probeMs}`);
  }
  const { store } = options;
  const observer = options.observer ?? noopCacheObserver;
  const clock = options.clock ?? systemClock2;
  const health = new StoreHealth(options.logger, clock, probeMs);
  const flights = new SingleFlight();
  async function tryStore(key, ttlSeconds, labels, produced) {
    const bytes = produced.body.byteLength;
    if (produced.cacheable === false) {
      observer.notStored(labels, "uncacheable", bytes);
      return "not-stored";
    }
    if (bytes > maxEntryBytes) {
      observer.notStored(labels, "too-large", bytes);
      return "not-stored";
    }
    if (!health.mayUse()) return "unavailable";
    const entry = {
      body: produced.body,
      headers: produced.headers,
      computeUs: computeUsOf(produced),
      storedAt: clock.now()
    };
    try {
      await store.set(key, entry, ttlSeconds);
    } catch (error3) {
      health.failed("set", error3);
      return "unavailable";
    }
    health.succeeded();
    return "stored";
  }
  __name(tryStore, "tryStore");
  function fromProduced(produced, stored) {
    const base = { body: produced.body, headers: produced.headers, computeUs: computeUsOf(produced) };
    return stored === "unavailable" ? { ...base, status: "BYPASS", bypassReason: "store-unavailable" } : { ...base, status: "MISS" };
  }
  __name(fromProduced, "fromProduced");
  async function lookupOrProduce(key, ttlSeconds, labels, produce, signal) {
    let storeUsable = health.mayUse();
    if (storeUsable) {
      try {
        const cached2 = await store.get(key);
        health.succeeded();
        if (cached2 !== void 0) {
          return {
            status: "HIT",
            body: cached2.body,
            headers: cached2.headers,
            computeUs: cached2.computeUs,
            ageMs: Math.max(0, clock.now() - cached2.storedAt)
          };
        }
      } catch (error3) {
        health.failed("get", error3);
        storeUsable = false;
      }
    }
    const produced = await produce(signal);
    if (!storeUsable) return fromProduced(produced, "unavailable");
    return fromProduced(produced, await tryStore(key, ttlSeconds, labels, produced));
  }
  __name(lookupOrProduce, "lookupOrProduce");
  function finish(outcome, labels, status, coalesced2) {
    if (status === "HIT") observer.hit(labels, { bytes: outcome.body.byteLength, computeUs: outcome.computeUs, coalesced: coalesced2 });
    else if (status === "MISS") observer.miss(labels);
    else observer.bypass(labels, outcome.bypassReason ?? "store-unavailable");
    return {
      body: outcome.body,
      headers: outcome.headers,
      status,
      computeUs: outcome.computeUs,
      ...status === "HIT" && outcome.ageMs !== void 0 ? { ageMs: outcome.ageMs } : {}
    };
  }
  __name(finish, "finish");
  async function bypass(reason, labels, produce, signal) {
    const produced = await produce(signal ?? NEVER_ABORTED);
    return finish({ ...fromProduced(produced, "unavailable"), bypassReason: reason }, labels, "BYPASS", false);
  }
  __name(bypass, "bypass");
  async function coalesced(key, ttlSeconds, labels, produce, signal, mayRetry) {
    const ticket = flights.join(key, (flightSignal) => lookupOrProduce(key, ttlSeconds, labels, produce, flightSignal), signal);
    let outcome;
    try {
      outcome = await ticket.result;
    } catch (error3) {
      const inherited = !ticket.leader && error3 instanceof TesseraError && error3.code === "CANCELLED";
      if (mayRetry && inherited && signal?.aborted !== true) {
        return coalesced(key, ttlSeconds, labels, produce, signal, false);
      }
      throw error3;
    }
    if (ticket.leader) return finish(outcome, labels, outcome.status, false);
    return finish(outcome, labels, outcome.status === "MISS" ? "HIT" : outcome.status, true);
  }
  __name(coalesced, "coalesced");
  return {
    get storeInOutage() {
      return health.inOutage;
    },
    async run(key, policy, labels, produce, runOptions) {
      const signal = runOptions?.signal;
      if (policy.directive === "no-store") return bypass("no-store", labels, produce, signal);
      if (!(policy.ttlSeconds > 0) || !Number.isFinite(policy.ttlSeconds)) return bypass("ttl-zero", labels, produce, signal);
      if (policy.directive === "no-cache") {
        const produced = await produce(signal ?? NEVER_ABORTED);
        const stored = await tryStore(key, policy.ttlSeconds, labels, produced);
        const outcome = fromProduced(produced, stored);
        return finish(outcome, labels, outcome.status, false);
      }
      return coalesced(key, policy.ttlSeconds, labels, produce, signal, true);
    }
  };
}
__name(createCacheLayer, "createCacheLayer");
function computeUsOf(produced) {
  return Number.isFinite(produced.computeUs) && produced.computeUs > 0 ? produced.computeUs : 0;
}
__name(computeUsOf, "computeUsOf");

// gateway/src/core/cache/response-id.ts
var utf84 = new TextEncoder();
var ID_FIELD = utf84.encode('{"id":"');
function withResponseId(entry, id) {
  const { body } = entry;
  if (body[0] !== 123) return entry;
  const headerName = Object.keys(entry.headers).find((name) => name.toLowerCase() === INFERENCE_HEADER_CONTENT_LENGTH.toLowerCase());
  const jsonLength = headerName === void 0 ? body.length : Number(entry.headers[headerName]);
  if (!Number.isSafeInteger(jsonLength) || jsonLength < 1 || jsonLength > body.length) return entry;
  let rest = 1;
  if (startsWith(body, ID_FIELD)) {
    const end = endOfJsonString(body, ID_FIELD.length, jsonLength);
    if (end < 0) return entry;
    rest = body[end + 1] === 44 ? end + 2 : end + 1;
  }
  if (id === "" && rest === 1) return entry;
  const idPart = id === "" ? new Uint8Array(0) : utf84.encode(`"id":${JSON.stringify(id)},`);
  const out = new Uint8Array(1 + idPart.length + (body.length - rest));
  out[0] = 123;
  out.set(idPart, 1);
  out.set(body.subarray(rest), 1 + idPart.length);
  const headers = { ...entry.headers };
  if (headerName !== void 0) headers[headerName] = String(jsonLength - rest + 1 + idPart.length);
  return { body: out, headers };
}
__name(withResponseId, "withResponseId");
function startsWith(body, prefix) {
  if (body.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (body[i] !== prefix[i]) return false;
  return true;
}
__name(startsWith, "startsWith");
function endOfJsonString(body, from, limit) {
  for (let i = from; i < limit; i++) {
    const byte = body[i];
    if (byte === 92) i++;
    else if (byte === 34) return i;
  }
  return -1;
}
__name(endOfJsonString, "endOfJsonString");

// gateway/src/core/app/kserve-routes.ts
var MODEL = "/v2/models/:model";
var VERSIONED = "/v2/models/:model/versions/:version{[0-9]+}";
var INFER_HEADER_LENGTH2 = "inference-header-content-length";
function registerKserveRoutes(app, deps) {
  const { config: config2, dispatcher, now } = deps;
  const tracer = deps.tracer ?? noopTracer;
  const methodNotAllowed = /* @__PURE__ */ __name(() => jsonResponse({ error: "Method Not Allowed" }, 405), "methodNotAllowed");
  const route = /* @__PURE__ */ __name((path, method, name, handler) => {
    app.on(method, path, (c) => {
      c.set("route", name);
      return handler(c);
    });
    app.all(path, methodNotAllowed);
  }, "route");
  const modelRoute = /* @__PURE__ */ __name((suffix, method, name, handler) => {
    route(`${MODEL}${suffix}`, method, name, handler);
    route(`${VERSIONED}${suffix}`, method, name, handler);
  }, "modelRoute");
  async function guard(c, model, elements) {
    const auth = c.get("auth");
    if (auth === void 0) throw TesseraError.internal("auth middleware did not run");
    if (model !== void 0) {
      c.set("model", model);
      requireModel(auth, model);
    }
    await inSpan(
      tracer,
      "rate_limit",
      { parent: c.get("telemetry").span.context() },
      () => applyRateLimit(deps.rateLimiter, deps.metrics, auth, elements, (h) => Object.assign(c.get("extraHeaders"), h))
    );
    return auth;
  }
  __name(guard, "guard");
  const metadataContext = /* @__PURE__ */ __name((c) => ({
    deadline: requestDeadline(c.req.raw.headers, now(), config2.requestTimeoutMs),
    signal: c.req.raw.signal
  }), "metadataContext");
  route("/v2/health/live", "GET", "health", () => emptyResponse(deps.draining() ? 503 : 200));
  route("/v2/health/ready", "GET", "health", () => emptyResponse(deps.draining() ? 503 : deps.isReady?.() ?? true ? 200 : 400));
  route("/v2", "GET", "server", async (c) => {
    await guard(c, void 0, 0);
    return jsonResponse({ name: "tessera-gateway", version: deps.version ?? "0.1.0", extensions: ["binary_tensor_data", "model_configuration"] });
  });
  modelRoute("", "GET", "model_metadata", async (c) => {
    const [model, version2] = modelOf(c);
    await guard(c, model, 0);
    return jsonResponse(await dispatcher.modelMetadata(model, version2, metadataContext(c)));
  });
  modelRoute("/ready", "GET", "model_ready", async (c) => {
    const [model, version2] = modelOf(c);
    await guard(c, model, 0);
    return emptyResponse(dispatcher.modelReady(model, version2) ? 200 : 400);
  });
  modelRoute("/config", "GET", "model_config", async (c) => {
    const [model, version2] = modelOf(c);
    await guard(c, model, 0);
    return jsonResponse(await dispatcher.modelConfig(model, version2, metadataContext(c)));
  });
  modelRoute("/infer", "POST", "infer", async (c) => {
    const [model, version2] = modelOf(c);
    const auth = c.get("auth");
    if (auth !== void 0) {
      c.set("model", model);
      requireModel(auth, model);
    }
    const body = await readBodyLimited(c.req.raw, config2.maxBodyBytes);
    const headerLength = c.req.header(INFER_HEADER_LENGTH2) ?? null;
    if (headerLength !== null && headerLength.trim() === "0") {
      throw TesseraError.unsupported(
        `raw binary requests (Inference-Header-Content-Length: 0) are not supported by the gateway for model '${model}'; send the JSON header`
      );
    }
    const decoded = decodeInferRequestBody({ body, headerLength, modelName: model, ...version2 === void 0 ? {} : { modelVersion: version2 } });
    const elements = decoded.request.inputs.reduce((n, t) => n + elementCount(t.shape), 0);
    await guard(c, model, elements);
    const preference = deps.jobs === void 0 ? void 0 : asyncPreference(c.req.header("prefer"));
    const toJob = /* @__PURE__ */ __name((spilled) => acceptJob(
      deps.jobs,
      { auth, model, version: version2, body, headerLength, headers: c.req.raw.headers, spilled },
      { ...deps.jobObserver === void 0 ? {} : { observer: deps.jobObserver }, now, extraHeaders: { "Preference-Applied": "respond-async" } }
    ), "toJob");
    if (preference?.always === true) return toJob(false);
    const signal = c.req.raw.signal;
    const deadline = requestDeadline(c.req.raw.headers, now(), auth.tier.queueTimeoutMs);
    const root = c.get("telemetry").span.context();
    const produceUnder = /* @__PURE__ */ __name((parent) => async (request, upstreamSignal) => {
      const result2 = await dispatcher.dispatch(
        { ...request, id: "" },
        { tenantId: auth.tenant.id, tier: auth.tier, deadline, signal: upstreamSignal, headers: c.req.raw.headers, trace: { tracer, parent } }
      );
      const encoded = encodeInferResponse(result2.response, {
        binaryOutputDefault: decoded.binaryOutputDefault,
        outputBinary: decoded.outputBinary
      });
      return { body: encoded.body, headers: encoded.headers, computeUs: result2.computeUs ?? 0, modelVersion: result2.response.modelVersion };
    }, "produceUnder");
    let cached2;
    try {
      cached2 = deps.cache === void 0 ? { ...await produceUnder(root)(decoded.request, signal), status: "BYPASS" } : await inSpan(tracer, "cache", { parent: root }, async (span) => {
        const run = await deps.cache.run({
          tenantId: auth.tenant.id,
          tier: auth.tier,
          request: decoded.request,
          binaryOutputDefault: decoded.binaryOutputDefault,
          headers: c.req.raw.headers,
          signal,
          produce: produceUnder(span.context())
        });
        span.setAttribute("tessera.cache.status", run.status);
        return run;
      });
    } catch (error3) {
      if (preference?.spillOver === true && isQueueTimeoutRejection(error3)) return toJob(true);
      throw error3;
    }
    const result = withResponseId(cached2, decoded.request.id);
    const extra = { "x-cache": cached2.status };
    if ("ageMs" in cached2 && cached2.ageMs !== void 0) extra.Age = String(Math.floor(cached2.ageMs / 1e3));
    return new Response(result.body, { status: 200, headers: { ...result.headers, ...extra } });
  });
}
__name(registerKserveRoutes, "registerKserveRoutes");
function modelOf(c) {
  const version2 = c.req.param("version");
  return [c.req.param("model") ?? "", version2 === void 0 ? void 0 : BigInt(version2).toString()];
}
__name(modelOf, "modelOf");

// gateway/src/core/app/request-telemetry.ts
var REQUEST_ID_HEADER = "x-request-id";
var SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;
var QUIET_ROUTES = /* @__PURE__ */ new Set(["health", "metrics"]);
function beginRequest(tracer, request) {
  const parent = extractTraceContext((name) => request.headers.get(name));
  const url = new URL(request.url);
  const span = tracer.startSpan("gateway.request", {
    parent,
    kind: "server",
    attributes: { "http.request.method": request.method, "url.path": url.pathname }
  });
  const offered = request.headers.get(REQUEST_ID_HEADER)?.trim();
  const requestId = offered !== void 0 && SANE_REQUEST_ID.test(offered) ? offered : crypto.randomUUID();
  span.setAttribute("tessera.request_id", requestId);
  return { tracer, span, requestId, traceId: span.context()?.traceId };
}
__name(beginRequest, "beginRequest");
function factsOf(c) {
  const auth = c.get("auth");
  return { tenant: auth?.tenant.id ?? "", tier: auth?.tier.name ?? "", model: c.get("model"), route: c.get("route") };
}
__name(factsOf, "factsOf");
function requestLogger(base, telemetry, facts) {
  return base.child({
    ...telemetry.traceId === void 0 ? {} : { traceId: telemetry.traceId },
    requestId: telemetry.requestId,
    ...facts.tenant === "" ? {} : { tenant: facts.tenant },
    ...facts.model === "" ? {} : { model: facts.model }
  });
}
__name(requestLogger, "requestLogger");
function endRequest(base, telemetry, request, facts, status, durationMs) {
  const { span } = telemetry;
  span.setAttribute("http.response.status_code", status);
  span.setAttribute("http.route", facts.route);
  if (facts.tenant !== "") span.setAttribute("tessera.tenant", facts.tenant);
  if (facts.tier !== "") span.setAttribute("tessera.tier", facts.tier);
  if (facts.model !== "") span.setAttribute("tessera.model", facts.model);
  if (status >= 500) span.setError(new Error(`HTTP ${status}`));
  span.end();
  if (QUIET_ROUTES.has(facts.route)) return;
  requestLogger(base, telemetry, facts).info("request", {
    method: request.method,
    path: new URL(request.url).pathname,
    route: facts.route,
    status,
    durationMs: Math.round(durationMs * 1e3) / 1e3
  });
}
__name(endRequest, "endRequest");

// gateway/src/core/app/create-gateway-app.ts
function createGatewayApp(deps) {
  const now = deps.now ?? Date.now;
  const { config: config2, metrics, logger: logger2 } = deps;
  const tracer = deps.tracer ?? noopTracer;
  let draining = false;
  const app = new Hono3();
  app.use("*", async (c, next) => {
    const started = now();
    const telemetry = beginRequest(tracer, c.req.raw);
    c.set("telemetry", telemetry);
    c.set("route", "other");
    c.set("model", "");
    c.set("extraHeaders", { [REQUEST_ID_HEADER]: telemetry.requestId });
    c.set("auth", void 0);
    await next();
    const extra = c.get("extraHeaders");
    if (Object.keys(extra).length > 0) {
      const headers = new Headers(c.res.headers);
      for (const [name, value] of Object.entries(extra)) headers.set(name, value);
      c.res = new Response(c.res.body, { status: c.res.status, statusText: c.res.statusText, headers });
    }
    const auth = c.get("auth");
    metrics.request({
      route: c.get("route"),
      tenant: auth?.tenant.id ?? "",
      tier: auth?.tier.name ?? "",
      model: c.get("model"),
      status: c.res.status,
      seconds: (now() - started) / 1e3
    });
    endRequest(logger2, telemetry, c.req.raw, factsOf(c), c.res.status, now() - started);
  });
  app.use("/v2/*", async (c, next) => {
    if (!c.req.path.startsWith("/v2/health/")) {
      const parent = c.get("telemetry").span.context();
      const auth = await inSpan(tracer, "auth", { parent }, async (span) => {
        const found = await authenticate(deps.tenants, config2.tiers, c.req.raw.headers);
        span.setAttribute("tessera.tenant", found.tenant.id);
        span.setAttribute("tessera.tier", found.tier.name);
        return found;
      });
      c.set("auth", auth);
    }
    await next();
  });
  app.use("/admin/*", async (c, next) => {
    c.set("route", "admin");
    await authenticateAdmin(config2.adminKeyHash, c.req.raw.headers);
    await next();
  });
  registerKserveRoutes(app, { ...deps, now, draining: /* @__PURE__ */ __name(() => draining, "draining") });
  registerAdminRoutes(app, { tenants: deps.tenants, tiers: config2.tiers, logger: logger2, now });
  registerJobRoutes(app, {
    jobs: deps.jobs,
    tenants: deps.tenants,
    tiers: config2.tiers,
    rateLimiter: deps.rateLimiter,
    metrics,
    ...deps.jobObserver === void 0 ? {} : { observer: deps.jobObserver },
    maxBodyBytes: config2.maxBodyBytes,
    logger: logger2,
    now
  });
  app.get("/metrics", async (c) => {
    c.set("route", "metrics");
    if (config2.metrics.requireAdminKey) await authenticateAdmin(config2.adminKeyHash, c.req.raw.headers);
    const { contentType, body } = await metrics.render();
    return new Response(body, { status: 200, headers: { "Content-Type": contentType } });
  });
  app.notFound(() => jsonResponse({ error: "Not Found" }, 404));
  app.onError((error3, c) => {
    if (error3 instanceof AuthRejected) metrics.authRejected(error3.reason);
    const telemetry = c.get("telemetry");
    const log3 = telemetry === void 0 ? logger2 : requestLogger(logger2, telemetry, factsOf(c));
    if (c.req.raw.signal.aborted && !(error3 instanceof TesseraError)) {
      return errorResponse(TesseraError.cancelled("the client closed the connection"), log3);
    }
    return errorResponse(error3, log3);
  });
  return {
    app,
    fetch: /* @__PURE__ */ __name(async (request) => app.fetch(request), "fetch"),
    startDraining: /* @__PURE__ */ __name(() => {
      draining = true;
    }, "startDraining")
  };
}
__name(createGatewayApp, "createGatewayApp");

// shared/src/fleet/keys.ts
var DEFAULT_KEY_PREFIX = "tessera:";
var NODE_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
var NODE_ID_EXPECTED = "1 to 128 characters among letters, digits, '.', '_', '-', ':'";

// shared/src/fleet/json-checks.ts
var MAX_QUOTED = 60;
var JsonChecker = class {
  /** `what` names the document in errors, e.g. "load report". */
  constructor(what) {
    this.what = what;
  }
  static {
    __name(this, "JsonChecker");
  }
  fail(path, expected, got) {
    throw TesseraError.invalidArg(`malformed ${this.what}: ${path} must be ${expected} (got ${describe3(got)})`);
  }
  parseJson(text, maxBytes) {
    if (typeof text !== "string") this.fail("the document", "a JSON string", text);
    if (text.length > maxBytes) this.fail("the document", `at most ${maxBytes} characters`, `${text.length} characters`);
    try {
      return JSON.parse(text);
    } catch (error3) {
      return this.fail("the document", "valid JSON", error3.message);
    }
  }
  object(value, path) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) this.fail(path, "an object", value);
    return value;
  }
  array(value, path, maxLength) {
    if (!Array.isArray(value)) this.fail(path, "an array", value);
    if (value.length > maxLength) this.fail(path, `an array of at most ${maxLength} items`, `${value.length} items`);
    return value;
  }
  /** A safe integer >= min (default 0). */
  integer(value, path, min = 0) {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
      this.fail(path, min === 0 ? "a non-negative integer" : `an integer >= ${min}`, value);
    }
    return value;
  }
  /** A finite number >= 0. */
  nonNegative(value, path) {
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      this.fail(path, "a finite non-negative number", value);
    }
    return value;
  }
  boolean(value, path) {
    if (typeof value !== "boolean") this.fail(path, "a boolean", value);
    return value;
  }
  /** A string matching `pattern`, described in errors by `expected`. */
  string(value, path, pattern, expected) {
    if (typeof value !== "string" || !pattern.test(value)) this.fail(path, expected, value);
    return value;
  }
  literal(value, path, allowed) {
    if (!allowed.includes(value)) this.fail(path, `one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`, value);
    return value;
  }
};
function describe3(value) {
  if (value === void 0) return "nothing";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" && value !== null) return "an object";
  const text = typeof value === "string" ? JSON.stringify(value) : String(value);
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}...` : text;
}
__name(describe3, "describe");

// shared/src/fleet/load-report.ts
var LOAD_REPORT_VERSION = 1;
var MAX_LOAD_REPORT_CHARS = 1 << 20;
var MAX_REPORTED_MODELS = 1e4;
var MAX_REPORTED_VERSIONS = 1e3;
var check = new JsonChecker("load report");
var VERSION_PATTERN2 = /^[0-9]{1,19}$/;
var MODEL_NAME_PATTERN = /^[^/\\]{1,256}$/;
var ADDRESS_PATTERN = /^(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.-]{1,253}):([0-9]{1,5})$/;
var ADDRESS_EXPECTED = "null or an address 'host:port' with a port in 1..65535";
function validateLoadReport(value) {
  const doc = check.object(value, "the report");
  const version2 = check.literal(doc.version, "version", [LOAD_REPORT_VERSION]);
  const nodeId = check.string(doc.nodeId, "nodeId", NODE_ID_PATTERN, NODE_ID_EXPECTED);
  const httpAddress = address(doc.httpAddress, "httpAddress");
  const grpcAddress = address(doc.grpcAddress, "grpcAddress");
  if (httpAddress === null && grpcAddress === null) check.fail("httpAddress", "set when grpcAddress is null", null);
  const models = check.array(doc.models, "models", MAX_REPORTED_MODELS).map((m, i) => modelLoad(m, `models[${i}]`));
  const names = /* @__PURE__ */ new Set();
  models.forEach((model, i) => {
    if (names.has(model.name)) check.fail(`models[${i}].name`, "unique within the report", model.name);
    names.add(model.name);
  });
  return {
    version: version2,
    nodeId,
    httpAddress,
    grpcAddress,
    startedAt: check.integer(doc.startedAt, "startedAt"),
    sentAt: check.integer(doc.sentAt, "sentAt"),
    seq: check.integer(doc.seq, "seq", 1),
    ttlMs: check.integer(doc.ttlMs, "ttlMs", 1),
    models,
    draining: check.boolean(doc.draining, "draining")
  };
}
__name(validateLoadReport, "validateLoadReport");
function modelLoad(value, path) {
  const doc = check.object(value, path);
  const versions2 = check.array(doc.versions, `${path}.versions`, MAX_REPORTED_VERSIONS);
  if (versions2.length === 0) check.fail(`${path}.versions`, "a non-empty array (only READY models are reported)", versions2);
  const ema = doc.execTimeEmaMs;
  return {
    name: check.string(doc.name, `${path}.name`, MODEL_NAME_PATTERN, "a model name of 1 to 256 characters without slashes"),
    versions: versions2.map((v, i) => check.string(v, `${path}.versions[${i}]`, VERSION_PATTERN2, "a decimal version string")),
    queued: check.integer(doc.queued, `${path}.queued`),
    inflight: check.integer(doc.inflight, `${path}.inflight`),
    capacity: check.integer(doc.capacity, `${path}.capacity`, 1),
    execTimeEmaMs: ema === null ? null : check.nonNegative(ema, `${path}.execTimeEmaMs`)
  };
}
__name(modelLoad, "modelLoad");
function address(value, path) {
  if (value === null) return null;
  const text = check.string(value, path, ADDRESS_PATTERN, ADDRESS_EXPECTED);
  const port = Number(ADDRESS_PATTERN.exec(text)?.[2]);
  if (port < 1 || port > 65535) check.fail(path, ADDRESS_EXPECTED, value);
  return text;
}
__name(address, "address");
function isStale(report2, nowMs) {
  const age = nowMs - report2.sentAt;
  return age > report2.ttlMs || -age > report2.ttlMs;
}
__name(isStale, "isStale");
function supersedes(next, prev) {
  return next.startedAt > prev.startedAt || next.startedAt === prev.startedAt && next.seq > prev.seq;
}
__name(supersedes, "supersedes");

// shared/src/fleet/fleet-event.ts
var MAX_FLEET_EVENT_CHARS = (1 << 20) + 4096;
var check2 = new JsonChecker("fleet event");

// shared/src/fleet/request-headers.ts
var DEADLINE_HEADER2 = "x-tessera-deadline-ms";

// shared/src/cache-key/cacheable.ts
var CACHE_KEY_IGNORED_PARAMETERS = Object.freeze(["priority", "timeout", "binary_data_output"]);
var SEQUENCE_PARAMETERS = Object.freeze(["sequence_id", "sequence_start", "sequence_end"]);
function uncacheableReason(request) {
  for (const name of SEQUENCE_PARAMETERS) {
    if (Object.hasOwn(request.parameters, name)) {
      return `sequence requests are not cacheable (parameter '${name}')`;
    }
  }
  return void 0;
}
__name(uncacheableReason, "uncacheableReason");
function isCacheable(request) {
  return uncacheableReason(request) === void 0;
}
__name(isCacheable, "isCacheable");

// shared/src/cache-key/framed-hash.ts
import { createHash } from "node:crypto";
var utf85 = new TextEncoder();
var TAG_STRING = 115;
var TAG_BYTES = 98;
var TAG_NUMBER = 110;
var TAG_BOOLEAN = 116;
var TAG_BIGINT = 105;
var TAG_COUNT = 99;
var FramedHash = class {
  static {
    __name(this, "FramedHash");
  }
  hash = createHash("sha256");
  scratch = new DataView(new ArrayBuffer(9));
  head(tag, value) {
    this.scratch.setUint8(0, tag);
    this.scratch.setFloat64(1, value, false);
    this.hash.update(new Uint8Array(this.scratch.buffer, 0, 9));
  }
  string(value) {
    const bytes = utf85.encode(value);
    this.head(TAG_STRING, bytes.length);
    this.hash.update(bytes);
    return this;
  }
  bytes(value) {
    this.head(TAG_BYTES, value.byteLength);
    this.hash.update(value);
    return this;
  }
  /** Any float64, exactly (so -0, 0.1 and 1e300 stay distinct). */
  number(value) {
    this.head(TAG_NUMBER, value);
    return this;
  }
  boolean(value) {
    this.head(TAG_BOOLEAN, value ? 1 : 0);
    return this;
  }
  bigint(value) {
    const text = utf85.encode(value.toString());
    this.head(TAG_BIGINT, text.length);
    this.hash.update(text);
    return this;
  }
  /** The number of items of a list that follows, so lists of different lengths never line up. */
  count(value) {
    this.head(TAG_COUNT, value);
    return this;
  }
  hex() {
    return this.hash.digest("hex");
  }
};

// shared/src/cache-key/cache-key.ts
var CACHE_KEY_SCHEMA = "tessera-cache-key/v1";
var FORBIDDEN_PREFIX_CHARS = /[{}*?[\]\\\s]/;
var IGNORED = new Set(CACHE_KEY_IGNORED_PARAMETERS);
function cacheNamespace(tenantId, sharedAcrossTenants) {
  return sharedAcrossTenants ? "shared" : { tenant: tenantId };
}
__name(cacheNamespace, "cacheNamespace");
function computeCacheKey(input) {
  const prefix = input.prefix ?? DEFAULT_KEY_PREFIX;
  if (FORBIDDEN_PREFIX_CHARS.test(prefix)) {
    throw TesseraError.invalidArg(
      `invalid cache key prefix ${JSON.stringify(prefix)}: braces, glob characters and whitespace are not allowed`
    );
  }
  const { namespace, model, version: version2, request } = input;
  if (model === "") throw TesseraError.invalidArg("cache key: the model name is empty");
  if (version2 === "") throw TesseraError.invalidArg(`cache key: the resolved version of model '${model}' is empty`);
  if (namespace !== "shared" && namespace.tenant === "") throw TesseraError.invalidArg("cache key: the tenant id is empty");
  const reason = uncacheableReason(request);
  if (reason !== void 0) throw TesseraError.invalidArg(`cache key: ${reason}`);
  const h = new FramedHash().string(CACHE_KEY_SCHEMA);
  if (namespace === "shared") h.string("shared");
  else h.string("tenant").string(namespace.tenant);
  h.string(model).string(version2);
  const inputs = [...request.inputs].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  h.count(inputs.length);
  for (const tensor of inputs) {
    h.string(tensor.name).string(tensor.datatype).count(tensor.shape.length);
    for (const dim of tensor.shape) h.number(dim);
    h.bytes(tensor.data);
  }
  const outputs = input.outputs ?? request.outputs;
  if (outputs === void 0 || outputs.length === 0) {
    h.string("all-outputs").boolean(input.binaryOutputDefault);
  } else {
    h.string("listed-outputs").count(outputs.length);
    for (const output of outputs) {
      h.string(output.name).boolean(output.binaryData ?? input.binaryOutputDefault).number(output.classification ?? 0);
    }
  }
  const names = Object.keys(request.parameters).filter((name) => !IGNORED.has(name)).sort((a, b) => a < b ? -1 : a > b ? 1 : 0);
  h.count(names.length);
  for (const name of names) {
    h.string(name);
    hashParameter(h, request.parameters[name]);
  }
  const scope = namespace === "shared" ? "shared" : `tenant:${escapeSegment(namespace.tenant)}`;
  return `${prefix}cache:${scope}:${escapeSegment(model)}:${escapeSegment(version2)}:{${h.hex()}}`;
}
__name(computeCacheKey, "computeCacheKey");
function hashParameter(h, value) {
  switch (typeof value) {
    case "string":
      h.string(value);
      return;
    case "boolean":
      h.boolean(value);
      return;
    case "bigint":
      h.bigint(value);
      return;
    default:
      h.number(value);
  }
}
__name(hashParameter, "hashParameter");
function escapeSegment(text) {
  return encodeURIComponent(text).replace(/\*/g, "%2A");
}
__name(escapeSegment, "escapeSegment");

// gateway/src/core/app/infer-cache.ts
function compareVersions(a, b) {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
__name(compareVersions, "compareVersions");
function createInferCache(options) {
  const { layer, settings, directory, routing } = options;
  const random = options.random ?? Math.random;
  const answeredVersion = /* @__PURE__ */ new Map();
  function latestReady(model) {
    let best;
    for (const node of directory.candidates(model)) {
      for (const v of node.models.get(model)?.versions ?? []) {
        if (/^[0-9]+$/.test(v) && (best === void 0 || compareVersions(v, best) > 0)) best = v;
      }
    }
    return best;
  }
  __name(latestReady, "latestReady");
  function resolveVersion(request, headers) {
    const model = request.modelName;
    if (request.modelVersion !== void 0 && request.modelVersion !== "") return request.modelVersion;
    const modelRouting = routing.models?.[model];
    if (modelRouting?.splits !== void 0 && modelRouting.splits.length > 0) {
      const sticky = modelRouting.stickyHeader !== void 0 ? headers.get(modelRouting.stickyHeader) ?? void 0 : void 0;
      const chosen = selectVersion(model, modelRouting, sticky, (v) => directory.candidates(model, v).length > 0, random);
      if (chosen !== void 0) return chosen;
    }
    return latestReady(model) ?? answeredVersion.get(model);
  }
  __name(resolveVersion, "resolveVersion");
  return {
    async run(input) {
      const { request, tenantId, tier } = input;
      const model = request.modelName;
      const version2 = resolveVersion(request, input.headers);
      const pinned = version2 === void 0 ? request : { ...request, modelVersion: version2 };
      const produce = /* @__PURE__ */ __name(async (signal) => {
        const produced = await input.produce(pinned, signal);
        if (produced.modelVersion !== "") answeredVersion.set(model, produced.modelVersion);
        return produced;
      }, "produce");
      const modelSettings = modelCacheSettings(settings, model);
      if (version2 === void 0 || !modelSettings.enabled || !isCacheable(request)) {
        return { ...await produce(input.signal), status: "BYPASS" };
      }
      const key = computeCacheKey({
        namespace: cacheNamespace(tenantId, modelSettings.shared),
        model,
        version: version2,
        request: pinned,
        binaryOutputDefault: input.binaryOutputDefault,
        ...options.keyPrefix === void 0 ? {} : { prefix: options.keyPrefix }
      });
      const policy = { ttlSeconds: ttlOf(tier), directive: parseCacheControl(input.headers.get("cache-control"), input.headers.get("pragma")) };
      return layer.run(key, policy, { tenant: tenantId, model, version: version2 }, produce, { signal: input.signal });
    }
  };
}
__name(createInferCache, "createInferCache");
function ttlOf(tier) {
  return tier.cacheTtlSeconds;
}
__name(ttlOf, "ttlOf");

// gateway/src/adapters/workers/edge-config.ts
var DEFAULT_FLEET_REFRESH_MS = 1e3;
var cached;
function edgeSettings(env2) {
  const source = JSON.stringify([env2.GATEWAY_CONFIG, env2.TESSERA_ADMIN_KEY, env2.TESSERA_FLEET_TOKEN, env2.NODE_URL_SCHEME, env2.FLEET_REFRESH_MS]);
  if (cached?.source !== source) cached = { source, settings: parseEdgeSettings(env2) };
  return cached.settings;
}
__name(edgeSettings, "edgeSettings");
async function parseEdgeSettings(env2) {
  const base = loadGatewayConfig(env2.GATEWAY_CONFIG === void 0 || env2.GATEWAY_CONFIG.trim() === "" ? "{}" : env2.GATEWAY_CONFIG);
  const adminKey = nonEmpty(env2.TESSERA_ADMIN_KEY);
  const config2 = { ...base, adminKeyHash: adminKey === void 0 ? base.adminKeyHash : await sha256Hex(adminKey) };
  const fleetToken = nonEmpty(env2.TESSERA_FLEET_TOKEN);
  const scheme = nonEmpty(env2.NODE_URL_SCHEME) ?? "http";
  if (scheme !== "http" && scheme !== "https") throw TesseraError.invalidArg(`NODE_URL_SCHEME must be "http" or "https" (got ${JSON.stringify(scheme)})`);
  const refreshText = nonEmpty(env2.FLEET_REFRESH_MS);
  const fleetRefreshMs = refreshText === void 0 ? DEFAULT_FLEET_REFRESH_MS : Number(refreshText);
  if (!Number.isSafeInteger(fleetRefreshMs) || fleetRefreshMs < 10) {
    throw TesseraError.invalidArg(`FLEET_REFRESH_MS must be an integer number of ms >= 10 (got ${JSON.stringify(refreshText)})`);
  }
  return { config: config2, fleetTokenHash: fleetToken === void 0 ? null : await sha256Hex(fleetToken), nodeScheme: scheme, fleetRefreshMs };
}
__name(parseEdgeSettings, "parseEdgeSettings");
function nonEmpty(value) {
  return value === void 0 || value.trim() === "" ? void 0 : value;
}
__name(nonEmpty, "nonEmpty");

// gateway/src/adapters/workers/console-logger.ts
var REDACTED = /* @__PURE__ */ new Set(["authorization", "x-api-key", "apikey", "api_key", "key", "adminkey", "proxy-authorization", "cookie"]);
function createConsoleLogger(options = {}) {
  const write = options.write ?? ((line) => console.log(line));
  const verbosity = options.verbosity ?? 0;
  const make = /* @__PURE__ */ __name((base) => {
    const emit2 = /* @__PURE__ */ __name((level, msg, fields) => {
      const line = { level, time: (/* @__PURE__ */ new Date()).toISOString(), ...base, msg };
      for (const [name, value] of Object.entries(fields ?? {})) line[name] = REDACTED.has(name.toLowerCase()) ? "[REDACTED]" : value;
      write(JSON.stringify(line));
    }, "emit");
    return {
      info: /* @__PURE__ */ __name((msg, fields) => emit2("info", msg, fields), "info"),
      warn: /* @__PURE__ */ __name((msg, fields) => emit2("warn", msg, fields), "warn"),
      error: /* @__PURE__ */ __name((msg, fields) => emit2("error", msg, fields), "error"),
      verbose: /* @__PURE__ */ __name((level, msg, fields) => {
        if (level <= verbosity) emit2("verbose", msg, fields);
      }, "verbose"),
      child: /* @__PURE__ */ __name((fields) => make({ ...base, ...fields }), "child")
    };
  }, "make");
  return make(options.fields ?? {});
}
__name(createConsoleLogger, "createConsoleLogger");
var quietLogger = {
  info: /* @__PURE__ */ __name(() => {
  }, "info"),
  warn: /* @__PURE__ */ __name(() => {
  }, "warn"),
  error: /* @__PURE__ */ __name(() => {
  }, "error"),
  verbose: /* @__PURE__ */ __name(() => {
  }, "verbose"),
  child: /* @__PURE__ */ __name(() => quietLogger, "child")
};

// gateway/src/adapters/workers/kv-tenant-store.ts
var TENANT = "tenant:";
var KEY = "key:";
var HASH = "hash:";
var TENANT_KEY = "tkey:";
async function getJson(kv, key) {
  const text = await kv.get(key, "text");
  return text === null ? void 0 : JSON.parse(text);
}
__name(getJson, "getJson");
async function listNames(kv, prefix) {
  const names = [];
  let cursor;
  do {
    const page = await kv.list({ prefix, ...cursor === void 0 ? {} : { cursor } });
    names.push(...page.keys.map((k) => k.name));
    cursor = page.list_complete ? void 0 : page.cursor;
  } while (cursor !== void 0);
  return names;
}
__name(listNames, "listNames");
function createKvTenantStore(kv) {
  const store = {
    async findByKeyHash(hash) {
      const keyId = await kv.get(HASH + hash, "text");
      if (keyId === null) return void 0;
      const key = await getJson(kv, KEY + keyId);
      if (key === void 0 || key.revoked || key.hash !== hash) return void 0;
      const tenant = await getJson(kv, TENANT + key.tenantId);
      return tenant === void 0 ? void 0 : { tenant, key };
    },
    getTenant: /* @__PURE__ */ __name((id) => getJson(kv, TENANT + id), "getTenant"),
    async listTenants() {
      const names = await listNames(kv, TENANT);
      const tenants = await Promise.all(names.map((name) => getJson(kv, name)));
      return tenants.filter((t) => t !== void 0).sort((a, b) => a.id < b.id ? -1 : 1);
    },
    async putTenant(tenant) {
      await kv.put(TENANT + tenant.id, JSON.stringify(tenant));
    },
    async deleteTenant(id) {
      for (const key of await store.listKeys(id)) {
        await kv.delete(HASH + key.hash);
        await kv.delete(KEY + key.id);
        await kv.delete(`${TENANT_KEY}${id}:${key.id}`);
      }
      await kv.delete(TENANT + id);
    },
    async putKey(record) {
      const previous = await getJson(kv, KEY + record.id);
      if (previous !== void 0 && previous.hash !== record.hash) await kv.delete(HASH + previous.hash);
      await kv.put(KEY + record.id, JSON.stringify(record));
      await kv.put(`${TENANT_KEY}${record.tenantId}:${record.id}`, "");
      if (record.revoked) await kv.delete(HASH + record.hash);
      else await kv.put(HASH + record.hash, record.id);
    },
    async revokeKey(keyId) {
      const key = await getJson(kv, KEY + keyId);
      if (key === void 0 || key.revoked) return false;
      await kv.put(KEY + keyId, JSON.stringify({ ...key, revoked: true }));
      await kv.delete(HASH + key.hash);
      return true;
    },
    async listKeys(tenantId) {
      const prefix = `${TENANT_KEY}${tenantId}:`;
      const ids = (await listNames(kv, prefix)).map((name) => name.slice(prefix.length));
      const keys = await Promise.all(ids.map((id) => getJson(kv, KEY + id)));
      return keys.filter((k) => k !== void 0).sort((a, b) => a.createdAt - b.createdAt);
    }
  };
  return store;
}
__name(createKvTenantStore, "createKvTenantStore");

// gateway/src/adapters/cache/cache-envelope.ts
var MAGIC = [84, 83, 67, 1];
var HEAD = 8;
var utf86 = new TextEncoder();
var utf8Decoder = new TextDecoder("utf-8", { fatal: true });
function encodeCacheEnvelope(value) {
  const meta = utf86.encode(JSON.stringify({ h: value.headers, c: value.computeUs, t: value.storedAt }));
  const out = new Uint8Array(HEAD + meta.length + value.body.byteLength);
  out.set(MAGIC, 0);
  new DataView(out.buffer).setUint32(4, meta.length, false);
  out.set(meta, HEAD);
  out.set(value.body, HEAD + meta.length);
  return out;
}
__name(encodeCacheEnvelope, "encodeCacheEnvelope");
function decodeCacheEnvelope(bytes) {
  if (bytes.length < HEAD || MAGIC.some((b, i) => bytes[i] !== b)) return void 0;
  const metaLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(4, false);
  if (HEAD + metaLength > bytes.length) return void 0;
  let meta;
  try {
    meta = JSON.parse(utf8Decoder.decode(bytes.subarray(HEAD, HEAD + metaLength)));
  } catch {
    return void 0;
  }
  if (typeof meta !== "object" || meta === null) return void 0;
  const { h, c, t } = meta;
  if (typeof c !== "number" || typeof t !== "number" || !isStringRecord(h)) return void 0;
  return { headers: h, computeUs: c, storedAt: t, body: new Uint8Array(bytes.subarray(HEAD + metaLength)) };
}
__name(decodeCacheEnvelope, "decodeCacheEnvelope");
function isStringRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === "string");
}
__name(isStringRecord, "isStringRecord");

// gateway/src/adapters/workers/kv-response-cache.ts
var KV_MIN_TTL_SECONDS = 60;
function createKvResponseCache(kv) {
  return {
    async get(key) {
      const bytes = await kv.get(key, "arrayBuffer");
      return bytes === null ? void 0 : decodeCacheEnvelope(new Uint8Array(bytes));
    },
    async set(key, value, ttlSeconds) {
      if (!(ttlSeconds > 0)) return;
      await kv.put(key, encodeCacheEnvelope(value), { expirationTtl: Math.max(KV_MIN_TTL_SECONDS, Math.ceil(ttlSeconds)) });
    }
  };
}
__name(createKvResponseCache, "createKvResponseCache");

// gateway/src/adapters/workers/http-transport.ts
function createHttpTransport(options = {}) {
  const scheme = options.scheme ?? "http";
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const now = options.now ?? Date.now;
  function modelUrl(node, model, version2, suffix) {
    if (node.httpAddress === null) {
      throw markNotAccepted(TesseraError.unavailable(`node '${node.id}' has no HTTP address; the edge reaches nodes over HTTP only`));
    }
    const versioned = version2 === void 0 || version2 === "" ? "" : `/versions/${encodeURIComponent(version2)}`;
    return `${scheme}://${node.httpAddress}/v2/models/${encodeURIComponent(model)}${versioned}${suffix}`;
  }
  __name(modelUrl, "modelUrl");
  async function call(node, url, init, opts) {
    const remaining = Math.floor(opts.deadline - now());
    if (remaining <= 0) throw TesseraError.deadlineExceeded(`the deadline passed before the request was sent to node '${node.id}'`);
    if (opts.signal?.aborted) throw TesseraError.cancelled("the client cancelled the request");
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, remaining);
    const onAbort = /* @__PURE__ */ __name(() => controller.abort(), "onAbort");
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const headers = new Headers(init.headers);
    headers.set(DEADLINE_HEADER2, String(remaining));
    try {
      let response;
      try {
        response = await doFetch(url, { ...init, headers, signal: controller.signal });
      } catch (error3) {
        if (timedOut) throw TesseraError.deadlineExceeded(`node '${node.id}' did not answer before the deadline`);
        if (opts.signal?.aborted) throw TesseraError.cancelled("the client cancelled the request");
        throw markNotAccepted(TesseraError.unavailable(`cannot reach node '${node.id}' at ${node.httpAddress}: ${error3.message}`));
      }
      const body = new Uint8Array(await response.arrayBuffer());
      return { status: response.status, body, headers: response.headers };
    } catch (error3) {
      if (error3 instanceof TesseraError) throw error3;
      if (timedOut) throw TesseraError.deadlineExceeded(`node '${node.id}' did not answer before the deadline`);
      if (opts.signal?.aborted) throw TesseraError.cancelled("the client cancelled the request");
      throw TesseraError.unavailable(`reading the answer of node '${node.id}' failed: ${error3.message}`);
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
    }
  }
  __name(call, "call");
  async function getJson2(node, model, version2, suffix, opts) {
    const { status, body } = await call(node, modelUrl(node, model, version2, suffix), { method: "GET" }, opts);
    if (status < 200 || status >= 300) throw httpErrorFromResponse(status, body);
    try {
      return JSON.parse(new TextDecoder().decode(body));
    } catch {
      throw TesseraError.internal(`node '${node.id}' answered ${suffix || "model metadata"} with invalid JSON`);
    }
  }
  __name(getJson2, "getJson");
  return {
    async infer(node, request, opts) {
      const parameters = {
        ...request.parameters,
        ...opts.priority === void 0 ? {} : { priority: opts.priority },
        ...opts.timeoutUs === void 0 ? {} : { timeout: opts.timeoutUs }
      };
      const encoded = encodeInferRequestBody({ ...request, parameters }, { binaryInputs: true, binaryDataOutput: true });
      const url = modelUrl(node, request.modelName, request.modelVersion, "/infer");
      const { status, body, headers } = await call(node, url, { method: "POST", headers: encoded.headers, body: encoded.body }, opts);
      if (status < 200 || status >= 300) throw httpErrorFromResponse(status, body);
      return { response: decodeInferResponseBody(body, headers.get(INFERENCE_HEADER_CONTENT_LENGTH)) };
    },
    modelConfig: /* @__PURE__ */ __name((node, model, version2, opts) => getJson2(node, model, version2, "/config", opts), "modelConfig"),
    modelMetadata: /* @__PURE__ */ __name((node, model, version2, opts) => getJson2(node, model, version2, "", opts), "modelMetadata"),
    async close() {
    }
  };
}
__name(createHttpTransport, "createHttpTransport");

// gateway/src/adapters/fleet/fleet-state.ts
var FleetListeners = class {
  static {
    __name(this, "FleetListeners");
  }
  listeners = /* @__PURE__ */ new Set();
  add(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(change, onError) {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error3) {
        onError(error3);
      }
    }
  }
  clear() {
    this.listeners.clear();
  }
};

// gateway/src/adapters/workers/snapshot-directory.ts
var EdgeNodeState = class {
  constructor(report2) {
    this.report = report2;
    this.id = report2.nodeId;
    this.httpAddress = report2.httpAddress;
    this.grpcAddress = report2.grpcAddress;
    this.draining = report2.draining;
    this.setReport(report2);
  }
  static {
    __name(this, "EdgeNodeState");
  }
  models = /* @__PURE__ */ new Map();
  localInflight = 0;
  sentSince = 0;
  httpAddress;
  grpcAddress;
  draining;
  id;
  get sentSinceReport() {
    return Math.min(this.sentSince, this.localInflight);
  }
  setReport(report2) {
    this.report = report2;
    this.httpAddress = report2.httpAddress;
    this.grpcAddress = report2.grpcAddress;
    this.draining = report2.draining;
    this.models = new Map(
      report2.models.map((m) => [m.name, { queued: m.queued, inflight: m.inflight, capacity: m.capacity, execTimeEmaMs: m.execTimeEmaMs, versions: m.versions }])
    );
    this.sentSince = 0;
  }
  observe(model, load) {
    const entry = this.models.get(model);
    if (entry === void 0) return;
    this.models.set(model, { ...entry, queued: load.queued, inflight: load.inflight });
    this.sentSince = 0;
  }
  track() {
    this.localInflight++;
    this.sentSince++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.localInflight--;
    };
  }
};
function createSnapshotDirectory(options) {
  const now = options.now ?? Date.now;
  const nodes = /* @__PURE__ */ new Map();
  const listeners2 = new FleetListeners();
  let loadedAt = Number.NEGATIVE_INFINITY;
  let inFlight;
  const emit2 = /* @__PURE__ */ __name((change) => listeners2.emit(change, (error3) => options.onError?.(error3)), "emit");
  const fresh = /* @__PURE__ */ __name((node) => !isStale(node.report, now()), "fresh");
  function apply(reports) {
    const seen = /* @__PURE__ */ new Set();
    for (const report2 of reports) {
      seen.add(report2.nodeId);
      const known = nodes.get(report2.nodeId);
      if (known === void 0) {
        nodes.set(report2.nodeId, new EdgeNodeState(report2));
        emit2({ type: "join", nodeId: report2.nodeId });
      } else if (supersedes(report2, known.report)) {
        known.setReport(report2);
        emit2({ type: "update", nodeId: report2.nodeId });
      }
    }
    for (const nodeId of [...nodes.keys()]) {
      if (!seen.has(nodeId)) {
        nodes.delete(nodeId);
        emit2({ type: "leave", nodeId });
      }
    }
  }
  __name(apply, "apply");
  function refresh() {
    inFlight ??= options.load().then(
      (reports) => {
        apply(reports);
        loadedAt = now();
      },
      (error3) => options.onError?.(error3)
    ).finally(() => {
      inFlight = void 0;
    });
    return inFlight;
  }
  __name(refresh, "refresh");
  return {
    candidates(model, version2) {
      return [...nodes.values()].filter((node) => {
        if (node.draining || !fresh(node)) return false;
        const load = node.models.get(model);
        return load !== void 0 && (version2 === void 0 || load.versions.includes(version2));
      });
    },
    all: /* @__PURE__ */ __name(() => [...nodes.values()], "all"),
    observe: /* @__PURE__ */ __name((nodeId, model, load) => nodes.get(nodeId)?.observe(model, load), "observe"),
    track: /* @__PURE__ */ __name((nodeId) => nodes.get(nodeId)?.track() ?? (() => {
    }), "track"),
    onChange: /* @__PURE__ */ __name((listener) => listeners2.add(listener), "onChange"),
    refresh,
    refreshIfOlder: /* @__PURE__ */ __name((maxAgeMs) => now() - loadedAt > maxAgeMs ? refresh() : Promise.resolve(), "refreshIfOlder"),
    apply,
    async close() {
      listeners2.clear();
    }
  };
}
__name(createSnapshotDirectory, "createSnapshotDirectory");

// gateway/src/adapters/workers/fleet-do.ts
var FLEET_OBJECT_NAME = "fleet";
var FORGET_AFTER_TTLS = 10;
var FleetDO = class {
  static {
    __name(this, "FleetDO");
  }
  reports = /* @__PURE__ */ new Map();
  /** nodeId → startedAt of a process that said it left. */
  departed = /* @__PURE__ */ new Map();
  constructor(_state, _env) {
  }
  async fetch(request) {
    try {
      const path = new URL(request.url).pathname;
      if (request.method === "POST" && path === "/report") {
        const body = await request.json().catch(() => {
          throw TesseraError.invalidArg("malformed load report: the body must be JSON");
        });
        const items = Array.isArray(body) ? body : [body];
        const reports = items.map((item) => validateLoadReport(item));
        for (const report2 of reports) this.accept(report2);
        return new Response(null, { status: 204 });
      }
      if (request.method === "POST" && path === "/leave") {
        const body = await request.json().catch(() => ({}));
        if (typeof body.nodeId !== "string" || typeof body.startedAt !== "number") {
          throw TesseraError.invalidArg('a leave needs {"nodeId": string, "startedAt": number}');
        }
        this.departed.set(body.nodeId, Math.max(this.departed.get(body.nodeId) ?? 0, body.startedAt));
        const known = this.reports.get(body.nodeId);
        if (known !== void 0 && known.startedAt <= body.startedAt) this.reports.delete(body.nodeId);
        return new Response(null, { status: 204 });
      }
      if (request.method === "GET" && path === "/snapshot") {
        const now = Date.now();
        for (const [nodeId, report2] of this.reports) {
          if (now - report2.sentAt > report2.ttlMs * FORGET_AFTER_TTLS) this.reports.delete(nodeId);
        }
        return jsonResponse({ reports: [...this.reports.values()].filter((r) => !isStale(r, now)) });
      }
      return jsonResponse({ error: "Not Found" }, 404);
    } catch (error3) {
      return errorResponse(toTesseraError(error3), quietLogger);
    }
  }
  accept(report2) {
    const gone = this.departed.get(report2.nodeId);
    if (gone !== void 0) {
      if (report2.startedAt <= gone) return;
      this.departed.delete(report2.nodeId);
    }
    const known = this.reports.get(report2.nodeId);
    if (known === void 0 || supersedes(report2, known)) this.reports.set(report2.nodeId, report2);
  }
};
function createFleetClient(namespace) {
  const stub = /* @__PURE__ */ __name(() => namespace.get(namespace.idFromName(FLEET_OBJECT_NAME)), "stub");
  const post = /* @__PURE__ */ __name((path, body) => stub().fetch(`https://fleet${path}`, { method: "POST", body, headers: { "Content-Type": "application/json" } }), "post");
  return {
    report: /* @__PURE__ */ __name((body) => post("/report", body), "report"),
    leave: /* @__PURE__ */ __name((body) => post("/leave", body), "leave"),
    async snapshot() {
      const response = await stub().fetch("https://fleet/snapshot");
      if (!response.ok) throw TesseraError.unavailable(`the fleet object answered ${response.status}`);
      const { reports } = await response.json();
      return reports.map((r) => validateLoadReport(r));
    }
  };
}
__name(createFleetClient, "createFleetClient");

// gateway/src/adapters/memory/token-bucket.ts
function takeTokens(state, now, elements, limits) {
  const { requestsPerSecond: rps, burst, elementsPerSecond: eps, elementsBurst } = limits;
  const elapsed = state === void 0 ? 0 : Math.max(0, now - state.at);
  let requests = state === void 0 ? burst : Math.min(burst, state.requests + elapsed * rps / 1e3);
  let elems = state === void 0 ? elementsBurst : Math.min(elementsBurst, state.elements + elapsed * eps / 1e3);
  const needRequests = rps > 0 ? 1 : 0;
  const needElements = eps > 0 ? elements : 0;
  let waitMs = 0;
  if (requests < needRequests) waitMs = Math.max(waitMs, (needRequests - requests) * 1e3 / rps);
  if (elems < needElements) waitMs = Math.max(waitMs, (needElements - elems) * 1e3 / eps);
  const allowed = waitMs === 0;
  if (allowed) {
    requests -= needRequests;
    elems -= needElements;
  }
  const resetSeconds = rps > 0 ? (burst - requests) / rps : 0;
  return {
    state: { requests, elements: elems, at: now },
    decision: { allowed, retryAfterMs: Math.ceil(waitMs), remaining: Math.floor(requests), limit: burst, resetSeconds: Math.ceil(resetSeconds) }
  };
}
__name(takeTokens, "takeTokens");

// gateway/src/adapters/workers/rate-limiter-do.ts
var RateLimiterDO = class {
  static {
    __name(this, "RateLimiterDO");
  }
  bucket;
  constructor(_state, _env) {
  }
  async fetch(request) {
    try {
      if (request.method !== "POST" || new URL(request.url).pathname !== "/take") return jsonResponse({ error: "Not Found" }, 404);
      const body = await request.json();
      if (typeof body.elements !== "number" || typeof body.limits !== "object" || body.limits === null) {
        throw TesseraError.invalidArg('a take needs {"elements": number, "limits": RateLimits}');
      }
      const { state, decision } = takeTokens(this.bucket, Date.now(), body.elements, body.limits);
      this.bucket = state;
      return jsonResponse(decision);
    } catch (error3) {
      return errorResponse(toTesseraError(error3), quietLogger);
    }
  }
};
function createDurableRateLimiter(options) {
  const logger2 = options.logger ?? quietLogger;
  let lastWarning = 0;
  return {
    async take(tenantId, elements, limits) {
      try {
        const stub = options.namespace.get(options.namespace.idFromName(`tenant:${tenantId}`));
        const response = await stub.fetch("https://rate-limiter/take", {
          method: "POST",
          body: JSON.stringify({ elements, limits }),
          headers: { "Content-Type": "application/json" }
        });
        if (!response.ok) throw TesseraError.unavailable(`the rate limiter object answered ${response.status}: ${await response.text()}`);
        return await response.json();
      } catch (error3) {
        if (Date.now() - lastWarning > 6e4) {
          lastWarning = Date.now();
          logger2.warn("rate limiter unreachable: letting requests through", { error: toTesseraError(error3).message });
        }
        return { allowed: true, retryAfterMs: 0, remaining: limits.burst, limit: limits.burst, resetSeconds: 0 };
      }
    }
  };
}
__name(createDurableRateLimiter, "createDurableRateLimiter");

// gateway/src/adapters/workers/admission-wire.ts
var H = {
  tenant: "x-edge-tenant",
  tier: "x-edge-tier",
  deadline: "x-edge-deadline",
  model: "x-edge-model",
  version: "x-edge-version",
  sticky: "x-edge-sticky",
  computeUs: "x-edge-compute-us"
};
function encodeDispatch(dispatch) {
  const encoded = encodeInferRequestBody({ ...dispatch.request, id: "" }, { binaryInputs: true });
  return {
    body: encoded.body,
    headers: {
      ...encoded.headers,
      [H.tenant]: encodeURIComponent(dispatch.tenantId),
      [H.tier]: encodeURIComponent(JSON.stringify(dispatch.tier)),
      [H.deadline]: String(dispatch.deadline),
      [H.model]: encodeURIComponent(dispatch.request.modelName),
      ...dispatch.request.modelVersion ? { [H.version]: dispatch.request.modelVersion } : {},
      ...dispatch.sticky === void 0 ? {} : { [H.sticky]: encodeURIComponent(dispatch.sticky) }
    }
  };
}
__name(encodeDispatch, "encodeDispatch");
async function decodeDispatch(request) {
  const headers = request.headers;
  const need = /* @__PURE__ */ __name((name) => {
    const value = headers.get(name);
    if (value === null) throw TesseraError.invalidArg(`admission dispatch without ${name}`);
    return decodeURIComponent(value);
  }, "need");
  const modelName = need(H.model);
  const version2 = headers.get(H.version) ?? void 0;
  const decoded = decodeInferRequestBody({
    body: new Uint8Array(await request.arrayBuffer()),
    headerLength: headers.get(INFERENCE_HEADER_CONTENT_LENGTH),
    modelName,
    ...version2 === void 0 ? {} : { modelVersion: version2 }
  });
  const sticky = headers.get(H.sticky);
  return {
    request: decoded.request,
    tenantId: need(H.tenant),
    tier: JSON.parse(need(H.tier)),
    deadline: Number(need(H.deadline)),
    ...sticky === null ? {} : { sticky: decodeURIComponent(sticky) }
  };
}
__name(decodeDispatch, "decodeDispatch");
function encodeResult(result) {
  const encoded = encodeInferResponse(result.response, { binaryOutputDefault: true });
  return new Response(encoded.body, {
    status: 200,
    headers: { ...encoded.headers, ...result.computeUs === void 0 ? {} : { [H.computeUs]: String(result.computeUs) } }
  });
}
__name(encodeResult, "encodeResult");
async function decodeResult(response) {
  const body = new Uint8Array(await response.arrayBuffer());
  if (response.status !== 200) throw decodeWireError(response.status, body);
  const computeUs = response.headers.get(H.computeUs);
  return {
    response: decodeInferResponseBody(body, response.headers.get(INFERENCE_HEADER_CONTENT_LENGTH)),
    ...computeUs === null ? {} : { computeUs: Number(computeUs) }
  };
}
__name(decodeResult, "decodeResult");
function encodeWireError(error3) {
  const e = toTesseraError(error3);
  const body = JSON.stringify({ code: e.code, message: e.message, ...e.retryAfterMs === void 0 ? {} : { retryAfterMs: e.retryAfterMs } });
  return new Response(body, { status: httpStatusOf(e.code), headers: { "Content-Type": "application/json" } });
}
__name(encodeWireError, "encodeWireError");
function decodeWireError(status, body) {
  try {
    const doc = JSON.parse(new TextDecoder().decode(body));
    if (typeof doc.code === "string" && ERROR_CODES.includes(doc.code) && typeof doc.message === "string") {
      return new TesseraError(doc.code, doc.message, typeof doc.retryAfterMs === "number" ? { retryAfterMs: doc.retryAfterMs } : void 0);
    }
  } catch {
  }
  return new TesseraError("UNAVAILABLE", `the admission object answered HTTP ${status}`, { retryAfterMs: 1e3 });
}
__name(decodeWireError, "decodeWireError");

// gateway/src/adapters/workers/admission-do.ts
function admissionObjectName(model) {
  return `model:${model}`;
}
__name(admissionObjectName, "admissionObjectName");
var AdmissionDO = class {
  constructor(_state, env2) {
    this.env = env2;
    this.logger = createConsoleLogger({ fields: { component: "edge-admission" } });
  }
  static {
    __name(this, "AdmissionDO");
  }
  running;
  active = 0;
  refreshTimer;
  logger;
  start() {
    this.running ??= (async () => {
      const settings = await edgeSettings(this.env);
      const fleet = createFleetClient(this.env.FLEET);
      const directory = createSnapshotDirectory({
        load: /* @__PURE__ */ __name(() => fleet.snapshot(), "load"),
        onError: /* @__PURE__ */ __name((error3) => this.logger.warn("cannot read the fleet", { error: error3.message }), "onError")
      });
      const dispatcher = createDispatcher({
        directory,
        transport: createHttpTransport({ scheme: settings.nodeScheme }),
        fleetEvents: directory,
        routing: settings.config.routing
      });
      return { settings, directory, dispatcher };
    })();
    return this.running;
  }
  async fetch(request) {
    const url = new URL(request.url);
    try {
      const { settings, directory, dispatcher } = await this.start();
      if (request.method === "GET" && url.pathname === "/depth") {
        return jsonResponse({ depth: dispatcher.queueDepth(url.searchParams.get("model") ?? "") });
      }
      if (request.method !== "POST" || url.pathname !== "/dispatch") return jsonResponse({ error: "Not Found" }, 404);
      const wire = await decodeDispatch(request);
      this.active++;
      this.keepFleetFresh(directory, settings.fleetRefreshMs);
      try {
        await directory.refreshIfOlder(settings.fleetRefreshMs);
        const sticky = settings.config.routing.models?.[wire.request.modelName]?.stickyHeader;
        const result = await dispatcher.dispatch(wire.request, {
          tenantId: wire.tenantId,
          tier: wire.tier,
          deadline: wire.deadline,
          signal: request.signal,
          ...sticky !== void 0 && wire.sticky !== void 0 ? { headers: { get: /* @__PURE__ */ __name((name) => name.toLowerCase() === sticky.toLowerCase() ? wire.sticky ?? null : null, "get") } } : {}
        });
        return encodeResult(result);
      } finally {
        this.active--;
      }
    } catch (error3) {
      return encodeWireError(error3);
    }
  }
  /** While requests wait or run, the fleet view is re-read periodically (room changes with reports). */
  keepFleetFresh(directory, periodMs) {
    if (this.refreshTimer !== void 0) return;
    this.refreshTimer = setInterval(() => {
      if (this.active === 0) {
        clearInterval(this.refreshTimer);
        this.refreshTimer = void 0;
        return;
      }
      void directory.refresh();
    }, periodMs);
  }
};

// gateway/src/adapters/workers/edge-dispatcher.ts
function createEdgeDispatcher(options) {
  const local = createDispatcher({ directory: options.directory, transport: options.transport, routing: options.routing });
  return {
    async dispatch(request, ctx) {
      const stickyHeader = options.routing.models?.[request.modelName]?.stickyHeader;
      const sticky = stickyHeader === void 0 ? void 0 : ctx.headers?.get(stickyHeader) ?? void 0;
      const wire = encodeDispatch({ request, tenantId: ctx.tenantId, tier: ctx.tier, deadline: ctx.deadline, ...sticky === void 0 ? {} : { sticky } });
      const stub = options.admission.get(options.admission.idFromName(admissionObjectName(request.modelName)));
      const response = await stub.fetch("https://admission/dispatch", {
        method: "POST",
        headers: wire.headers,
        body: wire.body,
        ...ctx.signal === void 0 ? {} : { signal: ctx.signal }
      });
      return decodeResult(response);
    },
    modelConfig: /* @__PURE__ */ __name((model, version2, ctx) => local.modelConfig(model, version2, ctx), "modelConfig"),
    modelMetadata: /* @__PURE__ */ __name((model, version2, ctx) => local.modelMetadata(model, version2, ctx), "modelMetadata"),
    modelReady: /* @__PURE__ */ __name((model, version2) => local.modelReady(model, version2), "modelReady")
  };
}
__name(createEdgeDispatcher, "createEdgeDispatcher");
async function admissionDepth(admission, model) {
  const stub = admission.get(admission.idFromName(admissionObjectName(model)));
  const response = await stub.fetch(`https://admission/depth?model=${encodeURIComponent(model)}`);
  return (await response.json()).depth;
}
__name(admissionDepth, "admissionDepth");

// gateway/src/adapters/workers/isolate-metrics.ts
var MAX_SERIES = 1e3;
function createIsolateMetrics() {
  const requests = /* @__PURE__ */ new Map();
  const limited = /* @__PURE__ */ new Map();
  const rejected = /* @__PURE__ */ new Map();
  const bump = /* @__PURE__ */ __name((map, key) => {
    const k = map.has(key) || map.size < MAX_SERIES ? key : "_other";
    map.set(k, (map.get(k) ?? 0) + 1);
  }, "bump");
  const quote = /* @__PURE__ */ __name((value) => JSON.stringify(value), "quote");
  return {
    request(o) {
      bump(requests, `route=${quote(o.route)},tenant=${quote(o.tenant || "_anonymous")},tier=${quote(o.tier)},model=${quote(o.model)},status="${o.status}"`);
    },
    rateLimited(tenant, tier) {
      bump(limited, `tenant=${quote(tenant)},tier=${quote(tier)}`);
    },
    authRejected(reason) {
      bump(rejected, `reason=${quote(reason)}`);
    },
    async render() {
      const lines = ["# Counts of this Workers isolate only (see docs/edge.md)."];
      const family = /* @__PURE__ */ __name((name, help, map) => {
        lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
        for (const [labels, value] of map) lines.push(`${name}{${labels}} ${value}`);
      }, "family");
      family("tessera_gateway_requests_total", "Requests answered by this isolate.", requests);
      family("tessera_gateway_rate_limited_total", "Requests refused by the rate limit.", limited);
      family("tessera_gateway_auth_rejected_total", "Requests refused by authentication.", rejected);
      return { contentType: "text/plain; version=0.0.4; charset=utf-8", body: `${lines.join("\n")}
` };
    }
  };
}
__name(createIsolateMetrics, "createIsolateMetrics");

// gateway/src/adapters/workers/fleet-routes.ts
var MAX_PUSH_BYTES = 8 * MAX_LOAD_REPORT_CHARS;
async function handleFleetRoutes(request, ctx) {
  const path = new URL(request.url).pathname;
  if (path === "/admin/fleet/report" || path === "/admin/fleet/leave") {
    if (request.method !== "POST") return jsonResponse({ error: "Method Not Allowed" }, 405);
    await checkFleetToken(ctx.fleetTokenHash, request.headers);
    const body = new TextDecoder().decode(await readBodyLimited(request, MAX_PUSH_BYTES));
    const answer = path.endsWith("/report") ? await ctx.fleet.report(body) : await ctx.fleet.leave(body);
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  }
  if (path === "/admin/fleet") {
    if (request.method !== "GET") return jsonResponse({ error: "Method Not Allowed" }, 405);
    await authenticateAdmin(ctx.adminKeyHash, request.headers);
    return jsonResponse({ reports: await ctx.fleet.snapshot() });
  }
  const queue = /^\/admin\/edge\/queues\/([^/]+)$/.exec(path);
  if (queue !== null) {
    if (request.method !== "GET") return jsonResponse({ error: "Method Not Allowed" }, 405);
    await authenticateAdmin(ctx.adminKeyHash, request.headers);
    const model = decodeURIComponent(queue[1]);
    return jsonResponse({ model, depth: await admissionDepth(ctx.admission, model) });
  }
  return void 0;
}
__name(handleFleetRoutes, "handleFleetRoutes");
async function checkFleetToken(expectedHash, headers) {
  if (expectedHash === null) throw new AccessError(403, "fleet reports are disabled: set the TESSERA_FLEET_TOKEN secret");
  const auth = headers.get("authorization");
  const token = auth !== null && /^Bearer /i.test(auth) ? auth.slice(7).trim() : headers.get("x-fleet-token");
  if (token === null || token === "" || token.length > 512) throw new AccessError(401, "a fleet token is required (Authorization: Bearer <token>)");
  if (!constantTimeEqual(await sha256Hex(token), expectedHash)) throw new AccessError(401, "invalid fleet token");
}
__name(checkFleetToken, "checkFleetToken");

// gateway/src/entry-workers.ts
var logger = createConsoleLogger({ fields: { component: "edge-gateway" } });
var isolate;
async function build(env2) {
  const settings = await edgeSettings(env2);
  const { config: config2 } = settings;
  const tenants = createKvTenantStore(env2.TENANTS);
  await seedOnce(env2, settings);
  const fleet = createFleetClient(env2.FLEET);
  const directory = createSnapshotDirectory({
    load: /* @__PURE__ */ __name(() => fleet.snapshot(), "load"),
    onError: /* @__PURE__ */ __name((error3) => logger.warn("cannot read the fleet", { error: error3.message }), "onError")
  });
  const transport = createHttpTransport({ scheme: settings.nodeScheme });
  const dispatcher = createEdgeDispatcher({ admission: env2.ADMISSION, directory, transport, routing: config2.routing });
  const cache = env2.CACHE === void 0 || !config2.cache.enabled ? void 0 : createInferCache({
    layer: createCacheLayer({ store: createKvResponseCache(env2.CACHE), maxEntryBytes: config2.cache.maxEntryBytes, logger }),
    settings: config2.cache,
    directory,
    routing: config2.routing,
    keyPrefix: config2.keyPrefix
  });
  const app = createGatewayApp({
    config: config2,
    tenants,
    rateLimiter: createDurableRateLimiter({ namespace: env2.RATE_LIMITER, logger }),
    dispatcher,
    ...cache === void 0 ? {} : { cache },
    metrics: createIsolateMetrics(),
    logger,
    isReady: /* @__PURE__ */ __name(() => directory.all().length > 0, "isReady"),
    version: "0.1.0-edge"
  });
  if (config2.adminKeyHash === null) logger.warn("no admin key (TESSERA_ADMIN_KEY secret or adminKeyHash): the admin API is disabled");
  return { settings, app, directory, fleet };
}
__name(build, "build");
async function seedOnce(env2, settings) {
  const tenants = settings.config.tenants;
  if (tenants.length === 0) return;
  const marker = `seeded:${await sha256Hex(JSON.stringify(tenants))}`;
  if (await env2.TENANTS.get(marker, "text") !== null) return;
  await seedTenants(createKvTenantStore(env2.TENANTS), tenants, Date.now());
  await env2.TENANTS.put(marker, String(Date.now()));
}
__name(seedOnce, "seedOnce");
function isolateFor(env2) {
  if (isolate === void 0) {
    const built = build(env2);
    isolate = built;
    built.catch(() => {
      if (isolate === built) isolate = void 0;
    });
  }
  return isolate;
}
__name(isolateFor, "isolateFor");
var entry_workers_default = {
  async fetch(request, env2, _ctx) {
    try {
      const { settings, app, directory, fleet } = await isolateFor(env2);
      const own2 = await handleFleetRoutes(request, {
        fleet,
        admission: env2.ADMISSION,
        fleetTokenHash: settings.fleetTokenHash,
        adminKeyHash: settings.config.adminKeyHash
      });
      if (own2 !== void 0) return own2;
      if (new URL(request.url).pathname.startsWith("/v2")) await directory.refreshIfOlder(settings.fleetRefreshMs);
      return await app.fetch(request);
    } catch (error3) {
      return errorResponse(error3, logger);
    }
  }
};

// node_modules/wrangler/templates/middleware/middleware-ensure-req-body-drained.ts
var drainBody = /* @__PURE__ */ __name(async (request, env2, _ctx, middlewareCtx) => {
  try {
    return await middlewareCtx.next(request, env2);
  } finally {
    try {
      if (request.body !== null && !request.bodyUsed) {
        const reader = request.body.getReader();
        while (!(await reader.read()).done) {
        }
      }
    } catch (e) {
      console.error("Failed to drain the unused request body.", e);
    }
  }
}, "drainBody");
var middleware_ensure_req_body_drained_default = drainBody;

// node_modules/wrangler/templates/middleware/middleware-miniflare3-json-error.ts
function reduceError(e) {
  return {
    name: e?.name,
    message: e?.message ?? String(e),
    stack: e?.stack,
    cause: e?.cause === void 0 ? void 0 : reduceError(e.cause)
  };
}
__name(reduceError, "reduceError");
var jsonError = /* @__PURE__ */ __name(async (request, env2, _ctx, middlewareCtx) => {
  try {
    return await middlewareCtx.next(request, env2);
  } catch (e) {
    const error3 = reduceError(e);
    return Response.json(error3, {
      status: 500,
      headers: { "MF-Experimental-Error-Stack": "true" }
    });
  }
}, "jsonError");
var middleware_miniflare3_json_error_default = jsonError;

// .wrangler/tmp/bundle-Yy4DWB/middleware-insertion-facade.js
var __INTERNAL_WRANGLER_MIDDLEWARE__ = [
  middleware_ensure_req_body_drained_default,
  middleware_miniflare3_json_error_default
];
var middleware_insertion_facade_default = entry_workers_default;

// node_modules/wrangler/templates/middleware/common.ts
var __facade_middleware__ = [];
function __facade_register__(...args) {
  __facade_middleware__.push(...args.flat());
}
__name(__facade_register__, "__facade_register__");
function __facade_invokeChain__(request, env2, ctx, dispatch, middlewareChain) {
  const [head, ...tail] = middlewareChain;
  const middlewareCtx = {
    dispatch,
    next(newRequest, newEnv) {
      return __facade_invokeChain__(newRequest, newEnv, ctx, dispatch, tail);
    }
  };
  return head(request, env2, ctx, middlewareCtx);
}
__name(__facade_invokeChain__, "__facade_invokeChain__");
function __facade_invoke__(request, env2, ctx, dispatch, finalMiddleware) {
  return __facade_invokeChain__(request, env2, ctx, dispatch, [
    ...__facade_middleware__,
    finalMiddleware
  ]);
}
__name(__facade_invoke__, "__facade_invoke__");

// .wrangler/tmp/bundle-Yy4DWB/middleware-loader.entry.ts
var __Facade_ScheduledController__ = class ___Facade_ScheduledController__ {
  constructor(scheduledTime, cron, noRetry) {
    this.scheduledTime = scheduledTime;
    this.cron = cron;
    this.#noRetry = noRetry;
  }
  static {
    __name(this, "__Facade_ScheduledController__");
  }
  #noRetry;
  noRetry() {
    if (!(this instanceof ___Facade_ScheduledController__)) {
      throw new TypeError("Illegal invocation");
    }
    this.#noRetry();
  }
};
function wrapExportedHandler(worker) {
  if (__INTERNAL_WRANGLER_MIDDLEWARE__ === void 0 || __INTERNAL_WRANGLER_MIDDLEWARE__.length === 0) {
    return worker;
  }
  for (const middleware of __INTERNAL_WRANGLER_MIDDLEWARE__) {
    __facade_register__(middleware);
  }
  const fetchDispatcher = /* @__PURE__ */ __name(function(request, env2, ctx) {
    if (worker.fetch === void 0) {
      throw new Error("Handler does not export a fetch() function.");
    }
    return worker.fetch(request, env2, ctx);
  }, "fetchDispatcher");
  return {
    ...worker,
    fetch(request, env2, ctx) {
      const dispatcher = /* @__PURE__ */ __name(function(type, init) {
        if (type === "scheduled" && worker.scheduled !== void 0) {
          const controller = new __Facade_ScheduledController__(
            Date.now(),
            init.cron ?? "",
            () => {
            }
          );
          return worker.scheduled(controller, env2, ctx);
        }
      }, "dispatcher");
      return __facade_invoke__(request, env2, ctx, dispatcher, fetchDispatcher);
    }
  };
}
__name(wrapExportedHandler, "wrapExportedHandler");
function wrapWorkerEntrypoint(klass) {
  if (__INTERNAL_WRANGLER_MIDDLEWARE__ === void 0 || __INTERNAL_WRANGLER_MIDDLEWARE__.length === 0) {
    return klass;
  }
  for (const middleware of __INTERNAL_WRANGLER_MIDDLEWARE__) {
    __facade_register__(middleware);
  }
  return class extends klass {
    #fetchDispatcher = /* @__PURE__ */ __name((request, env2, ctx) => {
      this.env = env2;
      this.ctx = ctx;
      if (super.fetch === void 0) {
        throw new Error("Entrypoint class does not define a fetch() function.");
      }
      return super.fetch(request);
    }, "#fetchDispatcher");
    #dispatcher = /* @__PURE__ */ __name((type, init) => {
      if (type === "scheduled" && super.scheduled !== void 0) {
        const controller = new __Facade_ScheduledController__(
          Date.now(),
          init.cron ?? "",
          () => {
          }
        );
        return super.scheduled(controller);
      }
    }, "#dispatcher");
    fetch(request) {
      return __facade_invoke__(
        request,
        this.env,
        this.ctx,
        this.#dispatcher,
        this.#fetchDispatcher
      );
    }
  };
}
__name(wrapWorkerEntrypoint, "wrapWorkerEntrypoint");
var WRAPPED_ENTRY;
if (typeof middleware_insertion_facade_default === "object") {
  WRAPPED_ENTRY = wrapExportedHandler(middleware_insertion_facade_default);
} else if (typeof middleware_insertion_facade_default === "function") {
  WRAPPED_ENTRY = wrapWorkerEntrypoint(middleware_insertion_facade_default);
}
var middleware_loader_entry_default = WRAPPED_ENTRY;
export {
  AdmissionDO,
  FleetDO,
  RateLimiterDO,
  __INTERNAL_WRANGLER_MIDDLEWARE__,
  middleware_loader_entry_default as default
};
//# sourceMappingURL=entry-workers.js.map
