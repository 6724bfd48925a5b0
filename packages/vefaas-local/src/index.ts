/** The local veFaaS emulator (control plane, gateway, bubblewrap sandboxes). Only names used outside the package. */
export { startVefaasLocal } from './host.js';
export type { VefaasLocalHandle } from './host.js';
export type { Isolation as HostIsolation, VefaasLocalOptions } from './host-options.js';
export { FaultController } from './faults/fault-controller.js';
export { parseFaultConfig } from './faults/fault-config.js';
export type { FaultConfig } from './faults/fault-config.js';
export { checkIsolation, imageTemplateName, isSwerexAlive, launchSandbox, resolveImage } from './sandbox/index.js';
export type { SandboxProcess } from './sandbox/index.js';
export { ImageImportError, importImage, missingImportTools } from './images/import-image.js';
export type { ImportProgress, ImportResult } from './images/import-image.js';
export { importImagesIn, pendingImports } from './images/import-dir.js';
export { listImportedImages, readImportedImage } from './images/imported-image.js';
export type { ImportedImage } from './images/imported-image.js';
