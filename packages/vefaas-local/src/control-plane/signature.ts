/**
 * The shape of the V4 verifier the control plane calls (implemented in @rollout-fleet/shared, vefaas signing).
 * Kept as a narrow interface so the control plane can be tested with any verifier.
 */
export type SignatureFailureCode =
  | 'MissingAuthenticationToken'
  | 'InvalidAccessKey'
  | 'SignatureDoesNotMatch'
  | 'InvalidTimestamp'
  | 'InvalidAuthorization'
  | 'MissingSignature';

export interface SignedRequest {
  method: string;
  path: string;
  rawQuery: string;
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
  service: string;
}

export type SignatureCheck =
  | { ok: true; accessKeyId: string; region: string }
  | { ok: false; code: SignatureFailureCode; message: string };

export type SignatureVerifier = (request: SignedRequest) => SignatureCheck;
