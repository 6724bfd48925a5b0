import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from './load-config.js';

const NO_FILE = { dotenvPath: false } as const;
const CLOUD = {
  VEFAAS_ACCESS_KEY: 'AKLT-test-access',
  VEFAAS_SECRET_KEY: 'sk-test-secret',
  VEFAAS_FUNCTION_ID: 's1lwabcd',
  VEFAAS_FUNCTION_ROUTE: 'https://example.apigateway.volceapi.com/',
};

describe('loadConfig defaults and modes', () => {
  it('gives every default and local mode for an empty environment', () => {
    const config = loadConfig({}, NO_FILE);
    expect(config.vefaas).toEqual({
      mode: 'local',
      imagesDir: undefined,
      isolation: 'bwrap',
      region: 'cn-beijing',
      endpoint: 'https://open.volcengineapi.com',
      gatewayKey: undefined,
      requestTimeoutMs: 30_000,
      createTimeoutMs: 180_000,
      gatewayTimeoutS: 650,
    });
    expect(config.redis.url).toBe('redis://127.0.0.1:6379');
    expect(config.queue).toEqual({ prefix: '{rf}', name: 'episodes' });
    expect(config.worker).toEqual({
      concurrency: 4,
      heapGrowthPercent: 100,
      stepOutputLimitBytes: 1_048_576,
      episodeOutputLimitBytes: 8_388_608,
      swerexMaxResponseBytes: 16_777_216,
      attempts: 3,
      backoffMs: 5000,
      leaseTtlS: 60,
      reaperIntervalS: 30,
      shutdownGraceS: 30,
      lockDurationMs: 60_000,
      stalledIntervalMs: 30_000,
      cancelPollMs: 1000,
      resultRetentionDays: 14,
      freshEval: true,
      integrity: 'strict',
      outageWindowS: 120,
      outageCleanLosses: 3,
      rewardResolved: 1,
      rewardUnresolved: 0,
    });
    expect(config.supply).toEqual({
      createRate: 8,
      createBurst: 8,
      createRecoverS: 300,
      maxSandboxes: 200,
      maxStarting: 64,
      acquireTimeoutS: 900,
      warmPoolMax: 0,
      warmIdleS: 300,
      warmLookahead: 256,
      warmIntervalMs: 1000,
      stragglers: true,
      stragglerTail: 0.1,
      stragglerFactor: 3,
    });
    expect(config.sandbox).toEqual({ image: undefined, startupTimeoutS: 180, stepTimeoutS: 300 });
    expect(config.dashboard).toEqual({
      user: undefined,
      password: undefined,
      token: undefined,
      readOnly: false,
      metricsPublic: false,
    });
    expect(config.log).toEqual({ level: 'info', format: 'auto' });
  });

  it('switches to cloud mode when route, id and key pair are all set, without the trailing slash', () => {
    const config = loadConfig({ ...CLOUD, VEFAAS_ENDPOINT: 'https://open.byteplusapi.com' }, NO_FILE);
    expect(config.vefaas).toMatchObject({
      mode: 'cloud',
      accessKeyId: 'AKLT-test-access',
      secretAccessKey: 'sk-test-secret',
      functionId: 's1lwabcd',
      functionRoute: 'https://example.apigateway.volceapi.com',
      endpoint: 'https://open.byteplusapi.com',
    });
  });

  it('adds sandbox functions from VEFAAS_FUNCTIONS (other regions), and says which entry and field is wrong', () => {
    const more =
      '[{"id":"shanghai","function_id":"fn-sh","route":"https://sh.example/fn/","region":"cn-shanghai","weight":2,"create_rate":4}]';
    const config = loadConfig({ ...CLOUD, VEFAAS_FUNCTIONS: more }, NO_FILE);
    expect(config.vefaas.mode === 'cloud' && config.vefaas.moreFunctions).toEqual([
      {
        id: 'shanghai',
        functionId: 'fn-sh',
        functionRoute: 'https://sh.example/fn',
        weight: 2,
        region: 'cn-shanghai',
        endpoint: undefined,
        createRate: 4,
      },
    ]);
    expect(() => loadConfig({ ...CLOUD, VEFAAS_FUNCTIONS: '[{' }, NO_FILE)).toThrow(/VEFAAS_FUNCTIONS.*is not JSON/);
    expect(() =>
      loadConfig({ ...CLOUD, VEFAAS_FUNCTIONS: '[{"id":"x","function_id":"f","route":"ftp://x"}]' }, NO_FILE),
    ).toThrow(/\[0\]\.route: must be an http/);
    expect(() => loadConfig({ VEFAAS_FUNCTIONS: more }, NO_FILE)).toThrow(/VEFAAS_FUNCTIONS.*needs the cloud settings/);
  });

  it('accepts the VOLCE_ and VOLCENGINE_ spellings, the first set one winning', () => {
    const volce = loadConfig(
      {
        ...CLOUD,
        VEFAAS_ACCESS_KEY: undefined,
        VEFAAS_SECRET_KEY: '',
        VOLCE_ACCESS_KEY: 'ak-volce',
        VOLCE_SECRET_KEY: 'sk-volce',
        VOLCENGINE_SECRET_KEY: 'sk-volcengine',
      },
      NO_FILE,
    );
    expect(volce.vefaas).toMatchObject({ mode: 'cloud', accessKeyId: 'ak-volce', secretAccessKey: 'sk-volce' });
    const volcengine = loadConfig(
      {
        ...CLOUD,
        VEFAAS_ACCESS_KEY: undefined,
        VEFAAS_SECRET_KEY: undefined,
        VOLCENGINE_ACCESS_KEY: 'ak-ve',
        VOLCENGINE_SECRET_KEY: 'sk-ve',
      },
      NO_FILE,
    );
    expect(volcengine.vefaas).toMatchObject({ accessKeyId: 'ak-ve', secretAccessKey: 'sk-ve' });
    const canonicalFirst = loadConfig({ ...CLOUD, VOLCE_ACCESS_KEY: 'ak-volce' }, NO_FILE);
    expect(canonicalFirst.vefaas).toMatchObject({ accessKeyId: 'AKLT-test-access' });
  });

  it('parses booleans, numbers and enums from their text forms', () => {
    const config = loadConfig(
      {
        RF_FRESH_EVAL: 'no',
        RF_DASHBOARD_READ_ONLY: '1',
        RF_METRICS_PUBLIC: 'NO',
        RF_WORKER_CONCURRENCY: '12',
        RF_BACKOFF_MS: '0',
        RF_REWARD_UNRESOLVED: '-0.5',
        LOG_LEVEL: 'DEBUG',
        LOG_FORMAT: 'json',
        RF_SANDBOX_IMAGE: 'swe-py312',
      },
      NO_FILE,
    );
    expect(config.worker).toMatchObject({ freshEval: false, concurrency: 12, backoffMs: 0, rewardUnresolved: -0.5 });
    expect(config.dashboard).toMatchObject({ readOnly: true, metricsPublic: false });
    expect(config.log).toEqual({ level: 'debug', format: 'json' });
    expect(config.sandbox.image).toBe('swe-py312');
  });

  it('ignores variables outside RF_ and VEFAAS_ and treats empty values as unset', () => {
    const config = loadConfig({ PATH: '/usr/bin', HOME: '/root', RF_QUEUE: '', VOLCE_REGION: 'x' }, NO_FILE);
    expect(config.queue.name).toBe('episodes');
  });
});

describe('loadConfig with a .env file', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  function writeDotenv(text: string): string {
    dir = mkdtempSync(join(tmpdir(), 'rf-config-'));
    const path = join(dir, '.env');
    writeFileSync(path, text);
    return path;
  }

  it('reads the file without touching process.env, and the explicit environment wins', () => {
    const dotenvPath = writeDotenv(
      'RF_QUEUE=from-file\nRF_WORKER_CONCURRENCY=7\nVEFAAS_REGION=cn-shanghai\nOTHER_TOOL_SETTING_XYZ=1\n',
    );
    const config = loadConfig({ RF_WORKER_CONCURRENCY: '9' }, { dotenvPath });
    expect(config.queue.name).toBe('from-file');
    expect(config.vefaas.region).toBe('cn-shanghai');
    expect(config.worker.concurrency).toBe(9);
    expect(process.env.OTHER_TOOL_SETTING_XYZ).toBeUndefined();
    expect(process.env.RF_QUEUE).toBeUndefined();
  });

  it('reports problems found in the file like any other', () => {
    const dotenvPath = writeDotenv('RF_ATTEMPTS=three\n');
    expect(() => loadConfig({}, { dotenvPath })).toThrow(/RF_ATTEMPTS="three" is not a whole number/);
  });

  it('rejects an explicitly named file that does not exist', () => {
    expect(() => loadConfig({}, { dotenvPath: '/nonexistent/rf/.env' })).toThrow(
      /nonexistent\/rf\/\.env cannot be read/,
    );
  });
});
