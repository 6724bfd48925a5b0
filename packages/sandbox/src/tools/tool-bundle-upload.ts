/**
 * The tool bundle's upload, prepared ahead: every sandbox gets the same zipped bundle (installToolBundle sends
 * exactly TOOL_BUNDLE_UPLOAD, and upload-form.ts keeps its zip and encoded body per process). The first one costs
 * a process ~0.2–0.3 s of CPU with its event loop blocked (zipSync); a worker pays it before it takes jobs
 * rather than in the middle of its first sandboxes' set-ups.
 */
import { buildUploadForm, type UploadRequest } from '../swerex/upload-form.js';
import { TOOL_BUNDLE_DIR, TOOL_INSTALL_ROOT } from './bundle-paths.js';

/** What installToolBundle uploads (tool-bundle-upload.test.ts holds the two together). */
export const TOOL_BUNDLE_UPLOAD: Readonly<UploadRequest> = {
  source: TOOL_BUNDLE_DIR,
  targetPath: TOOL_INSTALL_ROOT,
  unzip: true,
  reuseZip: true,
};

/** Zips and encodes the tool bundle's upload now; later uploads of it reuse the bytes. */
export async function prepareToolBundleUpload(): Promise<void> {
  await buildUploadForm(TOOL_BUNDLE_UPLOAD);
}
