/*
 * Jest's node environment, with each module compiled as a script rather than by vm.compileFunction.
 *
 * jest-runtime compiles every module a test file loads, once per file, with vm.compileFunction,
 * which V8 does not cache: each API spec compiled Nest, viem, Prisma and ours again. A script of the
 * same source reuses what V8 compiled for an earlier file in the worker. The module runs as before:
 * its body in a function of jest's parameters, same file name, same line numbers in stack traces.
 * Measured on 22 API specs in band, the two ways side by side on one machine: 7-9 % less CPU.
 * A source with a dynamic import() is given jest's loader for it; others are compiled without:
 * giving it to every script saved about half as much.
 */

import { TestEnvironment } from 'jest-environment-node';
import vm from 'node:vm';

type CompileFunction = typeof vm.compileFunction;

const PATCHED = Symbol.for('crawlgate.jest.compileAsScript');

function compileAsScript(original: CompileFunction): CompileFunction {
  const compile = (code: string, params?: readonly string[], options?: vm.CompileFunctionOptions) => {
    const context = options?.parsingContext;
    if (!context) return original(code, params, options);
    const script = new vm.Script(`(function (${(params ?? []).join(', ')}) {\n${code}\n})`, {
      filename: options.filename,
      // The wrapper's line comes first: the module's own lines keep their numbers.
      lineOffset: -1,
      // jest's loader serves a script as it serves a function (the referrer is all it reads of it).
      ...(code.includes('import(')
        ? { importModuleDynamically: options.importModuleDynamically as vm.ScriptOptions['importModuleDynamically'] }
        : {}),
    });
    return script.runInContext(context) as ReturnType<CompileFunction>;
  };
  return Object.assign(compile, { [PATCHED]: true }) as unknown as CompileFunction;
}

// Once per worker process: this module is loaded outside the tests' sandboxes.
if (!(PATCHED in vm.compileFunction)) vm.compileFunction = compileAsScript(vm.compileFunction);

export default TestEnvironment;
