/**
 * Wire contract: DescribeSandbox `Result` and ListSandboxes items (vefaas-api.md §1.3). Describe returns the id
 * as `Id` and metadata as `MetadataList[{MetaKey, MetaValue}]`; list items carry `Metadata` as a map.
 * Times are ISO-8601 UTC strings (real format UNCERTAIN, §6.4).
 */
import type { SandboxRecord } from '../registry/sandbox-record.js';

/** UNCERTAIN (§6.4): the real values of AssignStatus are not documented. */
const ASSIGN_STATUS = 'Assigned';
const INSTANCE_TYPE = 'elastic';
const AVAILABILITY_ZONE = 'local';

const iso = (ms: number): string => new Date(ms).toISOString();

export function describeView(record: SandboxRecord): Record<string, unknown> {
  const { spec } = record;
  return {
    Id: record.id,
    FunctionId: record.functionId,
    Status: record.status,
    ErrorCode: record.errorCode,
    ErrorMessage: record.errorMessage,
    CreatedAt: iso(record.createdAt),
    ExpireAt: iso(record.expireAt),
    AvailabilityZone: AVAILABILITY_ZONE,
    CpuMilli: spec.cpuMilli,
    MemoryMB: spec.memoryMB,
    MaxConcurrency: spec.maxConcurrency,
    RequestTimeout: spec.requestTimeoutSeconds,
    RevisionNumber: 1,
    InstanceType: INSTANCE_TYPE,
    Pending: record.status === 'Starting',
    AssignStatus: ASSIGN_STATUS,
    SessionId: spec.sessionId,
    Envs: spec.envs.map((env) => ({ Key: env.Key, Value: env.Value })),
    ImageInfo: { Image: spec.image, Command: spec.command, Port: spec.port, Id: spec.imageId },
    MetadataList: Object.entries(spec.metadata).map(([MetaKey, MetaValue]) => ({ MetaKey, MetaValue })),
    InstanceTosMountConfig: null,
    InstanceNasMountConfig: null,
    Sidecars: [],
  };
}

export function listItemView(record: SandboxRecord): Record<string, unknown> {
  const { spec } = record;
  return {
    Id: record.id,
    FunctionId: record.functionId,
    Status: record.status,
    CreatedAt: iso(record.createdAt),
    ExpireAt: iso(record.expireAt),
    PausedAt: '',
    AvailabilityZone: AVAILABILITY_ZONE,
    InstanceType: INSTANCE_TYPE,
    Image: spec.image,
    CpuMilli: spec.cpuMilli,
    MemoryMB: spec.memoryMB,
    Metadata: { ...spec.metadata },
    Pending: record.status === 'Starting',
    AssignStatus: ASSIGN_STATUS,
    SessionId: spec.sessionId,
    RevisionNumber: 1,
    ErrorCode: record.errorCode,
    ErrorMessage: record.errorMessage,
    EBSVolumes: [],
    Sidecars: [],
  };
}

export function expireAtView(record: SandboxRecord): string {
  return iso(record.expireAt);
}
