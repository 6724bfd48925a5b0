/**
 * SWE-bench's post-hoc triage of evaluations that did not resolve (`swebench/harness/infra_failure.py`, issue #586):
 * a log signature says whether the environment broke rather than the patch. Advisory only: a flagged instance
 * stays unresolved or an error, so the run's denominator does not move. The table below is the harness's, in its
 * order (the first signature that matches wins), matched line-wise (`re.MULTILINE`).
 */
export type InfraFailureTier = 'environment' | 'ambiguous';

export interface InfraFailure {
  reason: string;
  tier: InfraFailureTier;
}

const SIGNATURES: ReadonlyArray<{ reason: string; tier: InfraFailureTier; pattern: RegExp }> = [
  { reason: 'browser_launch_failed', tier: 'environment', pattern: /Failed to launch|Failed to connect to the bus/m },
  {
    reason: 'display_unavailable',
    tier: 'environment',
    pattern: /cannot open display|Missing X server|unable to open X display/m,
  },
  { reason: 'out_of_memory', tier: 'environment', pattern: /Cannot allocate memory|OutOfMemoryError|^Killed$/m },
  {
    reason: 'container_unavailable',
    tier: 'environment',
    pattern: /Error response from daemon|Cannot connect to the Docker daemon/m,
  },
  {
    reason: 'network_unreachable',
    tier: 'environment',
    pattern: /Could not resolve host|Temporary failure in name resolution/m,
  },
  { reason: 'missing_module', tier: 'ambiguous', pattern: /Cannot find module|MODULE_NOT_FOUND|ModuleNotFoundError/m },
  { reason: 'no_tests_collected', tier: 'ambiguous', pattern: /no tests ran|collected 0 items/m },
  { reason: 'tests_timed_out', tier: 'ambiguous', pattern: /Timeout error: \d+ seconds exceeded/m },
];

/** The first matching signature of `text` (the harness joins test_output.txt and run_instance.log with "\n"). */
export function classifyInfraFailure(text: string): InfraFailure | undefined {
  if (text === '') return undefined;
  for (const { reason, tier, pattern } of SIGNATURES) if (pattern.test(text)) return { reason, tier };
  return undefined;
}
