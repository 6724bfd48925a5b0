/**
 * Real sandboxes: one process tree per sandbox (bubblewrap, or no isolation when explicitly chosen) running the
 * SWE-ReX server on a unix socket. The gateway talks to it through one keep-alive undici Client per sandbox.
 */
import { Client } from 'undici';
import type { CgroupOptions } from '../sandbox/cgroups/sandbox-cgroups.js';
import {
  type ExitInfo,
  type InstanceLaunch,
  LaunchError,
  type RunningInstance,
  type SandboxBackend,
} from './backend.js';

const SECOND = 1000;

/** What the sandbox runtime (src/sandbox/) provides; injected so this file does not depend on its layout. */
export interface SandboxRuntime {
  launchSandbox(launch: {
    sandboxId: string;
    command: string;
    imageDir: string | null;
    envs: Record<string, string>;
    memoryMB: number;
    cpuMilli: number;
    network: boolean;
    isolation: 'bwrap' | 'none';
    stateRoot: string;
    diskMB?: number;
    maxProcesses?: number;
    cgroup?: CgroupOptions;
  }): Promise<{
    sandboxId: string;
    socketPath: string;
    authToken: string;
    pid: number;
    exited: Promise<{ code: number | null; signal: string | null }>;
    kill(): Promise<void>;
  }>;
  resolveImage(image: string, imagesDir: string): string | Promise<string>;
}

export interface ProcessBackendOptions {
  runtime: SandboxRuntime;
  isolation: 'bwrap' | 'none';
  imagesDir: string | null;
  stateRoot: string;
  network: boolean;
  diskMB?: number;
  maxProcesses?: number;
  cgroup?: CgroupOptions;
  /** Per-request timeout of the per-sandbox client (the gateway's request timeout). */
  requestTimeoutMs: number;
}

export class ProcessBackend implements SandboxBackend {
  readonly kind: 'bwrap' | 'none';

  constructor(private readonly options: ProcessBackendOptions) {
    this.kind = options.isolation;
  }

  async launch(launch: InstanceLaunch): Promise<RunningInstance> {
    const { runtime, imagesDir } = this.options;
    let imageDir: string | null = null;
    if (launch.image !== null) {
      // `file:/abs/dir` images need no images directory; named images do.
      if (imagesDir === null && !launch.image.startsWith('file:')) {
        throw new LaunchError(`image ${launch.image} is not available: no images directory configured`);
      }
      try {
        imageDir = await runtime.resolveImage(launch.image, imagesDir ?? '/nonexistent');
      } catch (err) {
        // resolveImage's message already names the image and says why.
        throw new LaunchError((err as Error).message);
      }
    }
    const sandbox = await runtime.launchSandbox({
      sandboxId: launch.sandboxId,
      command: launch.command,
      imageDir,
      envs: launch.envs,
      memoryMB: launch.memoryMB,
      cpuMilli: launch.cpuMilli,
      network: this.options.network,
      isolation: this.options.isolation,
      stateRoot: this.options.stateRoot,
      ...(this.options.diskMB === undefined ? {} : { diskMB: this.options.diskMB }),
      ...(this.options.maxProcesses === undefined ? {} : { maxProcesses: this.options.maxProcesses }),
      ...(this.options.cgroup === undefined ? {} : { cgroup: this.options.cgroup }),
    });
    const client = new Client('http://localhost', {
      socketPath: sandbox.socketPath,
      headersTimeout: this.options.requestTimeoutMs,
      bodyTimeout: this.options.requestTimeoutMs,
      keepAliveTimeout: 30 * SECOND,
    });
    const exited: Promise<ExitInfo> = sandbox.exited.then((exit) => {
      void client.destroy().catch(() => undefined);
      return exit;
    });
    let killing: Promise<void> | null = null;
    return {
      pid: sandbox.pid,
      target: { kind: 'socket', client },
      exited,
      isAlive: () => probeAlive(client, sandbox.authToken),
      kill: () => {
        killing ??= sandbox.kill().finally(() => void client.destroy().catch(() => undefined));
        return killing;
      },
    };
  }
}

async function probeAlive(client: Client, authToken: string): Promise<boolean> {
  try {
    const response = await client.request({
      method: 'GET',
      path: '/is_alive',
      headers: authToken === '' ? {} : { 'x-api-key': authToken },
      headersTimeout: 2 * SECOND,
      bodyTimeout: 2 * SECOND,
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) return false;
    return (JSON.parse(text) as { is_alive?: unknown }).is_alive === true;
  } catch {
    return false;
  }
}
