/**
 * Composes the retry policy around the control-plane transport. Every attempt is signed afresh, so a retry
 * after a long back-off still carries a current X-Date.
 *
 * CreateSandbox is retried on timeouts, network errors and 5xx like the official SDKs do; such an attempt may
 * have created a sandbox nobody holds. Put a Metadata label on creates so a reaper can find strays via
 * ListSandboxes (they also expire at their Timeout).
 */
import { VefaasClient, type CallPolicy, type VefaasClientOptions } from './control-plane-client.js';
import { withRetry, type RetryOptions } from './retry-policy.js';

export interface CreateVefaasClientOptions extends Omit<VefaasClientOptions, 'policy'> {
  /** Retry policy for every call; `false` calls once. @defaultValue DEFAULT_RETRY (3 retries, 300 ms … 30 s) */
  retry?: Omit<RetryOptions, 'signal'> | false;
}

export function retryPolicy(retry: Omit<RetryOptions, 'signal'> = {}): CallPolicy {
  return (call, attempt) => withRetry(attempt, call.signal ? { ...retry, signal: call.signal } : retry);
}

export function createVefaasClient(options: CreateVefaasClientOptions): VefaasClient {
  const { retry, ...rest } = options;
  return retry === false ? new VefaasClient(rest) : new VefaasClient({ ...rest, policy: retryPolicy(retry) });
}
