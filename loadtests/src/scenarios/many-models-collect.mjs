// Preloaded into a node by the many-models bench (with --expose-gc) for its diagnosis run: a full
// collection every half second, so RSS after unload/reload cycles shows what is retained rather than
// what V8 has not collected yet.
setInterval(() => globalThis.gc?.(), 500).unref();
