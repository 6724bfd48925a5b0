/**
 * Which tests an eval script runs and which files it resets, from the instance's test_patch
 * (SWE-bench v4.1.0 `test_spec/python.py`: `get_test_directives`; `utils.get_modified_files`).
 */

/** SWE-bench `NON_TEST_EXTS`; note `csv` without the dot, as in the harness. */
const NON_TEST_EXTS = ['.json', '.png', 'csv', '.txt', '.md', '.jpg', '.jpeg', '.pkl', '.yml', '.yaml', '.toml'];

// `diff --git a/.* b/(.*)`: greedy, so the last ` b/` on the line wins; Python `.` excludes only `\n`.
const DIFF_HEADER_RE = /diff --git a\/[^\n]* b\/([^\n]*)/g;

/** Test paths of `testPatch` as arguments of the test command; django gets dotted module names. */
export function testDirectives(testPatch: string, repo: string): string[] {
  const paths = [...testPatch.matchAll(DIFF_HEADER_RE)]
    .map((match) => match[1] ?? '')
    .filter((path) => !NON_TEST_EXTS.some((ext) => path.endsWith(ext)));
  if (repo !== 'django/django') return paths;
  return paths.map((path) => {
    let module = path.endsWith('.py') ? path.slice(0, -'.py'.length) : path;
    if (module.startsWith('tests/')) module = module.slice('tests/'.length);
    return module.replaceAll('/', '.');
  });
}

/** `--- a/x\t2024-01-01` → `a/x`: unidiff drops everything after a tab. */
function headerPath(line: string, prefix: string): string {
  return line.slice(prefix.length).split('\t')[0] ?? '';
}

interface FileHeader {
  source: string;
  target: string;
}

/** Counts down the lines of the hunk being read so that `--- x` inside a hunk is not taken for a header. */
class HunkCursor {
  private sourceLeft = 0;
  private targetLeft = 0;

  start(line: string): boolean {
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (!hunk) return false;
    this.sourceLeft = Number(hunk[1] ?? 1);
    this.targetLeft = Number(hunk[2] ?? 1);
    return true;
  }

  /** true when `line` belonged to the current hunk. */
  consume(line: string): boolean {
    if (this.sourceLeft <= 0 && this.targetLeft <= 0) return false;
    // Editors sometimes strip the lone space of an empty context line.
    if (line === '' || line.startsWith(' ')) {
      this.sourceLeft -= 1;
      this.targetLeft -= 1;
    } else if (line.startsWith('-')) this.sourceLeft -= 1;
    else if (line.startsWith('+')) this.targetLeft -= 1;
    else if (!line.startsWith('\\')) {
      this.sourceLeft = 0;
      this.targetLeft = 0;
      return false;
    }
    return true;
  }
}

/**
 * Paths that exist before `patch` applies (unidiff `PatchedFile.path` of every file whose source is not
 * /dev/null): what `git checkout <base> <files>` may restore. New files are left out because they have no
 * version at the base commit.
 */
export function modifiedFiles(patch: string): string[] {
  const files: FileHeader[] = [];
  const hunk = new HunkCursor();
  let current: FileHeader | undefined;
  for (const line of patch.split('\n')) {
    if (hunk.consume(line) || hunk.start(line)) continue;
    const git = /^diff --git (\S+) (\S+)$/.exec(line);
    if (git) {
      current = { source: git[1] ?? '', target: git[2] ?? '' };
      files.push(current);
    } else if (line.startsWith('--- ')) {
      if (current === undefined) {
        // A plain unified diff without `diff --git` headers.
        current = { source: '', target: '' };
        files.push(current);
      }
      current.source = headerPath(line, '--- ');
    } else if (line.startsWith('+++ ') && current) {
      current.target = headerPath(line, '+++ ');
      current = undefined;
    } else if (current && line.startsWith('new file mode')) {
      current.source = '/dev/null';
    } else if (current && line.startsWith('deleted file mode')) {
      current.target = '/dev/null';
    }
  }
  return files.filter((file) => file.source !== '/dev/null').map(filePath);
}

function filePath({ source, target }: FileHeader): string {
  if (source.startsWith('a/') && (target.startsWith('b/') || target.includes('/dev/null'))) return source.slice(2);
  return source;
}
