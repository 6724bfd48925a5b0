// `@rollout-fleet/api/dashboard`: the dashboard (bull-board) apart from the package entry, so a
// `rollout-fleet api` process never loads what only `rollout-fleet dashboard` serves.
export { startDashboard } from './start-dashboard.js';
export type { Dashboard, StartDashboardOptions } from './start-dashboard.js';
