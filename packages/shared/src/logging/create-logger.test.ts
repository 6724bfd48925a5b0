import { describe, expect, it } from 'vitest';
import { RolloutError } from '../errors/rollout-error.js';
import { childLogger, createLogger, scrubFromLogs } from './create-logger.js';
import { memorySink } from '@rollout-fleet/test-kit/memory-sink';

const AK = 'AKLT-distinctive-ak-3141';
const SK = 'sk-distinctive-secret-2718';
const TOKEN = 'swerex-token-distinctive-1618';
const GATEWAY = 'gw-distinctive-key-1414';
const PASSWORD = 'pw-distinctive-hunter2-1732';

describe('createLogger', () => {
  it('writes JSON lines with the level label and ISO time when not on a TTY', () => {
    const sink = memorySink();
    createLogger({ level: 'debug', destination: sink }).debug({ queue: 'episodes' }, 'hello');
    const [record] = sink.records();
    expect(record).toMatchObject({ level: 20, msg: 'hello', queue: 'episodes' });
    expect(String(record?.time)).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('respects the level', () => {
    const sink = memorySink();
    const logger = createLogger({ level: 'warn', destination: sink });
    logger.info('dropped');
    logger.warn('kept');
    expect(sink.records().map((r) => r.msg)).toEqual(['kept']);
  });

  it('censors secret fields at any depth and in headers, whatever their case', () => {
    const sink = memorySink();
    const logger = createLogger({ destination: sink });
    const request = {
      method: 'POST',
      headers: { Authorization: `HMAC-SHA256 Credential=${AK}`, 'x-api-key': TOKEN, 'X-Faas-Instance-Name': 'sbx-1' },
    };
    logger.info(
      {
        req: request,
        vefaas: { accessKeyId: AK, secretAccessKey: SK, gatewayKey: GATEWAY, region: 'cn-beijing' },
        dashboard: { password: PASSWORD },
        deep: { a: { b: { c: [{ authToken: TOKEN, VEFAAS_SECRET_KEY: SK }] } } },
      },
      'request',
    );
    const text = sink.text();
    for (const secret of [AK, SK, TOKEN, GATEWAY, PASSWORD]) expect(text).not.toContain(secret);
    const [record] = sink.records();
    expect(record).toMatchObject({
      req: {
        method: 'POST',
        headers: { Authorization: '[REDACTED]', 'x-api-key': '[REDACTED]', 'X-Faas-Instance-Name': 'sbx-1' },
      },
      vefaas: {
        accessKeyId: '[REDACTED]',
        secretAccessKey: '[REDACTED]',
        gatewayKey: '[REDACTED]',
        region: 'cn-beijing',
      },
      deep: { a: { b: { c: [{ authToken: '[REDACTED]', VEFAAS_SECRET_KEY: '[REDACTED]' }] } } },
    });
    // The caller's objects are left alone.
    expect(request.headers['x-api-key']).toBe(TOKEN);
  });

  it('censors secrets bound on child loggers and inside error details', () => {
    const sink = memorySink();
    const logger = createLogger({ destination: sink });
    const child = logger.child({ sandbox: { token: TOKEN, id: 'sbx-2' } });
    const err = new RolloutError('SWEREX_AUTH', 'rejected', {
      details: { headers: { 'X-API-Key': TOKEN }, status: 401 },
    });
    child.error({ err }, 'start failed');
    expect(sink.text()).not.toContain(TOKEN);
    const [record] = sink.records();
    expect(record).toMatchObject({ sandbox: { token: '[REDACTED]', id: 'sbx-2' }, err: { details: { status: 401 } } });
  });

  it('cuts known secret values out of free text, message included', () => {
    const sink = memorySink();
    const logger = createLogger({ destination: sink, secrets: [TOKEN, undefined, 'with"quote-distinctive'] });
    logger.info({ command: `swerex-remote --auth-token ${TOKEN} --port 8000` }, `started with ${TOKEN}`);
    logger.info({ note: 'has with"quote-distinctive inside' }, 'escaped');
    const text = sink.text();
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('quote-distinctive');
    const [first] = sink.records();
    expect(first).toMatchObject({
      command: 'swerex-remote --auth-token [REDACTED] --port 8000',
      msg: 'started with [REDACTED]',
    });
  });

  it('logs errors under err with code, class, retryable and cause', () => {
    const sink = memorySink();
    const logger = createLogger({ destination: sink });
    logger.error(
      new RolloutError('VEFAAS_THROTTLED', 'slow down', {
        cause: new Error('429 from gateway'),
        details: { sandboxId: 'sbx-3' },
      }),
      'create failed',
    );
    const [record] = sink.records();
    expect(record).toMatchObject({
      msg: 'create failed',
      err: {
        type: 'RolloutError',
        message: expect.stringMatching(/^slow down/) as unknown,
        code: 'VEFAAS_THROTTLED',
        class: 'infra',
        retryable: true,
        details: { sandboxId: 'sbx-3' },
      },
    });
    expect(JSON.stringify(record)).toContain('429 from gateway');
  });

  it("cuts a job's secret values out of every line of the logger tree while the job runs (scrubFromLogs)", () => {
    const sink = memorySink();
    const root = createLogger({ destination: sink });
    const other = root.child({ component: 'supply' });
    const job = childLogger(root, { runId: 'run-1', episodeId: 'ep-1' });
    const ENV = 'env-value-distinctive-5772';
    const releaseA = scrubFromLogs(job, [ENV, 'true', '1']);
    const releaseB = scrubFromLogs(job, [ENV]);
    // Another module's logger, a message, a field, an error, an escaped form: all scrubbed.
    other.warn({ err: new Error(`export TOKEN='${ENV}' failed`) }, `setup of ${ENV}`);
    job.info({ note: `"${ENV}"`, flag: 'true' }, 'step');
    releaseA();
    releaseA();
    other.info(`still held by the second job: ${ENV}`);
    releaseB();
    other.info(`released: ${ENV}`);
    const lines = sink.text().trim().split('\n');
    expect(lines.slice(0, 3).join('\n')).not.toContain(ENV);
    expect(lines[0]).toContain('[REDACTED]');
    // Short values are not hunted through free text: "true" stays.
    expect(sink.records()[1]).toMatchObject({ flag: 'true' });
    expect(lines[3]).toContain(ENV);
  });

  it('binds episode context with childLogger, leaving out unset fields', () => {
    const sink = memorySink();
    const logger = childLogger(createLogger({ destination: sink }), {
      runId: 'run-1',
      episodeId: 'ep-7',
      sandboxId: undefined,
      attempt: 2,
    });
    logger.info('replaying');
    const [record] = sink.records();
    expect(record).toMatchObject({ runId: 'run-1', episodeId: 'ep-7', attempt: 2, msg: 'replaying' });
    expect(record).not.toHaveProperty('sandboxId');
  });

  it('prints human-readable lines on a TTY in auto format, still without secrets', () => {
    const sink = memorySink({ isTTY: true });
    createLogger({ destination: sink, format: 'auto', secrets: [TOKEN] }).info(
      { headers: { authorization: SK }, cmd: `run ${TOKEN}` },
      'pretty line',
    );
    const text = sink.text();
    expect(text).toContain('pretty line');
    expect(() => JSON.parse(text.split('\n')[0] ?? '')).toThrow();
    expect(text).not.toContain(SK);
    expect(text).not.toContain(TOKEN);
  });

  it('writes JSON when told to, even on a TTY', () => {
    const sink = memorySink({ isTTY: true });
    createLogger({ destination: sink, format: 'json' }).info('plain');
    expect(sink.records()[0]).toMatchObject({ msg: 'plain' });
  });
});
