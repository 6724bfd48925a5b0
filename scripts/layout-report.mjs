#!/usr/bin/env node
/**
 * `node scripts/layout-report.mjs [--json]`: the figures issue 25 (the renovation) is measured by — source lines per
 * package and their share, exported names per package entry, import circles between modules, test-only lines each
 * package's build compiles from src, files over 400 lines, and lines over 120 characters. Read-only.
 */
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PACKAGES = join(ROOT, 'packages');
const TEST_FILE = /\.test\.ts$/;
// Test kits: whatever only tests import (the conventions this repository has used for them).
const KIT_PATH =
  /(^|\/)(testing|test-kit|swerex-conformance|scripted-policy)(\/|\.ts$)|wire-test-server\.ts$|tool-bundle-harness\.ts$|test-sink\.ts$/;

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (path.endsWith('.ts')) out.push(path);
  }
  return out;
}

const lines = (file) => readFileSync(file, 'utf8').split('\n');
const packages = readdirSync(PACKAGES).filter((name) => existsSync(join(PACKAGES, name, 'src')));
const shipped = (pkg) => pkg !== 'test-kit';

const perPackage = {};
for (const pkg of packages) {
  const files = walk(join(PACKAGES, pkg, 'src'));
  const product = files.filter((file) => !TEST_FILE.test(file) && !KIT_PATH.test(relative(PACKAGES, file)));
  perPackage[pkg] = { files, product, lines: product.reduce((sum, file) => sum + lines(file).length, 0) };
}
const totalLines = Object.entries(perPackage)
  .filter(([pkg]) => shipped(pkg))
  .reduce((sum, [, p]) => sum + p.lines, 0);

const entries = packages.map((pkg) => join(PACKAGES, pkg, 'src', 'index.ts')).filter((file) => existsSync(file));
const program = ts.createProgram(entries, {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2023,
  noEmit: true,
  skipLibCheck: true,
});
const checker = program.getTypeChecker();

/** Names each package's entry exports, by the type checker (re-exports included). */
function exportedNames(pkg) {
  const source = program.getSourceFile(join(PACKAGES, pkg, 'src', 'index.ts'));
  const symbol = source && checker.getSymbolAtLocation(source);
  return symbol ? checker.getExportsOfModule(symbol).length : 0;
}

/** Lines of test files and of test kits that each package's build tsconfig compiles from src. */
function testLinesCompiled(pkg) {
  const config = join(PACKAGES, pkg, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    config,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (!parsed || !shipped(pkg)) return { tests: 0, kits: 0 };
  const inSrc = parsed.fileNames.filter((file) => file.includes('/src/'));
  const count = (files) => files.reduce((sum, file) => sum + lines(file).length, 0);
  return {
    tests: count(inSrc.filter((file) => TEST_FILE.test(file))),
    kits: count(inSrc.filter((file) => !TEST_FILE.test(file) && KIT_PATH.test(relative(PACKAGES, file)))),
  };
}

/** Strongly connected components of the relative-import graph over every package's product files. */
function importCircles() {
  const graph = new Map();
  const product = Object.values(perPackage).flatMap((p) => p.product);
  const known = new Set(product);
  for (const file of product) {
    const edges = [];
    const source = readFileSync(file, 'utf8');
    // Type-only imports count: a circle of types is still a circle a reader has to untangle.
    for (const match of source.matchAll(/^(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'/gm)) {
      const target = resolve(dirname(file), match[1].replace(/\.js$/, '.ts'));
      if (known.has(target)) edges.push(target);
    }
    graph.set(file, edges);
  }
  let index = 0;
  const stack = [];
  const meta = new Map();
  const circles = [];
  const connect = (node) => {
    meta.set(node, { index, low: index, onStack: true });
    index += 1;
    stack.push(node);
    for (const next of graph.get(node)) {
      if (!meta.has(next)) {
        connect(next);
        meta.get(node).low = Math.min(meta.get(node).low, meta.get(next).low);
      } else if (meta.get(next).onStack) meta.get(node).low = Math.min(meta.get(node).low, meta.get(next).index);
    }
    if (meta.get(node).low === meta.get(node).index) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        meta.get(member).onStack = false;
        component.push(relative(ROOT, member));
      } while (member !== node);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!meta.has(node)) connect(node);
  return circles;
}

const productFiles = Object.entries(perPackage)
  .filter(([pkg]) => shipped(pkg))
  .flatMap(([, p]) => p.product);
const report = {
  packages: Object.fromEntries(
    Object.entries(perPackage).map(([pkg, p]) => [
      pkg,
      {
        lines: p.lines,
        share: shipped(pkg) ? Number((p.lines / totalLines).toFixed(3)) : null,
        exported_names: exportedNames(pkg),
        test_lines_compiled: testLinesCompiled(pkg),
      },
    ]),
  ),
  total_lines: totalLines,
  import_circles: importCircles(),
  files_over_400_lines: productFiles.filter((file) => lines(file).length > 400).map((file) => relative(ROOT, file)),
  long_lines: (() => {
    const all = productFiles.flatMap((file) => lines(file));
    return {
      over_120: all.filter((line) => line.length > 120).length,
      over_200: all.filter((line) => line.length > 200).length,
      of: all.length,
    };
  })(),
};

if (process.argv.includes('--json')) console.log(JSON.stringify(report));
else {
  for (const [pkg, p] of Object.entries(report.packages)) {
    console.log(
      `${pkg.padEnd(14)} ${String(p.lines).padStart(6)} lines ${p.share === null ? '  (test kit)' : `${(p.share * 100).toFixed(1).padStart(5)} %`}  ${String(p.exported_names).padStart(4)} exported  compiled from src: ${p.test_lines_compiled.kits} kit + ${p.test_lines_compiled.tests} test lines`,
    );
  }
  console.log(`import circles: ${report.import_circles.length}`);
  for (const circle of report.import_circles) console.log(`  ${circle.join(' ↔ ')}`);
  console.log(`files over 400 lines: ${report.files_over_400_lines.length}`);
  for (const file of report.files_over_400_lines) console.log(`  ${file}`);
  const { over_120, over_200, of } = report.long_lines;
  console.log(
    `lines over 120 characters: ${over_120} of ${of} (${((over_120 / of) * 100).toFixed(1)} %), over 200: ${over_200}`,
  );
}
