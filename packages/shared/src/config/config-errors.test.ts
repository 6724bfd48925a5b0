import { describe, expect, it } from 'vitest';
import { RolloutError } from '../errors/rollout-error.js';
import { loadConfig } from './load-config.js';

const NO_FILE = { dotenvPath: false } as const;

function configError(env: Record<string, string>): RolloutError {
  try {
    loadConfig(env, NO_FILE);
  } catch (error) {
    if (error instanceof RolloutError) return error;
    throw error;
  }
  throw new Error('loadConfig accepted a bad configuration');
}

describe('loadConfig errors', () => {
  it('names every bad variable in one CONFIG_INVALID error', () => {
    const error = configError({
      RF_WORKER_CONCURRENCY: 'four',
      RF_ATTEMPTS: '0',
      RF_FRESH_EVAL: 'maybe',
      VEFAAS_ENDPOINT: 'open.volcengineapi.com',
      REDIS_URL: 'http://localhost:6379',
      LOG_FORMAT: 'xml',
      RF_WORKR_CONCURRENCY: '2',
      VEFAAS_FUNCTON_ID: 'abc',
      RF_TOTALLY_UNRELATED: '1',
    });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.class).toBe('input');
    const variables = (error.details.problems as { variable: string }[]).map((p) => p.variable).sort();
    expect(variables).toEqual([
      'LOG_FORMAT',
      'REDIS_URL',
      'RF_ATTEMPTS',
      'RF_FRESH_EVAL',
      'RF_TOTALLY_UNRELATED',
      'RF_WORKER_CONCURRENCY',
      'RF_WORKR_CONCURRENCY',
      'VEFAAS_ENDPOINT',
      'VEFAAS_FUNCTON_ID',
    ]);
    expect(error.message).toContain('9 problems');
    expect(error.message).toContain('RF_WORKER_CONCURRENCY="four" is not a whole number ≥ 1');
    expect(error.message).toContain(
      'RF_WORKR_CONCURRENCY is not a known variable; did you mean RF_WORKER_CONCURRENCY?',
    );
    expect(error.message).toContain('VEFAAS_FUNCTON_ID is not a known variable; did you mean VEFAAS_FUNCTION_ID?');
    expect(error.message).toMatch(/RF_TOTALLY_UNRELATED is not a known variable; remove it/);
    expect(error.message).toContain('LOG_FORMAT="xml" is not one of auto, json, pretty');
  });

  it('names what is missing from a partial cloud configuration', () => {
    const keyOnly = configError({ VEFAAS_ACCESS_KEY: 'ak-only' });
    const missing = (keyOnly.details.problems as { variable: string }[]).map((p) => p.variable).sort();
    expect(missing).toEqual(['VEFAAS_FUNCTION_ID', 'VEFAAS_FUNCTION_ROUTE', 'VEFAAS_SECRET_KEY']);
    expect(keyOnly.message).toContain(
      'VEFAAS_SECRET_KEY / VOLCE_SECRET_KEY / VOLCENGINE_SECRET_KEY is not set, but VEFAAS_ACCESS_KEY is',
    );

    const routeOnly = configError({ VEFAAS_FUNCTION_ROUTE: 'https://gw.example.com' });
    expect((routeOnly.details.problems as { variable: string }[]).map((p) => p.variable).sort()).toEqual([
      'VEFAAS_ACCESS_KEY',
      'VEFAAS_FUNCTION_ID',
      'VEFAAS_SECRET_KEY',
    ]);
  });

  it('never puts a secret value in the message or the JSON form', () => {
    const secrets = {
      VOLCE_ACCESS_KEY: 'AKLTzz-distinctive-access-7f3a',
      VEFAAS_SECRET_KEY: 'sk-distinctive-secret-91bd',
      VEFAAS_GATEWAY_KEY: 'gw-distinctive-key-55c0',
      RF_DASHBOARD_PASSWORD: 'pw-distinctive-hunter2-e1',
      RF_DASHBOARD_TOKEN: 'tok-distinctive-0a9d',
    };
    const error = configError({
      ...secrets,
      // A misspelt secret is unknown; its value must not be echoed either.
      VEFAAS_SECRET_KY: 'sk-misspelt-distinctive-44aa',
      REDIS_URL: 'http://default:redis-pw-distinctive-3c@cache:6379',
      RF_ATTEMPTS: 'x',
    });
    const rendered = [error.message, JSON.stringify(error), String(error.stack)].join('\n');
    for (const value of [...Object.values(secrets), 'sk-misspelt-distinctive-44aa', 'redis-pw-distinctive-3c']) {
      expect(rendered).not.toContain(value);
    }
    expect(error.message).toMatch(/VEFAAS_FUNCTION_ID is not set, but VEFAAS_ACCESS_KEY and VEFAAS_SECRET_KEY are/);
    expect(error.message).toContain('VEFAAS_SECRET_KY is not a known variable; did you mean VEFAAS_SECRET_KEY?');
    expect(error.message).toContain('REDIS_URL="http://***@cache:6379"');
  });
});
