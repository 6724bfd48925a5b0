/**
 * veFaaS control-plane wire types (Version 2024-06-06), PascalCase exactly as sent and received
 * (vefaas-api.md §1.1, §1.3). Result fields the spec does not guarantee are optional; string unions stay open
 * because the platform may add values.
 */

export const VEFAAS_API_VERSION = '2024-06-06';

export type VefaasAction = 'CreateSandbox' | 'DescribeSandbox' | 'KillSandbox' | 'ListSandboxes' | 'SetSandboxTimeout';

/** Documented values; others may appear. */
export type SandboxStatus = 'Starting' | 'Ready' | 'Failed' | 'Terminating' | (string & {});
/** `minute` (default) and `second` are the values seen in use. */
export type TimeoutUnit = 'minute' | 'second' | (string & {});

export interface KeyValue {
  Key: string;
  Value: string;
}

export interface InstanceImageInfo {
  /** Pre-cached image URL. When set, Command is required (400 `Command is empty`). */
  Image?: string;
  Command?: string;
  Port?: number;
  /** Pre-cached image id. */
  Id?: string;
}

export interface ResponseMetadata {
  RequestId?: string;
  Action?: string;
  Version?: string;
  Service?: string;
  Region?: string;
  Error?: { Code?: string; CodeN?: number; Message?: string };
}

export interface ResponseEnvelope<T> {
  ResponseMetadata?: ResponseMetadata;
  Result?: T;
}

export interface CreateSandboxRequest {
  FunctionId: string;
  /** Instance lifetime, in TimeoutUnit (minutes by default; 3–1440 min, default 60). */
  Timeout?: number;
  TimeoutUnit?: TimeoutUnit;
  /** Omit to inherit the released application's image, command and port. */
  InstanceImageInfo?: InstanceImageInfo;
  /** 250–16000, default 1000. */
  CpuMilli?: number;
  /** 512–131072, default 2048. */
  MemoryMB?: number;
  /** 10–1000, default 100. */
  MaxConcurrency?: number;
  /** Per-request timeout in seconds, 1–900, default 30. */
  RequestTimeout?: number;
  Envs?: KeyValue[];
  /** Labels, exact-match filterable in ListSandboxes. */
  Metadata?: Record<string, string>;
  SessionId?: string;
  Async?: boolean;
  InstanceTosMountConfig?: Record<string, unknown>;
  InstanceNasMountConfig?: Record<string, unknown>;
  EmptyDirVolume?: Record<string, unknown>;
  EBSVolumes?: Array<Record<string, unknown>>;
  Sidecars?: Array<Record<string, unknown>>;
  RoleChainTrn?: string[];
  SnapshotId?: string;
}

export interface CreateSandboxResult {
  SandboxId: string;
  AssignStatus: string;
}

export interface DescribeSandboxRequest {
  FunctionId: string;
  SandboxId: string;
  Metadata?: Record<string, string>;
}

export interface DescribeSandboxResult {
  /** The sandbox id (named `Id` here, not `SandboxId`). */
  Id: string;
  FunctionId: string;
  Status: SandboxStatus;
  /** e.g. function_initialize_failed; empty when healthy. */
  ErrorCode?: string;
  ErrorMessage?: string;
  CreatedAt?: string;
  ExpireAt?: string;
  AvailabilityZone?: string;
  CpuMilli?: number;
  MemoryMB?: number;
  MaxConcurrency?: number;
  RequestTimeout?: number;
  RevisionNumber?: number;
  InstanceType?: string;
  Pending?: boolean;
  AssignStatus?: string;
  SessionId?: string;
  Envs?: KeyValue[];
  ImageInfo?: InstanceImageInfo;
  /** Metadata as a list here, but as a map in ListSandboxes. */
  MetadataList?: Array<{ MetaKey: string; MetaValue: string }>;
  InstanceTosMountConfig?: Record<string, unknown>;
  InstanceNasMountConfig?: Record<string, unknown>;
  Sidecars?: Array<Record<string, unknown>>;
}

export interface ListSandboxesRequest {
  FunctionId: string;
  SandboxId?: string;
  /** Exact-match label filter. */
  Metadata?: Record<string, string>;
  ImageUrl?: string;
  /** Rejected with InvalidParameter in practice; filter status client-side instead. */
  Status?: SandboxStatus;
  Filters?: Array<{ Name: string; Values: string[] }>;
  /** 1-based. */
  PageNumber?: number;
  PageSize?: number;
}

export interface SandboxListItem {
  Id: string;
  FunctionId: string;
  Status: SandboxStatus;
  CreatedAt?: string;
  ExpireAt?: string;
  PausedAt?: string;
  AvailabilityZone?: string;
  InstanceType?: string;
  Image?: string;
  CpuMilli?: number;
  MemoryMB?: number;
  Metadata?: Record<string, string>;
  Pending?: boolean;
  AssignStatus?: string;
  SessionId?: string;
  RevisionNumber?: number;
  ErrorCode?: string;
  ErrorMessage?: string;
  EBSVolumes?: Array<Record<string, unknown>>;
  Sidecars?: Array<Record<string, unknown>>;
}

export interface ListSandboxesResult {
  Sandboxes: SandboxListItem[];
  Total: number;
  StatusCount?: Record<string, number>;
  RevisionCount?: Record<string, unknown>;
}

export interface KillSandboxRequest {
  FunctionId: string;
  SandboxId: string;
}

/** Kill is asynchronous: the sandbox reports Terminating, then Describe returns ResourceNotFound. */
export type KillSandboxResult = Record<string, never>;

export interface SetSandboxTimeoutRequest {
  FunctionId: string;
  SandboxId: string;
  Timeout: number;
  TimeoutUnit?: TimeoutUnit;
}

export interface SetSandboxTimeoutResult {
  ExpireAt: string;
  FunctionId: string;
  SandboxId: string;
}
