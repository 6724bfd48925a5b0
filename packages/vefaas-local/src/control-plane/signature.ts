/**
 * The V4 verifier the control plane calls: the shared verifier with this host's secrets bound in.
 * A narrow function type so the control plane can be tested with any verifier.
 */
import type { SignatureErrorCode, VerifySignatureInput, VerifySignatureResult } from '@rollout-fleet/sandbox';

export type SignatureFailureCode = SignatureErrorCode;
export type SignedRequest = VerifySignatureInput;
export type SignatureCheck = VerifySignatureResult;
export type SignatureVerifier = (request: SignedRequest) => SignatureCheck;
