/**
 * deploy/k8s validated without a cluster: every object against the Kubernetes (kubernetes-models) and KEDA
 * (@kubernetes-models/keda) schemas; then what a schema cannot see — each pod's environment is a valid
 * rollout-fleet configuration, every reference (ConfigMap, Secret key, port name, selector, scale target)
 * resolves, container arguments are options the CLI has, the worker's grace period covers its shutdown
 * grace and its probes hit its own health endpoint, and the autoscaler's query names a series the
 * dashboard really serves.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service, type IContainer, type IPodSpec } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { createRedis, loadConfig, type Config, type RedisClient } from '@rollout-fleet/shared';
import { startDashboard, type Dashboard } from '@rollout-fleet/api/dashboard';
import { CLI, ROOT, silentLogger, testEnv } from './support/pipeline-harness.js';

const DIR = join(ROOT, 'deploy/k8s');

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

const MODELS: Record<string, (doc: Manifest) => { validate(): void }> = {
  'v1/ConfigMap': (doc) => new ConfigMap(doc as never),
  'v1/Secret': (doc) => new Secret(doc as never),
  'v1/Service': (doc) => new Service(doc as never),
  'apps/v1/Deployment': (doc) => new Deployment(doc as never),
  'policy/v1/PodDisruptionBudget': (doc) => new PodDisruptionBudget(doc as never),
  'keda.sh/v1alpha1/ScaledObject': (doc) => new ScaledObject(doc as never),
};

interface Kustomization {
  resources: string[];
  secretGenerator: Array<{ name: string; envs: string[] }>;
  images: Array<{ name: string }>;
}

function readManifests(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map((doc) => {
    expect(doc.errors, file).toEqual([]);
    return doc.toJS() as Manifest;
  });
}

/** KEY=value lines, as kustomize's secretGenerator reads `envs` files. */
function readEnvFile(file: string): Record<string, string> {
  const pairs = readFileSync(join(DIR, file), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const);
  return Object.fromEntries(pairs);
}

const kustomization = parseYaml(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as Kustomization;
const manifests = kustomization.resources.flatMap(readManifests);
const generator = kustomization.secretGenerator[0]!;
// What `kubectl apply -k` creates from secrets.env; the example stands in for the user's file.
const exampleSecrets = readEnvFile('secrets.env.example');
const secret: Manifest = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: generator.name },
  type: 'Opaque',
  data: Object.fromEntries(Object.entries(exampleSecrets).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
};
const all = [...manifests, secret];
const named = (kind: string, name: string): Manifest | undefined =>
  all.find((m) => m.kind === kind && m.metadata.name === name);
const deployments = manifests.filter((m) => m.kind === 'Deployment') as unknown as Array<
  Manifest & {
    spec: {
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string> }; spec: IPodSpec };
    };
  }
>;
const deployment = (name: string) => deployments.find((d) => d.metadata.name === name)!;

/** The container's environment as the kubelet would build it (envFrom ConfigMaps, then env from the Secret). */
function environmentOf(container: IContainer): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const map = named('ConfigMap', source.configMapRef?.name ?? '') as
      (Manifest & { data: Record<string, string> }) | undefined;
    expect(map, `ConfigMap ${source.configMapRef?.name}`).toBeDefined();
    Object.assign(env, map!.data);
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    expect(ref?.name, variable.name).toBe(generator.name);
    expect(Object.keys(exampleSecrets), `${variable.name}: key ${ref?.key} of ${ref?.name}`).toContain(ref?.key);
    env[variable.name] = exampleSecrets[ref!.key]!;
  }
  return env;
}

function configOfContainer(container: IContainer): Config {
  return loadConfig(environmentOf(container), { dotenvPath: false });
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

describe('deploy/k8s', () => {
  it('lists every manifest in kustomization.yaml, and each object passes its Kubernetes or KEDA schema', () => {
    const files = readdirSync(DIR)
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
      .sort();
    expect([...kustomization.resources].sort()).toEqual(files);
    for (const doc of all) {
      const model = MODELS[`${doc.apiVersion}/${doc.kind}`];
      expect(model, `${doc.apiVersion} ${doc.kind} has a schema here`).toBeDefined();
      expect(() => model!(doc).validate(), `${doc.kind}/${doc.metadata.name}`).not.toThrow();
    }
    expect(all.map((m) => m.kind).sort()).toEqual([
      'ConfigMap',
      'ConfigMap',
      'Deployment',
      'Deployment',
      'Deployment',
      'PodDisruptionBudget',
      'ScaledObject',
      'Secret',
      'Service',
      'Service',
    ]);
  });

  it('the schema check can fail: a wrong type is caught (unknown fields are not: the models allow them)', () => {
    const worker = structuredClone(deployment('rollout-worker'));
    (worker.spec.template.spec.containers[0]!.ports![0] as { containerPort: unknown }).containerPort = 'health';
    expect(() => new Deployment(worker as never).validate()).toThrow(/containerPort must be integer/);
    const scaler = structuredClone(named('ScaledObject', 'rollout-worker')!) as Manifest & {
      spec: { triggers: Array<{ metadata: Record<string, unknown> }> };
    };
    scaler.spec.triggers[0]!.metadata.threshold = 8;
    expect(() => new ScaledObject(scaler as never).validate()).toThrow(/threshold must be string/);
  });

  it('gives every pod a configuration rollout-fleet accepts, with only the secrets it needs', () => {
    const worker = configOfContainer(deployment('rollout-worker').spec.template.spec.containers[0]!);
    expect(worker.vefaas.mode).toBe('cloud');
    expect(worker.queue.prefix).toBe('{rf}');
    const api = configOfContainer(deployment('rollout-api').spec.template.spec.containers[0]!);
    expect(api.vefaas.mode).toBe('cloud');
    const dashboard = configOfContainer(deployment('rollout-dashboard').spec.template.spec.containers[0]!);
    expect(dashboard.dashboard).toMatchObject({
      user: 'operator',
      password: exampleSecrets.RF_DASHBOARD_PASSWORD,
      metricsPublic: true,
    });
    const secretsOf = (name: string) =>
      (deployment(name).spec.template.spec.containers[0]!.env ?? []).map((e) => e.name).sort();
    expect(secretsOf('rollout-worker')).toEqual(['REDIS_URL', 'VEFAAS_ACCESS_KEY', 'VEFAAS_SECRET_KEY']);
    expect(secretsOf('rollout-dashboard')).toEqual(['REDIS_URL', 'RF_DASHBOARD_PASSWORD']);
    expect(secretsOf('rollout-api')).toEqual(['REDIS_URL', 'RF_API_TOKEN', 'VEFAAS_ACCESS_KEY', 'VEFAAS_SECRET_KEY']);
    // Nothing secret in a ConfigMap.
    const configured = manifests
      .filter((m) => m.kind === 'ConfigMap')
      .flatMap((m) => Object.keys((m as Manifest & { data: object }).data));
    for (const name of ['VEFAAS_ACCESS_KEY', 'VEFAAS_SECRET_KEY', 'REDIS_URL', 'RF_DASHBOARD_PASSWORD', 'RF_API_TOKEN'])
      expect(configured).not.toContain(name);
  });

  it('resolves every reference: selectors, service ports, probe ports, the image kustomize rewrites', () => {
    for (const d of deployments) {
      expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
      for (const c of d.spec.template.spec.containers) {
        expect(kustomization.images.map((i) => i.name)).toContain(c.image);
        const ports = (c.ports ?? []).map((p) => p.name);
        for (const probe of [c.readinessProbe, c.livenessProbe]) {
          expect(probe, `${d.metadata.name} probes`).toBeDefined();
          expect(ports).toContain(probe!.httpGet?.port ?? probe!.tcpSocket?.port);
        }
        expect(
          c.resources?.requests?.cpu && c.resources.requests.memory && c.resources.limits?.memory,
          `${d.metadata.name} resources`,
        ).toBeTruthy();
      }
    }
    for (const service of manifests.filter((m) => m.kind === 'Service') as Array<
      Manifest & { spec: { selector: Record<string, string>; ports: Array<{ targetPort: string }> } }
    >) {
      const target = deployments.find((d) =>
        Object.entries(service.spec.selector).every(([k, v]) => d.spec.template.metadata.labels[k] === v),
      );
      expect(target, `Service ${service.metadata.name} selects a Deployment`).toBeDefined();
      const ports = target!.spec.template.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.name));
      for (const port of service.spec.ports) expect(ports).toContain(port.targetPort);
    }
    const pdb = named('PodDisruptionBudget', 'rollout-worker') as Manifest & {
      spec: { selector: { matchLabels: Record<string, string> } };
    };
    expect(deployment('rollout-worker').spec.template.metadata.labels).toMatchObject(pdb.spec.selector.matchLabels);
  });

  it('runs subcommands with options the CLI has', () => {
    for (const d of deployments) {
      const [subcommand, ...args] = d.spec.template.spec.containers[0]!.args!;
      const help = spawnSync(process.execPath, [CLI, subcommand!, '--help'], { encoding: 'utf8', cwd: ROOT });
      expect(help.status, `rollout-fleet ${subcommand} --help: ${help.stderr}`).toBe(0);
      for (const flag of Object.keys(flagsOf(args)))
        expect(help.stdout, `${subcommand} --${flag}`).toContain(`--${flag}`);
    }
  });

  it('dashboard and API listen on all interfaces at the port their Service targets; the API has its token', () => {
    for (const name of ['rollout-dashboard', 'rollout-api']) {
      const container = deployment(name).spec.template.spec.containers[0]!;
      const flags = flagsOf(container.args!);
      expect(flags.host, name).toBe('0.0.0.0');
      expect(container.ports, name).toContainEqual({ name: 'http', containerPort: Number(flags.port) });
    }
    // A non-loopback API without a token refuses to start: the Secret must carry one.
    expect(configOfContainer(deployment('rollout-api').spec.template.spec.containers[0]!).api.token).toBe(
      exampleSecrets.RF_API_TOKEN,
    );
    expect(exampleSecrets.RF_API_TOKEN).toBeTruthy();
  });

  it('worker: grace period covers RF_SHUTDOWN_GRACE_S plus hand-back, probes hit its own health endpoint', () => {
    const pod = deployment('rollout-worker').spec.template.spec;
    const container = pod.containers[0]!;
    const config = configOfContainer(container);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(config.worker.shutdownGraceS + 30);
    const flags = flagsOf(container.args!);
    const healthPort = Number(flags['health-port']);
    expect(flags['health-host']).toBe('0.0.0.0');
    expect(container.ports).toContainEqual({ name: 'health', containerPort: healthPort });
    expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'health' });
    expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'health' });
  });

  describe('KEDA ScaledObject', () => {
    let redis: RedisClient;
    let dashboard: Dashboard;
    let metrics: string;
    beforeAll(async () => {
      const config = loadConfig({ ...testEnv(), RF_METRICS_PUBLIC: 'true' }, { dotenvPath: false });
      redis = createRedis(config.redis);
      dashboard = await startDashboard({ config, port: 0, host: '127.0.0.1', logger: silentLogger, redis });
      metrics = await (await fetch(new URL('/metrics', dashboard.url))).text();
    });
    afterAll(async () => {
      await dashboard?.close();
      redis?.disconnect();
    });

    it('scales the worker Deployment, one pod per RF_WORKER_CONCURRENCY episodes of backlog the dashboard really reports', () => {
      const scaler = named('ScaledObject', 'rollout-worker') as Manifest & {
        spec: {
          scaleTargetRef: { name: string };
          minReplicaCount: number;
          triggers: Array<{ type: string; metadata: Record<string, string> }>;
        };
      };
      expect(named('Deployment', scaler.spec.scaleTargetRef.name)).toBeDefined();
      expect(scaler.spec.minReplicaCount).toBeGreaterThanOrEqual(1); // the reaper lives in the workers
      const worker = configOfContainer(deployment('rollout-worker').spec.template.spec.containers[0]!);
      const [trigger] = scaler.spec.triggers;
      expect(trigger?.type).toBe('prometheus');
      expect(Number(trigger!.metadata.threshold)).toBe(worker.worker.concurrency);
      const query = /^sum\((\w+)\{queue="([^"]+)",state=~"([^"]+)"\}\)$/.exec(trigger!.metadata.query ?? '');
      expect(query, trigger!.metadata.query).not.toBeNull();
      const [, series, queue, states] = query!;
      expect(queue).toBe(worker.queue.name);
      expect(states!.split('|').sort()).toEqual(['active', 'delayed', 'prioritized', 'waiting']);
      for (const state of states!.split('|'))
        expect(metrics).toContain(`${series}{queue="${queue}",state="${state}"} 0`);
    });
  });
});
