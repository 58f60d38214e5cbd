// The one type-aware lint: a promise nobody awaits. The store's writes are promises; on SQLite they
// happen to finish at once, on PostgreSQL they do not, so a missing `await` passes one backend's
// suite and fails the other's. Kept apart from eslint.config.mjs so that the main lint stays fast;
// `npm run lint` runs both (about 30 s for this one on 2 cores).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/', 'coverage/', 'bench/results/', 'bench/.cache/', 'deploy/', 'charts/', 'data/', '.gpucap-dev/', '.envtest/', '**/*.mjs', '**/*.js'],
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser, parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
);
