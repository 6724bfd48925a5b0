/**
 * Emulated isolation: no process per sandbox, the SWE-ReX API is answered in-process (emulated-swerex.ts).
 * Thousands of sandboxes fit in one host, which is what fleet-scale benchmarks need.
 */
import { EmulatedSwerex } from '../emulated/emulated-swerex.js';
import {
  type ExitInfo,
  type InstanceLaunch,
  LaunchError,
  type RunningInstance,
  type SandboxBackend,
} from './backend.js';

export interface EmulatedBackendOptions {
  /** Images that "exist"; anything else fails with function_initialize_failed. Unset = every image exists. */
  knownImages?: readonly string[];
  /** Extracts the SWE-ReX token from the command (`--auth-token <t>`). */
  parseAuthToken: (command: string) => string;
}

export class EmulatedBackend implements SandboxBackend {
  readonly kind = 'emulated';

  constructor(private readonly options: EmulatedBackendOptions) {}

  async launch(launch: InstanceLaunch): Promise<RunningInstance> {
    const known = this.options.knownImages;
    if (launch.image !== null && known !== undefined && !known.includes(launch.image)) {
      throw new LaunchError(`image ${launch.image} is not available`);
    }
    const server = new EmulatedSwerex(this.options.parseAuthToken(launch.command));
    let markExited: (exit: ExitInfo) => void = () => undefined;
    const exited = new Promise<ExitInfo>((resolve) => {
      markExited = resolve;
    });
    let dead = false;
    return {
      pid: null,
      target: { kind: 'inline', handle: (request) => server.handle(request) },
      exited,
      isAlive: async () => !dead,
      kill: async () => {
        if (dead) return;
        dead = true;
        server.stop();
        markExited({ code: null, signal: 'SIGKILL' });
      },
    };
  }
}
