// ESLint flat config. Not type-aware on purpose: `npm run lint` stays fast on 2 cores, and
// `tsc --noEmit` (npm run typecheck) already does the type checking.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

// Mocha's exclusive tests (`describe.only(`, `it.only(`, ...) silently skip the rest of the suite.
const exclusiveTests = ['describe', 'context', 'suite', 'it', 'specify', 'test'].map((name) => ({
  selector: `CallExpression[callee.type='MemberExpression'][callee.object.name='${name}'][callee.property.name='only']`,
  message: `${name}.only() skips every other test: remove it before committing`,
}));

export default defineConfig(
  {
    ignores: [
      'dist/',
      'coverage/',
      'bench/results/',
      'bench/.cache/',
      'deploy/',
      'charts/',
      'data/',
      '.gpucap-dev/',
      '.envtest/',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // STYLE.md: no `!` assertions.
      '@typescript-eslint/no-non-null-assertion': 'error',
      // `x == null` (null or undefined) is the one loose comparison allowed.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // The service logs through pino; only the CLI and the composition root may print.
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/main.ts'],
    rules: {
      'no-console': 'error',
    },
  },
  {
    // Functions a reader can hold at once, and lines a reader need not scroll. Blank lines and comments
    // are not counted: the comments say why, and a limit that counted them would push the reasons out
    // of the code (and blank lines between the steps of a function out with them).
    // max-len is deprecated in ESLint core since 8.53 and kept until 11; @stylistic/eslint-plugin's
    // max-len replaces it then. URLs are exempt: they cannot be broken.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      'max-len': ['error', { code: 140, ignoreUrls: true }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...exclusiveTests],
      // chai's property assertions (`expect(x).to.be.true`, `.and.not.empty`) are expressions.
      '@typescript-eslint/no-unused-expressions': 'off',
    },
  },
);
