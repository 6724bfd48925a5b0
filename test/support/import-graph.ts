/**
 * The import graph of the TypeScript sources (static imports and re-exports, type-only ones included, and
 * `import()` calls), with workspace package names resolved to their entry files, and its circles (strongly
 * connected components of more than one file, or a file importing itself). Read with the TypeScript parser, so
 * no extra tool is needed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';

export type ImportGraph = ReadonlyMap<string, readonly string[]>;

const SCOPE = '@rollout-fleet/';

/** Module specifiers a source imports (static, re-exports, `import()`). */
export function specifiersOf(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [first] = node.arguments;
      if (first !== undefined && ts.isStringLiteral(first)) found.push(first.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The graph over `files` (repository-relative paths); edges only to files of the set. */
export function importGraph(root: string, files: readonly string[]): ImportGraph {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = new Set<string>();
    for (const specifier of specifiersOf(file, readFileSync(join(root, file), 'utf8'))) {
      let target: string | undefined;
      if (specifier.startsWith('.')) {
        const base = normalize(join(dirname(file), specifier));
        target = [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')].find((candidate) =>
          known.has(candidate),
        );
      } else if (specifier.startsWith(SCOPE)) {
        const [name, ...rest] = specifier.slice(SCOPE.length).split('/');
        const entry = rest.length === 0 ? 'index.ts' : join(...rest, 'index.ts');
        target = join('packages', name ?? '', 'src', entry);
      }
      if (target !== undefined && known.has(target) && existsSync(join(root, target)))
        targets.add(relative('.', target));
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/** Circles of the graph (Tarjan's strongly connected components), each sorted, largest first. */
export function circlesOf(graph: ImportGraph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) circles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) connect(node);
  return circles.sort((a, b) => b.length - a.length);
}
