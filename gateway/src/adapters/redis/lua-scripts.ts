/**
 * The one loader of our Lua scripts (BullMQ's habit): each `.lua` file in `lua/` declares its keys in
 * a header (`KEYS[n]` lines) that the loader counts, so a call can never pass the wrong number of
 * keys. Scripts run with EVALSHA and fall back to EVAL once when Redis answers NOSCRIPT (after a
 * restart or SCRIPT FLUSH), which also loads them again.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

export interface LuaScript {
  readonly name: string;
  readonly numberOfKeys: number;
  readonly sha: string;
  readonly source: string;
}

export type LuaScriptName = 'token-bucket' | 'find-key' | 'cache-get';

const loaded = new Map<LuaScriptName, LuaScript>();

/** Reads, parses and memoizes a script from `lua/<name>.lua`. */
export function luaScript(name: LuaScriptName): LuaScript {
  const known = loaded.get(name);
  if (known !== undefined) return known;
  const source = readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
  const script = { name, source, numberOfKeys: countDeclaredKeys(source, name), sha: createHash('sha1').update(source).digest('hex') };
  loaded.set(name, script);
  return script;
}

/** The number of `KEYS[n]` lines in the header comment: they must be 1..n without gaps. */
export function countDeclaredKeys(source: string, name: string): number {
  const header = /^--\[\[([\s\S]*?)\]\]/.exec(source)?.[1];
  if (header === undefined) throw new Error(`Lua script ${name} has no --[[ header ]] declaring its KEYS and ARGV`);
  const indexes = [...header.matchAll(/^\s*KEYS\[(\d+)\]/gm)].map((m) => Number(m[1]));
  indexes.forEach((n, i) => {
    if (n !== i + 1) throw new Error(`Lua script ${name}: KEYS must be declared as KEYS[1]..KEYS[n] in order`);
  });
  return indexes.length;
}

export async function runLua(redis: Redis, name: LuaScriptName, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  const script = checkedScript(name, keys);
  try {
    return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return redis.eval(script.source, keys.length, ...keys, ...args);
  }
}

/** As `runLua`, but bulk strings in the reply come back as Buffers (binary values, e.g. cache entries). */
export async function runLuaBuffer(redis: Redis, name: LuaScriptName, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  const script = checkedScript(name, keys);
  try {
    return await redis.callBuffer('EVALSHA', [script.sha, keys.length, ...keys, ...args]);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return redis.callBuffer('EVAL', [script.source, keys.length, ...keys, ...args]);
  }
}

function checkedScript(name: LuaScriptName, keys: readonly string[]): LuaScript {
  const script = luaScript(name);
  if (keys.length !== script.numberOfKeys) {
    throw new Error(`Lua script ${name} declares ${script.numberOfKeys} keys, got ${keys.length}`);
  }
  return script;
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
