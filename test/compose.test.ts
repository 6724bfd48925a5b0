/**
 * docker-compose.yml validated without Docker: `docker-compose config` (offline) checks the file against the
 * Compose schema and resolves it; then what it cannot see — each rollout-fleet service's environment is a valid
 * configuration, its arguments are options the CLI has, the published ports are the ones it listens on, the
 * workers' and sandbox-host's keys agree, and the workers' stop grace covers their shutdown grace.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfig, type Config } from '@rollout-fleet/shared';
import { commandNeed, describeWith } from '@rollout-fleet/test-kit/needs';
import { CLI, ROOT } from './support/pipeline-harness.js';

interface Service {
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  stop_grace_period?: string;
  depends_on?: Record<string, unknown>;
}

const SECRETS = { RF_DASHBOARD_PASSWORD: 'compose-test-password', RF_API_TOKEN: 'compose-test-token' };

/** `docker-compose config` with only the given variables set (no .env of this machine leaks in). */
function composeConfig(env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  return spawnSync('docker-compose', ['--project-directory', ROOT, '-f', `${ROOT}/docker-compose.yml`, 'config'], {
    encoding: 'utf8',
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  });
}

/** `--name=value` arguments as a map. */
function flagsOf(args: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    args
      .filter((a) => a.startsWith('--'))
      .map((a) => [
        a.slice(2, a.includes('=') ? a.indexOf('=') : undefined),
        a.includes('=') ? a.slice(a.indexOf('=') + 1) : '',
      ]),
  );
}

/** Compose durations as the file uses them: "60s", "1m30s". */
function seconds(duration: string): number {
  const parts = [...duration.matchAll(/(\d+)(h|m|s)/g)];
  expect(parts.map((p) => p[0]).join(''), `duration ${duration}`).toBe(duration);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * (unit === 'h' ? 3600 : unit === 'm' ? 60 : 1), 0);
}

describeWith([commandNeed('docker-compose', 'docker-compose')], 'docker-compose.yml', () => {
  const resolved = composeConfig(SECRETS);
  const services =
    resolved.status === 0 ? (parseYaml(resolved.stdout) as { services: Record<string, Service> }).services : {};
  const service = (name: string): Service => {
    expect(services[name], `service ${name}`).toBeDefined();
    return services[name]!;
  };
  const configOf = (name: string): Config => loadConfig(service(name).environment ?? {}, { dotenvPath: false });

  it('is a valid Compose file: redis, sandbox-host, workers, dashboard and the API', () => {
    expect(resolved.stderr).toBe('');
    expect(resolved.status).toBe(0);
    expect(Object.keys(services).sort()).toEqual(['api', 'dashboard', 'redis', 'sandbox-host', 'worker']);
  });

  it('refuses to start the dashboard or the API without their secret, naming it', () => {
    const noToken = composeConfig({ RF_DASHBOARD_PASSWORD: SECRETS.RF_DASHBOARD_PASSWORD });
    expect(noToken.status).not.toBe(0);
    expect(noToken.stderr).toContain('set RF_API_TOKEN');
    const noPassword = composeConfig({ RF_API_TOKEN: SECRETS.RF_API_TOKEN });
    expect(noPassword.status).not.toBe(0);
    expect(noPassword.stderr).toContain('set RF_DASHBOARD_PASSWORD');
  });

  it('gives every rollout-fleet service a configuration it accepts; the API has its token, the dashboard its password', () => {
    for (const name of ['worker', 'api']) {
      const config = configOf(name);
      expect(config.vefaas.mode, name).toBe('cloud');
      expect(config.redis.url, name).toBe('redis://redis:6379');
    }
    expect(configOf('api').api.token).toBe(SECRETS.RF_API_TOKEN);
    expect(configOf('dashboard').dashboard).toMatchObject({ password: SECRETS.RF_DASHBOARD_PASSWORD });
  });

  it('runs subcommands with options the CLI has, and publishes the ports they listen on, on loopback', () => {
    for (const name of ['sandbox-host', 'worker', 'dashboard', 'api']) {
      const [subcommand, ...args] = service(name).command!;
      const help = spawnSync(process.execPath, [CLI, subcommand!, '--help'], { encoding: 'utf8', cwd: ROOT });
      expect(help.status, `rollout-fleet ${subcommand} --help: ${help.stderr}`).toBe(0);
      for (const flag of Object.keys(flagsOf(args)))
        expect(help.stdout, `${name}: ${subcommand} --${flag}`).toContain(`--${flag}`);
    }
    for (const name of ['dashboard', 'api']) {
      const port = flagsOf(service(name).command!).port;
      expect(service(name).ports).toEqual([`127.0.0.1:${port}:${port}/tcp`]);
    }
  });

  it('workers and the API reach the sandbox-host with the keys, function and gateway key it serves', () => {
    const host = flagsOf(service('sandbox-host').command!);
    for (const name of ['worker', 'api']) {
      const env = service(name).environment!;
      expect(env.VEFAAS_ACCESS_KEY).toBe(host['access-key']);
      expect(env.VEFAAS_SECRET_KEY).toBe(host['secret-key']);
      expect(env.VEFAAS_GATEWAY_KEY).toBe(host['gateway-key']);
      expect(env.VEFAAS_FUNCTION_ID).toBe(host['function-id']);
      expect(env.VEFAAS_ENDPOINT).toBe(`http://sandbox-host:${host.port}`);
      expect(env.VEFAAS_FUNCTION_ROUTE).toBe(`http://sandbox-host:${host.port}/fn/${host['function-id']}`);
      expect(Object.keys(service(name).depends_on ?? {})).toEqual(expect.arrayContaining(['redis', 'sandbox-host']));
    }
  });

  it('workers stop within a grace that covers RF_SHUTDOWN_GRACE_S plus hand-back', () => {
    expect(seconds(service('worker').stop_grace_period!)).toBeGreaterThanOrEqual(
      configOf('worker').worker.shutdownGraceS + 30,
    );
  });
});

describe('compose durations', () => {
  it('reads the forms the file uses and refuses others', () => {
    expect(seconds('60s')).toBe(60);
    expect(seconds('1m30s')).toBe(90);
    expect(() => seconds('60')).toThrow();
  });
});
