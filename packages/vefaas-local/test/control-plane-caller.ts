/** Test helper: signed raw calls to a vefaas-local control plane, returning status and parsed envelope. */
import { signRequest } from '@rollout-fleet/sandbox';
import { request } from 'undici';

export interface Envelope {
  ResponseMetadata: {
    RequestId: string;
    Action: string;
    Version: string;
    Service: string;
    Region: string;
    Error?: { Code: string; CodeN?: number; Message: string };
  };
  Result?: Record<string, unknown>;
}

export interface CallTarget {
  controlPlaneUrl: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface CallOptions {
  version?: string;
  /** Send no Authorization at all. */
  unsigned?: boolean;
  /** Sign with these credentials instead of the host's. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Sign one body, send another. */
  tamperBody?: string;
  signal?: AbortSignal;
}

export async function callAction(
  target: CallTarget,
  action: string,
  body: unknown,
  options: CallOptions = {},
): Promise<{ status: number; envelope: Envelope }> {
  const url = new URL(target.controlPlaneUrl);
  url.pathname = '/';
  url.search = `Action=${action}&Version=${options.version ?? '2024-06-06'}`;
  const payload = JSON.stringify(body);
  const headers = options.unsigned
    ? { 'Content-Type': 'application/json' }
    : signRequest(
        {
          method: 'POST',
          url,
          headers: { 'Content-Type': 'application/json' },
          body: payload,
          region: 'cn-beijing',
          service: 'vefaas',
        },
        options.credentials ?? { accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey },
      );
  const response = await request(url, {
    method: 'POST',
    headers,
    body: options.tamperBody ?? payload,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { status: response.statusCode, envelope: (await response.body.json()) as Envelope };
}

/** Calls an action that must succeed and returns its Result. */
export async function okResult<T = Record<string, unknown>>(
  target: CallTarget,
  action: string,
  body: unknown,
): Promise<T> {
  const { status, envelope } = await callAction(target, action, body);
  if (status !== 200 || envelope.Result === undefined) {
    throw new Error(`${action} failed: ${status} ${JSON.stringify(envelope.ResponseMetadata.Error)}`);
  }
  return envelope.Result as T;
}

export const swerexCommand = (token: string): string => `python3 -m swerex.server --auth-token ${token}`;
