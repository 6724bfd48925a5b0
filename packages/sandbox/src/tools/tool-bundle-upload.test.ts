import { describe, expect, it, vi } from 'vitest';
import { installToolBundle } from '../agent-env/install-tools.js';
import type { SwerexClient } from '../swerex/swerex-client.js';
import type { UploadRequest } from '../swerex/upload-form.js';
import { buildUploadForm } from '../swerex/upload-form.js';
import { TOOL_BUNDLE_UPLOAD, prepareToolBundleUpload } from './tool-bundle-upload.js';

describe('the tool bundle upload prepared ahead', () => {
  it('is the very upload installToolBundle sends, so what is prepared is what sandboxes get', async () => {
    const uploads: UploadRequest[] = [];
    const swerex = {
      upload: vi.fn(async (request: UploadRequest) => void uploads.push(request)),
    } as unknown as SwerexClient;
    await installToolBundle({ swerex, names: ['execute_bash'], run: async () => '' });
    expect(uploads).toEqual([TOOL_BUNDLE_UPLOAD]);
  });

  it('leaves the encoded body ready: the next upload of the bundle reuses the same bytes', async () => {
    await prepareToolBundleUpload();
    const first = await buildUploadForm(TOOL_BUNDLE_UPLOAD);
    const second = await buildUploadForm({ ...TOOL_BUNDLE_UPLOAD });
    expect(first.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(second.body).toBe(first.body);
  });
});
