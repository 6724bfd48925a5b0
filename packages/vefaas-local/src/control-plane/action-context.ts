import type { FaultController } from '../faults/fault-controller.js';
import type { SandboxManager } from '../registry/sandbox-manager.js';
import type { Body } from './params.js';

export interface FunctionDefaults {
  /** Image used when CreateSandbox omits InstanceImageInfo ('' = the host root filesystem). */
  image: string;
  /** Command used when CreateSandbox omits InstanceImageInfo ('' = none: CreateSandbox then needs one). */
  command: string;
  port: number;
}

export interface ControlPlaneSettings {
  functionId: string;
  /**
   * 'started' (default): CreateSandbox answers once the sandbox is Ready or Failed (bounded by the cold-start
   * timeout), as the real service appears to. 'immediately': it answers while the sandbox is still Starting.
   */
  createReturns: 'started' | 'immediately';
  /** Answer InvalidParameter to a ListSandboxes `Status` filter, as reported for the real service. */
  rejectStatusFilter: boolean;
  /** Smallest accepted lifetime (the real minimum is 3 minutes). */
  minLifetimeMs: number;
  functionDefaults: FunctionDefaults;
}

export interface ActionContext {
  manager: SandboxManager;
  faults: FaultController;
  settings: ControlPlaneSettings;
}

export type ActionHandler = (body: Body, context: ActionContext) => Promise<unknown>;
