import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { RolloutError } from '../errors/rollout-error.js';
import { didYouMean } from './did-you-mean.js';
import { ConfigSchema, type EnvName } from './schema.js';
import type { Config } from './types.js';
import { CONFIG_VARIABLES, type ConfigVariable } from './variables.js';

export interface LoadConfigOptions {
  /**
   * A dotenv file read underneath `env` (a variable present in `env` wins, even when empty).
   * Default: `.env` in the working directory when it exists; `false` reads no file.
   * An explicitly named file that cannot be read is a configuration error.
   */
  dotenvPath?: string | false;
}

/** One bad variable: `problem` never contains a secret's value. */
export interface ConfigProblem {
  variable: string;
  problem: string;
}

/** A problem plus how to name the variable in the message (spelling used, and the value when it may be shown). */
interface LabelledProblem extends ConfigProblem {
  label?: string;
}

type RawEnv = Readonly<Record<string, string | undefined>>;

/** Prefixes this product owns: an unknown variable under them is a typo, not someone else's setting. */
const OWNED_PREFIXES = ['RF_', 'VEFAAS_'];
const BY_NAME = new Map<string, ConfigVariable>(CONFIG_VARIABLES.map((v) => [v.name, v]));
const KNOWN_NAMES = CONFIG_VARIABLES.map((v) => v.name);

function readDotenv(dotenvPath: string | false | undefined, problems: LabelledProblem[]): RawEnv {
  if (dotenvPath === false) return {};
  const path = resolve(dotenvPath ?? '.env');
  try {
    return parseDotenv(readFileSync(path));
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    if (missing && dotenvPath === undefined) return {};
    problems.push({
      variable: path,
      problem: `cannot be read (${missing ? 'no such file' : String((error as Error).message)}); fix the path or leave dotenvPath out`,
    });
    return {};
  }
}

/** Masks `user:password@` in URL-like values so an invalid REDIS_URL never prints its password. */
function quote(value: string): string {
  const masked = value.replace(/\/\/[^/@\s]*@/, '//***@');
  return JSON.stringify(masked.length > 80 ? `${masked.slice(0, 77)}...` : masked);
}

function unknownVariables(env: RawEnv): ConfigProblem[] {
  return Object.keys(env)
    .filter((name) => OWNED_PREFIXES.some((p) => name.startsWith(p)) && !BY_NAME.has(name))
    .sort()
    .map((name) => {
      const guess = didYouMean(name, KNOWN_NAMES);
      const advice =
        guess === undefined ? 'remove it (see the configuration table in README.md)' : `did you mean ${guess}?`;
      return { variable: name, problem: `is not a known variable; ${advice}` };
    });
}

function describeIssue(
  name: string,
  message: string,
  context: { raw: Partial<Record<EnvName, string>>; spelling: ReadonlyMap<EnvName, string> },
): LabelledProblem {
  const variable = BY_NAME.get(name);
  if (variable === undefined) return { variable: name || '(environment)', problem: message };
  const value = context.raw[variable.name];
  const shown = value === undefined ? '' : variable.secret ? ' (set)' : `=${quote(value)}`;
  const spelledAs = context.spelling.get(variable.name);
  const names = spelledAs ?? [variable.name, ...variable.aliases].join(' / ');
  return { variable: variable.name, label: `${names}${shown}`, problem: message };
}

/**
 * Reads, validates and types the whole configuration. Call once in `main` and pass the result
 * down: nothing else reads process.env. Throws one `RolloutError('CONFIG_INVALID')` listing every
 * bad variable; secret values never appear in it.
 */
export function loadConfig(env: RawEnv = process.env, options: LoadConfigOptions = {}): Config {
  const problems: LabelledProblem[] = [];
  const merged: RawEnv = { ...readDotenv(options.dotenvPath, problems), ...env };
  problems.push(...unknownVariables(merged));

  // Empty means unset (a `KEY=` line in .env); the first set spelling of an aliased variable wins.
  const raw: Partial<Record<EnvName, string>> = {};
  const spelling = new Map<EnvName, string>();
  for (const variable of CONFIG_VARIABLES) {
    for (const name of [variable.name, ...variable.aliases]) {
      const value = merged[name];
      if (value !== undefined && value.trim() !== '') {
        raw[variable.name] = value;
        spelling.set(variable.name, name);
        break;
      }
    }
  }

  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues)
      problems.push(describeIssue(String(issue.path[0] ?? ''), issue.message, { raw, spelling }));
  }

  if (problems.length > 0 || !parsed.success) {
    const lines = problems.map((p) => `  - ${p.label ?? p.variable} ${p.problem}`);
    throw new RolloutError(
      'CONFIG_INVALID',
      `invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${lines.join('\n')}`,
      {
        details: { problems: problems.map(({ variable, problem }) => ({ variable, problem })) },
      },
    );
  }
  return parsed.data;
}
