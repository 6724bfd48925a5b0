import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startVefaasLocal, type VefaasLocalHandle } from '../host.js';
import { callAction, okResult, swerexCommand } from '../../test/control-plane-caller.js';

const IMAGE = 'swe-bench/django:v1';

describe('control plane (emulated sandboxes)', () => {
  let host: VefaasLocalHandle;
  const create = (extra: Record<string, unknown> = {}) =>
    okResult<{ SandboxId: string; AssignStatus: string }>(host, 'CreateSandbox', {
      FunctionId: host.functionId,
      InstanceImageInfo: { Image: IMAGE, Command: swerexCommand('tok'), Port: 8000 },
      ...extra,
    });

  beforeAll(async () => {
    host = await startVefaasLocal({ isolation: 'emulated', emulatedImages: [IMAGE] });
  });
  afterAll(async () => {
    await host.close();
  });

  describe('envelope and errors', () => {
    it('wraps a success in ResponseMetadata with a request id shaped like the real one', async () => {
      const { status, envelope } = await callAction(host, 'ListSandboxes', { FunctionId: host.functionId });
      expect(status).toBe(200);
      expect(envelope.ResponseMetadata).toMatchObject({
        Action: 'ListSandboxes',
        Version: '2024-06-06',
        Service: 'vefaas',
        Region: 'cn-beijing',
      });
      expect(envelope.ResponseMetadata.RequestId).toMatch(/^\d{14}[0-9A-F]{20}$/);
      expect(envelope.ResponseMetadata.Error).toBeUndefined();
      expect(envelope.Result).toMatchObject({ Total: 0, Sandboxes: [] });
    });

    it.each([
      ['no Authorization', { unsigned: true }, 401, 'MissingAuthenticationToken'],
      [
        'an unknown access key',
        { credentials: { accessKeyId: 'AKLTnobody', secretAccessKey: 'x' } },
        401,
        'InvalidAccessKey',
      ],
      ['a body that is not the signed one', { tamperBody: '{"FunctionId":"other"}' }, 401, 'SignatureDoesNotMatch'],
      [
        'a wrong secret key',
        { credentials: { accessKeyId: '', secretAccessKey: 'wrong' } },
        401,
        'SignatureDoesNotMatch',
      ],
    ])('rejects %s', async (_name, options, status, code) => {
      const opts = { ...options } as Parameters<typeof callAction>[3] & {
        credentials?: { accessKeyId: string; secretAccessKey: string };
      };
      if (opts.credentials?.accessKeyId === '')
        opts.credentials = { accessKeyId: host.accessKeyId, secretAccessKey: 'wrong' };
      const result = await callAction(host, 'ListSandboxes', { FunctionId: host.functionId }, opts);
      expect(result.status).toBe(status);
      expect(result.envelope.ResponseMetadata.Error?.Code).toBe(code);
      expect(result.envelope.Result).toBeUndefined();
    });

    it('answers 404 InvalidActionOrVersion for an unknown action or version', async () => {
      const unknown = await callAction(host, 'RunCode', {});
      expect(unknown.status).toBe(404);
      expect(unknown.envelope.ResponseMetadata.Error).toMatchObject({ Code: 'InvalidActionOrVersion', CodeN: 100008 });
      const oldVersion = await callAction(
        host,
        'ListSandboxes',
        { FunctionId: host.functionId },
        { version: '2021-03-03' },
      );
      expect(oldVersion.status).toBe(404);
      expect(oldVersion.envelope.ResponseMetadata.Error?.Code).toBe('InvalidActionOrVersion');
    });

    it('answers 400 MissingParameter without FunctionId and 404 for an unknown function', async () => {
      const missing = await callAction(host, 'CreateSandbox', { Timeout: 5 });
      expect(missing.status).toBe(400);
      expect(missing.envelope.ResponseMetadata.Error).toMatchObject({ Code: 'MissingParameter', CodeN: 100002 });
      const unknown = await callAction(host, 'ListSandboxes', { FunctionId: 'fn-nope' });
      expect(unknown.status).toBe(404);
      expect(unknown.envelope.ResponseMetadata.Error?.Code).toBe('ResourceNotFound');
    });

    it('answers 400 "Command is empty" for an image without a command, and rejects misspelled image fields', async () => {
      const empty = await callAction(host, 'CreateSandbox', {
        FunctionId: host.functionId,
        InstanceImageInfo: { Image: IMAGE, Port: 8000 },
      });
      expect(empty.status).toBe(400);
      expect(empty.envelope.ResponseMetadata.Error?.Message).toBe('Command is empty');
      const misspelled = await callAction(host, 'CreateSandbox', {
        FunctionId: host.functionId,
        InstanceImageInfo: { ImageUrl: IMAGE, Command: 'x' },
      });
      expect(misspelled.status).toBe(400);
      expect(misspelled.envelope.ResponseMetadata.Error?.Code).toBe('InvalidParameter');
    });

    it('rejects a bad TimeoutUnit and a lifetime out of range', async () => {
      const unit = await callAction(host, 'CreateSandbox', {
        FunctionId: host.functionId,
        Timeout: 5,
        TimeoutUnit: 'hour',
        InstanceImageInfo: { Image: IMAGE, Command: 'x' },
      });
      expect(unit.status).toBe(400);
      expect(unit.envelope.ResponseMetadata.Error?.Code).toBe('InvalidParameter');
      const long = await callAction(host, 'CreateSandbox', {
        FunctionId: host.functionId,
        Timeout: 1441,
        InstanceImageInfo: { Image: IMAGE, Command: 'x' },
      });
      expect(long.status).toBe(400);
    });

    it('answers 404 ResourceNotFound "Sandbox not found" for an unknown sandbox on every sandbox action', async () => {
      for (const action of ['DescribeSandbox', 'KillSandbox', 'SetSandboxTimeout']) {
        const { status, envelope } = await callAction(host, action, {
          FunctionId: host.functionId,
          SandboxId: 'sbx-missing',
          Timeout: 5,
        });
        expect(status, action).toBe(404);
        expect(envelope.ResponseMetadata.Error, action).toMatchObject({
          Code: 'ResourceNotFound',
          Message: 'Sandbox not found',
        });
      }
    });

    it('answers InvalidParameter to a ListSandboxes Status filter', async () => {
      const { status, envelope } = await callAction(host, 'ListSandboxes', {
        FunctionId: host.functionId,
        Status: 'Ready',
      });
      expect(status).toBe(400);
      expect(envelope.ResponseMetadata.Error?.Code).toBe('InvalidParameter');
    });
  });

  describe('actions', () => {
    it('creates a sandbox that is Ready on return and describes every field', async () => {
      const before = Date.now();
      const { SandboxId, AssignStatus } = await create({
        Timeout: 30,
        Envs: [{ Key: 'A', Value: '1' }],
        Metadata: { job: 'j1' },
        CpuMilli: 2000,
        MemoryMB: 4096,
      });
      expect(SandboxId).toMatch(/^sbx-[0-9a-f]{16}$/);
      expect(AssignStatus).toBeTypeOf('string');
      const described = await okResult(host, 'DescribeSandbox', { FunctionId: host.functionId, SandboxId });
      expect(described).toMatchObject({
        Id: SandboxId,
        FunctionId: host.functionId,
        Status: 'Ready',
        ErrorCode: '',
        CpuMilli: 2000,
        MemoryMB: 4096,
        Envs: [{ Key: 'A', Value: '1' }],
        ImageInfo: { Image: IMAGE, Command: swerexCommand('tok'), Port: 8000 },
        MetadataList: [{ MetaKey: 'job', MetaValue: 'j1' }],
      });
      const expireAt = Date.parse(described['ExpireAt'] as string);
      expect(expireAt - Date.parse(described['CreatedAt'] as string)).toBe(30 * 60 * 1000);
      expect(Date.parse(described['CreatedAt'] as string)).toBeGreaterThanOrEqual(before - 1000);
    });

    it('reports Failed with function_initialize_failed for an unknown image', async () => {
      const { SandboxId } = await create({
        InstanceImageInfo: { Image: 'no/such:image', Command: swerexCommand('t') },
      });
      const described = await okResult(host, 'DescribeSandbox', { FunctionId: host.functionId, SandboxId });
      expect(described).toMatchObject({ Status: 'Failed', ErrorCode: 'function_initialize_failed' });
      expect(described['ErrorMessage']).toContain('no/such:image');
      await okResult(host, 'KillSandbox', { FunctionId: host.functionId, SandboxId });
    });

    it('lists with an exact Metadata filter, paging, Total and StatusCount; items carry Metadata as a map', async () => {
      const label = `run-${Date.now()}`;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await create({ Metadata: { run: label, idx: String(i) } })).SandboxId);
      await create({ Metadata: { run: 'other' } });
      const page1 = await okResult<{
        Sandboxes: Array<Record<string, unknown>>;
        Total: number;
        StatusCount: Record<string, number>;
      }>(host, 'ListSandboxes', { FunctionId: host.functionId, Metadata: { run: label }, PageNumber: 1, PageSize: 2 });
      expect(page1.Total).toBe(5);
      expect(page1.StatusCount).toEqual({ Ready: 5 });
      expect(page1.Sandboxes.map((s) => s['Id'])).toEqual(ids.slice(0, 2));
      expect(page1.Sandboxes[0]?.['Metadata']).toEqual({ run: label, idx: '0' });
      const page3 = await okResult<{ Sandboxes: Array<Record<string, unknown>> }>(host, 'ListSandboxes', {
        FunctionId: host.functionId,
        Metadata: { run: label },
        PageNumber: 3,
        PageSize: 2,
      });
      expect(page3.Sandboxes.map((s) => s['Id'])).toEqual(ids.slice(4));
      const exact = await okResult<{ Total: number }>(host, 'ListSandboxes', {
        FunctionId: host.functionId,
        Metadata: { run: label, idx: '3' },
      });
      expect(exact.Total).toBe(1);
      const byId = await okResult<{ Total: number }>(host, 'ListSandboxes', {
        FunctionId: host.functionId,
        SandboxId: ids[1],
      });
      expect(byId.Total).toBe(1);
    });

    it('kills: Terminating right after KillSandbox, then ResourceNotFound', async () => {
      const slowHost = await startVefaasLocal({
        isolation: 'emulated',
        faults: { terminating: { stuckRate: 1, stuckMs: 300 } },
      });
      try {
        const { SandboxId } = await okResult<{ SandboxId: string }>(slowHost, 'CreateSandbox', {
          FunctionId: slowHost.functionId,
          InstanceImageInfo: { Image: IMAGE, Command: swerexCommand('t') },
        });
        expect(await okResult(slowHost, 'KillSandbox', { FunctionId: slowHost.functionId, SandboxId })).toEqual({});
        const during = await okResult(slowHost, 'DescribeSandbox', { FunctionId: slowHost.functionId, SandboxId });
        expect(during['Status']).toBe('Terminating');
        await vi.waitFor(
          async () => {
            const after = await callAction(slowHost, 'DescribeSandbox', { FunctionId: slowHost.functionId, SandboxId });
            expect(after.envelope.ResponseMetadata.Error?.Code).toBe('ResourceNotFound');
          },
          { timeout: 5000, interval: 50 },
        );
      } finally {
        await slowHost.close();
      }
    });

    it('SetSandboxTimeout counts the new lifetime from now and returns ExpireAt', async () => {
      const { SandboxId } = await create({ Timeout: 10 });
      const before = Date.now();
      const result = await okResult(host, 'SetSandboxTimeout', {
        FunctionId: host.functionId,
        SandboxId,
        Timeout: 120,
        TimeoutUnit: 'second',
      });
      expect(result).toMatchObject({ FunctionId: host.functionId, SandboxId });
      const expireAt = Date.parse(result['ExpireAt'] as string);
      expect(expireAt).toBeGreaterThanOrEqual(before + 120_000);
      expect(expireAt).toBeLessThanOrEqual(Date.now() + 120_000);
      const missing = await callAction(host, 'SetSandboxTimeout', { FunctionId: host.functionId, SandboxId });
      expect(missing.envelope.ResponseMetadata.Error?.Code).toBe('MissingParameter');
    });

    it('expires a sandbox at ExpireAt (Timeout 1, TimeoutUnit second) and removes it', async () => {
      const { SandboxId } = await create({ Timeout: 1, TimeoutUnit: 'second' });
      await vi.waitFor(
        async () => {
          const { status } = await callAction(host, 'DescribeSandbox', { FunctionId: host.functionId, SandboxId });
          expect(status).toBe(404);
        },
        { timeout: 5000, interval: 50 },
      );
      const { envelope } = await callAction(host, 'DescribeSandbox', { FunctionId: host.functionId, SandboxId });
      expect(envelope.ResponseMetadata.Error?.Message).toBe('Sandbox not found');
    });

    it("answers while still Starting with createReturns 'immediately'", async () => {
      const quick = await startVefaasLocal({
        isolation: 'emulated',
        createReturns: 'immediately',
        faults: { coldStart: { delayMs: 200 } },
      });
      try {
        const { SandboxId } = await okResult<{ SandboxId: string }>(quick, 'CreateSandbox', {
          FunctionId: quick.functionId,
          InstanceImageInfo: { Image: IMAGE, Command: swerexCommand('t') },
        });
        const first = await okResult(quick, 'DescribeSandbox', { FunctionId: quick.functionId, SandboxId });
        expect(first).toMatchObject({ Status: 'Starting', Pending: true });
        await vi.waitFor(
          async () => {
            const later = await okResult(quick, 'DescribeSandbox', { FunctionId: quick.functionId, SandboxId });
            expect(later['Status']).toBe('Ready');
          },
          { timeout: 5000, interval: 50 },
        );
      } finally {
        await quick.close();
      }
    });
  });
});
