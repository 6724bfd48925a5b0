/**
 * What a results / groups cursor looks like: a Redis stream id (`<ms>-<seq>`, as printed by `results` and sent
 * by the API) or `0` for the start. Anything else is the user's input error, refused before Redis sees it
 * (Redis would answer "Invalid stream ID" deep inside a read).
 */
export const STREAM_CURSOR_PATTERN = /^(0|\d+-\d+)$/;

export const STREAM_CURSOR_HINT =
  'a cursor is a stream id such as 1721462400000-0 (or 0 for the start), as printed by an earlier read';

export function isStreamCursor(value: string): boolean {
  return STREAM_CURSOR_PATTERN.test(value);
}
