/** Types of scripts/preflight.mjs (plain JavaScript: it runs before dependencies are installed). */
export type Purpose = 'demo' | 'test';
export interface SystemNeed {
  command: string;
  pkg: string;
  unlessEnv?: string;
  /** Where it must be (an absolute path), when being on PATH is not enough. */
  at?: string;
}
export declare const NEEDS: Record<Purpose, SystemNeed[]>;
export declare function onPath(command: string, path?: string): boolean;
export declare function present(commandOrPath: string): boolean;
export declare function missingPackages(
  purpose: Purpose,
  options?: { has?: (commandOrPath: string) => boolean; env?: Record<string, string | undefined> },
): string[];
export declare function installPlan(
  packages: string[],
  context: { isRoot: boolean; canSudo: boolean; hasAptGet: boolean },
): { run?: string[][]; tell?: string };
export interface LockFile {
  packages?: Record<string, { version?: string; link?: boolean; optional?: boolean; peer?: boolean }>;
}
export declare function dependencyState(
  lock: LockFile,
  installed: LockFile | undefined,
): 'missing' | 'stale' | 'current';
export declare function main(purpose: string): number;
