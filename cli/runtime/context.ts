/**
 * What every subcommand starts from: configuration parsed once, and a logger on stderr (stdout is kept
 * for data: results, tables) that redacts every configured secret.
 */
import { RolloutError, createLogger, isSecretKey, loadConfig, type Config, type Logger } from '@rollout-fleet/shared';
import { EXIT } from '../exit-codes.js';

export interface CliContext {
  config: Config;
  logger: Logger;
}

function redisPasswordOf(config: Config): string | undefined {
  if (config.redis.cluster !== undefined) return config.redis.cluster.password;
  const password = new URL(config.redis.url).password;
  return password === '' ? undefined : decodeURIComponent(password);
}

export function secretsOf(config: Config): string[] {
  const v = config.vefaas;
  return [
    v.mode === 'cloud' ? v.accessKeyId : undefined,
    v.mode === 'cloud' ? v.secretAccessKey : undefined,
    v.gatewayKey,
    config.dashboard.password,
    config.dashboard.token,
    config.api.token,
    redisPasswordOf(config),
  ].filter((s): s is string => typeof s === 'string' && s.length > 0);
}

/**
 * Values of environment variables whose names say they are secrets (`POLICY_API_KEY`, `OPENAI_API_KEY`, `HF_TOKEN`):
 * a worker reads policy endpoint keys from such variables by name, so their values are scrubbed from every line
 * too. Short values are skipped: scrubbing "1" would mangle every log line.
 */
export function environmentSecrets(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(([name, value]) => isSecretKey(name) && typeof value === 'string' && value.length >= 8)
    .map(([, value]) => value as string);
}

export function loadContext(env: NodeJS.ProcessEnv = process.env): CliContext {
  const config = loadConfig(env);
  const logger = createLogger({
    ...config.log,
    destination: process.stderr,
    secrets: [...secretsOf(config), ...environmentSecrets(env)],
  });
  return { config, logger };
}

/** Maps a failure to the documented exit code and prints it as one clear message on stderr. */
export function reportFailure(command: string, thrown: unknown): number {
  if (thrown instanceof RolloutError) {
    console.error(`${command}: ${thrown.message}`);
    if (thrown.code !== 'CONFIG_INVALID') console.error(`  (${thrown.code}: ${thrown.hint})`);
    if (thrown.code === 'CONFIG_INVALID' || thrown.class === 'input') return EXIT.INVALID_INPUT;
    if (thrown.code === 'REDIS_UNAVAILABLE' || thrown.code.endsWith('_NETWORK')) return EXIT.UNAVAILABLE;
    return EXIT.FAILURE;
  }
  console.error(`${command}: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
  return EXIT.FAILURE;
}
