import { describe, expect, it } from 'vitest';
import { FaultController } from './fault-controller.js';
import { parseFaultConfig } from './fault-config.js';

const config = {
  seed: 42,
  controlPlane: { errorRate: 0.3, hang: { DescribeSandbox: 0.2 }, latencyMs: { '*': { min: 10, max: 90 } } },
  gateway: { errorRate: 0.2, instanceDeathRate: { '/execute': 0.1 } },
};

function decisions(controller: FaultController): string[] {
  const out: string[] = [];
  for (let i = 0; i < 200; i++) {
    const action = i % 3 === 0 ? 'DescribeSandbox' : 'CreateSandbox';
    const cp = controller.controlPlane(action);
    const gw = controller.gateway(i % 2 === 0 ? '/execute' : '/is_alive');
    out.push(`${cp.latencyMs}:${cp.hang}:${cp.error?.code ?? '-'}|${gw.error?.status ?? '-'}:${gw.killInstance}`);
  }
  return out;
}

describe('FaultController', () => {
  it('gives the same decisions for the same seed and request sequence', () => {
    expect(decisions(new FaultController(config))).toEqual(decisions(new FaultController(config)));
  });

  it('gives different decisions for another seed', () => {
    expect(decisions(new FaultController({ ...config, seed: 43 }))).not.toEqual(decisions(new FaultController(config)));
  });

  it('keeps one endpoint’s faults independent of traffic to other endpoints', () => {
    const quiet = new FaultController(config);
    const busy = new FaultController(config);
    const onlyDescribe = (c: FaultController) =>
      Array.from({ length: 50 }, () => c.controlPlane('DescribeSandbox').error?.code ?? '-');
    for (let i = 0; i < 37; i++) busy.controlPlane('ListSandboxes');
    expect(onlyDescribe(busy)).toEqual(onlyDescribe(quiet));
  });

  it('injects at roughly the configured rate and within the latency bounds', () => {
    const controller = new FaultController({
      seed: 7,
      controlPlane: { errorRate: 0.25, latencyMs: { '*': { min: 5, max: 15 } } },
    });
    const faults = Array.from({ length: 2000 }, () => controller.controlPlane('ListSandboxes'));
    const errors = faults.filter((f) => f.error !== null).length;
    expect(errors / faults.length).toBeGreaterThan(0.2);
    expect(errors / faults.length).toBeLessThan(0.3);
    expect(faults.every((f) => f.latencyMs >= 5 && f.latencyMs <= 15)).toBe(true);
    expect(controller.stats.injectedErrors).toBe(errors);
  });

  it('counts injected faults by kind: control-plane 5xx, gateway 5xx, cold-start timeouts', () => {
    const controller = new FaultController({
      seed: 3,
      controlPlane: { errorRate: 0.3 },
      gateway: { errorRate: 0.2 },
      coldStart: { timeoutRate: 0.1 },
    });
    const cp = Array.from({ length: 500 }, () => controller.controlPlane('DescribeSandbox')).filter(
      (f) => f.error !== null,
    ).length;
    const gw = Array.from({ length: 500 }, () => controller.gateway('/run_in_session')).filter(
      (f) => f.error !== null,
    ).length;
    const cold = Array.from({ length: 500 }, () => controller.coldStart()).filter((f) => f.timeout).length;
    expect(cp * gw * cold).toBeGreaterThan(0);
    expect(controller.stats).toMatchObject({
      controlPlaneErrors: cp,
      gatewayErrors: gw,
      coldStartTimeouts: cold,
      injectedErrors: cp + gw,
    });
  });

  it('counts requests by control-plane action and gateway path, faults configured or not (reconfiguring keeps the counts)', () => {
    const controller = new FaultController();
    for (let i = 0; i < 3; i++) controller.controlPlane('DescribeSandbox');
    controller.controlPlane('CreateSandbox');
    controller.configure({ gateway: { errorRate: 1 } });
    controller.gateway('/is_alive');
    controller.gateway('/is_alive');
    expect(controller.calls).toEqual({ 'cp:DescribeSandbox': 3, 'cp:CreateSandbox': 1, 'gw:/is_alive': 2 });
  });

  it('throttles CreateSandbox above N per sliding second', () => {
    let now = 1_000_000;
    const controller = new FaultController({ throttle: { createPerSecond: 2 } }, { now: () => now });
    expect([controller.admitCreate(), controller.admitCreate()]).toEqual([null, null]);
    expect(controller.admitCreate()).toMatchObject({ status: 429, code: 'AccountFlowLimitExceeded' });
    now += 1000;
    expect(controller.admitCreate()).toBeNull();
  });

  it('rejects unknown keys and out-of-range rates', () => {
    expect(() => parseFaultConfig({ controlPlane: { errorRatio: 0.1 } })).toThrow(/invalid fault config/);
    expect(() => parseFaultConfig({ gateway: { errorRate: 2 } })).toThrow(/gateway.errorRate/);
  });
});

describe('FaultController shellStall', () => {
  it('stalls /run_in_session only, with the configured time and match', () => {
    const controller = new FaultController({ shellStall: { rate: 1, ms: 2000, match: 'stall-me' } });
    expect(controller.gateway('/execute').shellStall).toBeNull();
    expect(controller.gateway('/run_in_session').shellStall).toEqual({ ms: 2000, match: 'stall-me' });
    expect(new FaultController({ shellStall: { rate: 1 } }).gateway('/run_in_session').shellStall).toEqual({
      ms: 1500,
    });
    expect(controller.stats.shellStalls).toBe(1);
  });

  it('refuses a match that is not a regular expression, and unknown keys', () => {
    expect(() => parseFaultConfig({ shellStall: { rate: 1, match: '(' } })).toThrow(
      /shellStall\.match: not a valid regular expression/,
    );
    expect(() => parseFaultConfig({ shellStall: { rate: 1, seconds: 2 } })).toThrow(/shellStall/);
    expect(() => parseFaultConfig({ shellStall: { rate: 2 } })).toThrow(/shellStall\.rate/);
  });
});
