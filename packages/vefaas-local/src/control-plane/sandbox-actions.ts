/**
 * Wire contract (vefaas-api.md §1.3): DescribeSandbox, ListSandboxes, KillSandbox, SetSandboxTimeout.
 * Unknown or removed sandbox → 404 ResourceNotFound `Sandbox not found`. ListSandboxes with `Status` →
 * InvalidParameter (configurable). SetSandboxTimeout counts the new lifetime from now (UNCERTAIN upstream).
 */
import type { SandboxRecord } from '../registry/sandbox-record.js';
import { SANDBOX_STATUSES } from '../registry/sandbox-record.js';
import type { ActionContext, ActionHandler } from './action-context.js';
import { invalidParameter, sandboxNotFound } from './envelope.js';
import { readLifetimeMs } from './lifetime.js';
import {
  type Body,
  optionalInt,
  optionalString,
  optionalStringMap,
  requireFunction,
  requiredString,
} from './params.js';
import { describeView, expireAtView, listItemView } from './views.js';

function findSandbox(body: Body, context: ActionContext): SandboxRecord {
  requireFunction(body, context.settings.functionId);
  const id = requiredString(body, 'SandboxId');
  const record = context.manager.get(id);
  if (record === undefined) throw sandboxNotFound();
  return record;
}

export const describeSandbox: ActionHandler = async (body, context) => describeView(findSandbox(body, context));

export const killSandbox: ActionHandler = async (body, context) => {
  const record = findSandbox(body, context);
  context.manager.kill(record, 'kill');
  return {};
};

export const setSandboxTimeout: ActionHandler = async (body, context) => {
  const record = findSandbox(body, context);
  const lifetimeMs = readLifetimeMs(body, { minLifetimeMs: context.settings.minLifetimeMs, required: true });
  if (lifetimeMs !== undefined && !record.terminating) context.manager.setLifetime(record, lifetimeMs);
  return { ExpireAt: expireAtView(record), FunctionId: record.functionId, SandboxId: record.id };
};

export const listSandboxes: ActionHandler = async (body, context) => {
  requireFunction(body, context.settings.functionId);
  const sandboxId = optionalString(body, 'SandboxId');
  const metadata = optionalStringMap(body, 'Metadata') ?? {};
  const imageUrl = optionalString(body, 'ImageUrl');
  const status = optionalString(body, 'Status');
  if (status !== undefined && context.settings.rejectStatusFilter) {
    throw invalidParameter('Status', 'filtering by status is not supported');
  }
  if (status !== undefined && !(SANDBOX_STATUSES as readonly string[]).includes(status)) {
    throw invalidParameter('Status', `must be one of ${SANDBOX_STATUSES.join(', ')}`);
  }
  const pageNumber = optionalInt(body, 'PageNumber', { min: 1, max: Number.MAX_SAFE_INTEGER }) ?? 1;
  const pageSize = optionalInt(body, 'PageSize', { min: 1, max: 100 }) ?? 10;

  // Oldest first, so paging is stable while new sandboxes arrive. `Filters` is accepted and ignored.
  const matching = context.manager
    .list()
    .filter((record) => sandboxId === undefined || record.id === sandboxId)
    .filter((record) => imageUrl === undefined || record.spec.image === imageUrl)
    .filter((record) => Object.entries(metadata).every(([key, value]) => record.spec.metadata[key] === value))
    .filter((record) => status === undefined || record.status === status)
    .sort((a, b) => a.createdAt - b.createdAt);

  const statusCount: Record<string, number> = {};
  for (const record of matching) statusCount[record.status] = (statusCount[record.status] ?? 0) + 1;
  const start = (pageNumber - 1) * pageSize;
  return {
    Sandboxes: matching.slice(start, start + pageSize).map(listItemView),
    Total: matching.length,
    StatusCount: statusCount,
    RevisionCount: { '1': matching.length },
  };
};
