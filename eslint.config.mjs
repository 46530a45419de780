// One lint configuration for the workspace (ESLint flat config); `nx run-many -t lint` runs it per
// project and fails on any warning (--max-warnings=0). Formatting is Prettier's job, not ESLint's.
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Product code: what ships in a package, the API or the dashboard (tests and tools excluded). */
const PRODUCT_SOURCES = ['libs/*/src/**/*.ts', 'apps/api/src/**/*.ts', 'apps/dashboard/src/**/*.{ts,tsx}'];
const TESTS = ['**/*.spec.ts', '**/testing/**', '**/*.test-data.ts'];
/** Off only for text that is not on disk (the boundary spec lints made-up files through stdin). */
const TYPE_AWARE = process.env.CRAWLGATE_LINT_UNTYPED !== '1';

export default tseslint.config(
  {
    ignores: ['**/node_modules/', '**/dist/', 'coverage/', '.nx/', 'test-output/', '.data/', 'apps/api/src/generated/'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `_`-prefixed names are deliberately unused (positional parameters, destructured leftovers).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // The jest configurations and presets are CommonJS, as jest loads them.
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests and tools read untyped JSON answers and poke at internals on purpose; product code may not.
    files: [...TESTS, 'apps/*/test/**', 'apps/e2e/**', 'tools/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['apps/dashboard/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Module boundaries: core imports nothing of ours; packages import core and each other, never an
    // app; the API imports libraries; only tests and tools reach across everything.
    files: PRODUCT_SOURCES,
    ignores: TESTS,
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          depConstraints: [
            { sourceTag: 'type:core', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:package', onlyDependOnLibsWithTags: ['type:core', 'type:package'] },
            { sourceTag: 'type:dev', onlyDependOnLibsWithTags: ['type:core'] },
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:core', 'type:package', 'type:dev'] },
          ],
        },
      ],
    },
  },
  ...(TYPE_AWARE ? [typeAwareRules()] : []),
  prettier,
);

function typeAwareRules() {
  return {
    // Type-aware where it is cheap and matters most: a promise nobody awaits on the money path is a
    // payment or a refusal that happens after the answer has gone.
    files: ['libs/*/src/**/*.ts', 'apps/api/src/**/*.ts'],
    ignores: TESTS,
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/await-thenable': 'error',
    },
  };
}
