import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

/** The limits the project holds its library to (docs/architecture.md). */
export const MAX_FILE_LINES = 600;
export const MAX_FUNCTION_LINES = 150;

/** A file or function over its limit. `key` is stable across edits (no line number). */
export interface SizeOffender {
  /** `file` for a file, `file#name` for a function. */
  key: string;
  /** `file:line`, where a reader starts looking. */
  where: string;
  lines: number;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.spec.ts')) out.push(path);
  }
  return out;
}

/** Lines as `wc -l` counts them for a file that ends with a newline; a last line without one counts. */
export function lineCount(text: string): number {
  if (text.length === 0) return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration
  | ts.FunctionExpression
  | ts.ArrowFunction;

function isFunctionNode(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node)
  );
}

function nameText(name: ts.Node | undefined, source: ts.SourceFile): string | undefined {
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name)) return name.text;
  if (ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return name.getText(source);
}

/**
 * A readable name: the declaration's own name, else what it is assigned to (`const f = () =>`,
 * `{ handler: async () => }`), else `<anonymous>`; a method is named `Class.method`.
 */
function functionName(node: FunctionNode, source: ts.SourceFile): string {
  let own: string | undefined;
  if (ts.isConstructorDeclaration(node)) own = 'constructor';
  else if (!ts.isArrowFunction(node)) own = nameText(node.name, source);
  const parent = node.parent;
  if (!own) {
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) {
      own = nameText(parent.name, source);
    } else if (ts.isPropertyDeclaration(parent)) own = nameText(parent.name, source);
  }
  own ??= '<anonymous>';
  const owner = ts.isClassLike(parent) ? parent.name?.text : undefined;
  return owner ? `${owner}.${own}` : own;
}

/** Every function of one source text longer than `maxLines` (from its first token to its last). */
export function longFunctions(
  file: string,
  text: string,
  maxLines = MAX_FUNCTION_LINES,
): SizeOffender[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: SizeOffender[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunctionNode(node) && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > maxLines) {
        out.push({
          key: `${file}#${functionName(node, source)}`,
          where: `${file}:${start + 1}`,
          lines,
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** The library's files over MAX_FILE_LINES and functions over MAX_FUNCTION_LINES (specs excluded). */
export function sizeOffenders(
  srcRoot: string,
  maxFileLines = MAX_FILE_LINES,
  maxFunctionLines = MAX_FUNCTION_LINES,
): { files: SizeOffender[]; functions: SizeOffender[] } {
  const files: SizeOffender[] = [];
  const functions: SizeOffender[] = [];
  for (const path of walk(srcRoot).sort()) {
    const file = relative(srcRoot, path);
    const text = readFileSync(path, 'utf8');
    const lines = lineCount(text);
    if (lines > maxFileLines) files.push({ key: file, where: `${file}:1`, lines });
    functions.push(...longFunctions(file, text, maxFunctionLines));
  }
  return { files, functions };
}
