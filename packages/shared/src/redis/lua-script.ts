/**
 * The one loader and caller of our Lua scripts. A script is a file next to the module that runs it, one file per
 * operation, with a KEYS/ARGV header. A line `--- @include "<name>"` (at the start of the line) is replaced by
 * `includes/<name>.lua` from the directory beside the script; an include's own includes resolve in that same
 * directory. Each include is inlined once, where it is first asked for (so what it defines comes before whatever
 * needs it), and a cycle is refused. Options and fences travel as one cjson-encoded argument, never as more
 * positional flags.
 *
 * A script runs by SHA (EVALSHA), falling back to EVAL when the server does not know it yet (a fresh or restarted
 * Redis, SCRIPT FLUSH, or another node of a Cluster). Every caller keeps all of a script's keys under one hash tag,
 * so a script runs unchanged on Redis Cluster (ioredis routes it to the node of its first key).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RedisClient } from './create-redis.js';

export type ScriptArg = string | number | Buffer;

/** A script that cannot be assembled: an include missing, or a cycle of includes. `file`: where it went wrong. */
export class LuaScriptError extends Error {
  override readonly name = 'LuaScriptError';

  constructor(
    message: string,
    readonly file: string,
  ) {
    super(message);
  }
}

// `--- @include "name"`, alone on its line (trailing blanks allowed). A fresh RegExp per file: `g` keeps state.
const includeDirective = (): RegExp => /^---[ \t]*@include[ \t]+"([^"\n]+)"[ \t]*$/gm;

/** The reply Redis gives to EVALSHA of a script it does not hold. */
export function isNoScriptError(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

function readScript(url: URL, includedFrom?: { file: string; name: string }): string {
  try {
    return readFileSync(url, 'utf8');
  } catch (err) {
    const path = fileURLToPath(url);
    if (includedFrom === undefined)
      throw new LuaScriptError(`Lua script ${path} cannot be read: ${(err as Error).message}`, path);
    throw new LuaScriptError(
      `${includedFrom.file}: --- @include "${includedFrom.name}" names ${path}, which cannot be read: ${(err as Error).message}`,
      includedFrom.file,
    );
  }
}

/** The source with every include inlined (first use only); `chain` is the include path that led here. */
function assemble(source: string, file: string, includes: URL, chain: readonly string[], done: Set<string>): string {
  return source.replace(includeDirective(), (_line, name: string) => {
    if (chain.includes(name))
      throw new LuaScriptError(
        `${file}: --- @include "${name}" makes a cycle (${[...chain, name].join(' -> ')})`,
        file,
      );
    if (done.has(name)) return '';
    const url = new URL(`${name}.lua`, includes);
    const text = assemble(readScript(url, { file, name }), fileURLToPath(url), includes, [...chain, name], done);
    done.add(name);
    return text;
  });
}

export class LuaScript {
  readonly sha: string;

  /** `file`: where the script came from (for messages); `source`: the script as sent, includes inlined. */
  constructor(
    readonly source: string,
    readonly file = '<inline>',
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Reads a script that sits next to the module that uses it (`new URL('./x.lua', import.meta.url)`). */
  static load(url: URL): LuaScript {
    const file = fileURLToPath(url);
    const includes = new URL('includes/', url);
    return new LuaScript(assemble(readScript(url), file, includes, [], new Set()), file);
  }

  async run(redis: RedisClient, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!isNoScriptError(err)) throw err;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }

  /** As `run`, with bulk replies as Buffers (a script that returns a binary value, such as a compressed result). */
  async runBuffer(redis: RedisClient, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    try {
      return await redis.callBuffer('EVALSHA', this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!isNoScriptError(err)) throw err;
      return redis.callBuffer('EVAL', this.source, keys.length, ...keys, ...args);
    }
  }
}
