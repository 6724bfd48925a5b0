/**
 * What to do about each failure the doctor can see, in one place: a RolloutError's code (and the control
 * plane's own error code in its details) mapped to the fix a person can act on.
 */
import { coerceError, type RolloutError } from '@rollout-fleet/shared';
import { CheckFailure } from './doctor-types.js';

export interface FixContext {
  endpoint: string;
  route: string;
  functionId: string;
  region: string;
  image: string;
  startupTimeoutS: number;
}

const HEALTH_CHECK_FIX =
  'the start command did not bring up a server on port 8000: it must run SWE-ReX on 0.0.0.0:8000 with the token (docs/vefaas.md, "Start command")';
const CLOCK_FIX =
  "sync this machine's clock (e.g. `sudo timedatectl set-ntp true`, or `chronyc makestep`) and run doctor again";

function apiCodeOf(err: RolloutError): string | undefined {
  const code = err.details.apiCode;
  return typeof code === 'string' ? code : undefined;
}

/** The credentials check: a signed, read-only ListSandboxes. */
export function credentialsFailure(thrown: unknown, c: FixContext): CheckFailure {
  const err = coerceError(thrown);
  switch (err.code) {
    case 'VEFAAS_NETWORK':
    case 'VEFAAS_TIMEOUT':
      return new CheckFailure(
        err.message,
        `check VEFAAS_ENDPOINT (${c.endpoint}; Volcengine https://open.volcengineapi.com, BytePlus https://open.byteplusapi.com) and this machine's network or proxy`,
        true,
      );
    case 'VEFAAS_NOT_FOUND':
      return new CheckFailure(
        err.message,
        `VEFAAS_FUNCTION_ID ${c.functionId} is not a sandbox application in ${c.region}: copy the application ID from its page, and set VEFAAS_REGION to the region it lives in`,
      );
    case 'VEFAAS_AUTH':
      switch (apiCodeOf(err)) {
        case 'InvalidAccessKey':
          return new CheckFailure(
            err.message,
            'VEFAAS_ACCESS_KEY is not an active access key: copy the Access Key ID from the console (Access keys), and check it is enabled',
          );
        case 'SignatureDoesNotMatch':
        case 'InvalidCredential':
          return new CheckFailure(
            err.message,
            `VEFAAS_SECRET_KEY does not belong to VEFAAS_ACCESS_KEY, or VEFAAS_REGION (${c.region}) is not the function's region: copy the Secret Access Key of that key pair`,
          );
        case 'InvalidTimestamp':
          return new CheckFailure(
            err.message,
            `the control plane refused the request's time: this machine's clock is off (see the clock line); ${CLOCK_FIX}`,
          );
        case 'AccessDenied':
          return new CheckFailure(
            err.message,
            'the key pair may not call veFaaS: give its user a veFaaS policy (e.g. VEFAASFullAccess) in the console',
          );
        default:
          return new CheckFailure(err.message, 'check VEFAAS_ACCESS_KEY, VEFAAS_SECRET_KEY and VEFAAS_REGION');
      }
    default:
      return new CheckFailure(err.message, err.hint);
  }
}

/** The sandbox start: CreateSandbox, then DescribeSandbox until Ready. */
export function startFailure(thrown: unknown, c: FixContext): CheckFailure {
  if (thrown instanceof CheckFailure) return thrown;
  const err = coerceError(thrown);
  // A CreateSandbox that waits for the start answers this when the health check never passed: not a 5xx to retry.
  if (apiCodeOf(err) === 'UserTimeoutError')
    return new CheckFailure(err.message, `${HEALTH_CHECK_FIX}; a slow image needs a longer start timeout`);
  switch (err.code) {
    case 'VEFAAS_THROTTLED':
      return new CheckFailure(
        err.message,
        'the account is at its CreateSandbox rate or instance quota: wait and retry, or ask for a higher quota',
      );
    case 'VEFAAS_BAD_REQUEST':
      return new CheckFailure(
        err.message,
        `CreateSandbox refused the request: check the image (${c.image}) and the start command`,
      );
    case 'VEFAAS_NETWORK':
    case 'VEFAAS_TIMEOUT':
      return new CheckFailure(
        err.message,
        'the control plane stopped answering: check the network and run doctor again',
        true,
      );
    default:
      return new CheckFailure(err.message, err.hint);
  }
}

/** Why a sandbox that reported Failed did not start, by the platform's ErrorCode. */
export function failedSandboxFix(errorCode: string | undefined, c: FixContext): string {
  if (errorCode === 'function_health_check_failed') return HEALTH_CHECK_FIX;
  return `the image (${c.image}) could not be pulled or its start command failed: check the image exists where veFaaS pulls from and that it contains a SWE-ReX server (docs/vefaas.md, "Sandbox images")`;
}

/** SWE-ReX through the route, pinned to the sandbox. */
export function aliveFailure(thrown: unknown, c: FixContext): CheckFailure {
  if (thrown instanceof CheckFailure) return thrown;
  const err = coerceError(thrown);
  switch (err.code) {
    case 'SWEREX_AUTH':
      return new CheckFailure(
        err.message,
        'SWE-ReX refused the token: the start command must pass the token the worker generates (keep {auth_token}, or a trailing token argument, in it)',
      );
    case 'GATEWAY_AUTH':
      return new CheckFailure(
        err.message,
        "the gateway refused the request: set VEFAAS_GATEWAY_KEY to the route's key (Key-Auth plugin), or fix it",
      );
    case 'SANDBOX_START_TIMEOUT':
      return new CheckFailure(
        err.message,
        `SWE-ReX did not answer through the route within ${c.startupTimeoutS} s: the server must listen on 0.0.0.0:8000 and the application's port must be 8000; a slow image needs --startup-timeout-s`,
      );
    default:
      return new CheckFailure(err.message, err.hint);
  }
}

export function routeDoesNotReachFix(c: FixContext): string {
  return `the route answers, but not with this sandbox: VEFAAS_FUNCTION_ROUTE (${c.route}) must be the access address of application ${c.functionId} (with its path), as shown on the application page`;
}
