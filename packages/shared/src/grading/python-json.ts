/**
 * `json.dumps(value, indent=N)` as Python writes it, so report.json and run summaries are byte-compatible
 * with the harness: same indentation and `": "` separator as JSON.stringify, plus `ensure_ascii` (every
 * non-ASCII UTF-16 unit escaped as \uXXXX).
 */
export function toPythonJson(value: unknown, indent = 4): string {
  return JSON.stringify(value, null, indent).replace(
    /[\u0080-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
