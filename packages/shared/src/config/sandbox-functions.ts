/**
 * VEFAAS_FUNCTIONS: more sandbox applications besides VEFAAS_FUNCTION_ID (other regions or accounts' quota),
 * as a JSON list. Each entry: `{"id": "shanghai", "function_id": "…", "route": "https://…", "weight": 1,
 * "region": "cn-shanghai", "endpoint": "https://…", "create_rate": 8}` (`weight`, `region`, `endpoint`,
 * `create_rate` optional; region and endpoint default to VEFAAS_REGION / VEFAAS_ENDPOINT). The key pair is
 * VEFAAS_ACCESS_KEY / VEFAAS_SECRET_KEY for all of them.
 */
import { z } from 'zod';

const HTTP_URL = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'must be an http:// or https:// URL')
  .transform((u) => u.replace(/\/+$/, ''));

const EntrySchema = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/, 'use letters, digits and . _ - only')
    .refine((id) => id !== 'default', '"default" names VEFAAS_FUNCTION_ID'),
  function_id: z.string().min(1),
  route: HTTP_URL,
  weight: z.number().positive().optional(),
  region: z.string().min(1).optional(),
  endpoint: HTTP_URL.optional(),
  create_rate: z.number().positive().optional(),
});

export interface SandboxFunction {
  id: string;
  functionId: string;
  functionRoute: string;
  weight: number;
  region: string | undefined;
  endpoint: string | undefined;
  createRate: number | undefined;
}

/** Parses the list; throws an Error whose message says which entry and field is wrong. */
export function parseSandboxFunctions(text: string): SandboxFunction[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error('is not JSON; give a list such as [{"id":"shanghai","function_id":"…","route":"https://…"}]');
  }
  const parsed = z.array(EntrySchema).min(1).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `[${issue.path.join('].')}` : 'the list';
    throw new Error(`${where}: ${issue?.message ?? 'invalid'}`);
  }
  const ids = new Set<string>();
  return parsed.data.map((entry, i) => {
    if (ids.has(entry.id)) throw new Error(`[${i}].id: "${entry.id}" is given twice`);
    ids.add(entry.id);
    return {
      id: entry.id,
      functionId: entry.function_id,
      functionRoute: entry.route,
      weight: entry.weight ?? 1,
      region: entry.region,
      endpoint: entry.endpoint,
      createRate: entry.create_rate,
    };
  });
}
