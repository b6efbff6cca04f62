import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier/flat';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.spectator/**', '**/coverage/**', 'artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        process: 'readonly',
        console: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The benches' scripts run on Node only (20+): its web and timer globals.
    files: ['bench/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        ['fetch', 'AbortSignal', 'URL', 'URLSearchParams', 'Buffer', 'setTimeout', 'clearTimeout'].map((name) => [
          name,
          'readonly',
        ]),
      ),
    },
  },
  {
    files: ['shared/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*'],
              message: '@spectator/shared is pure TypeScript: no node: imports (the dashboard uses it too).',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        ...['process', 'Buffer', 'require', '__dirname', 'global'].map((name) => ({
          name,
          message: '@spectator/shared runs in the browser too: no Node globals.',
        })),
      ],
    },
  },
  {
    // The dashboard app runs in the browser (JSX through the TypeScript parser, by file extension);
    // its unit specs run in Node and may use node: modules.
    files: ['dashboard/src/**/*.{ts,tsx}'],
    ignores: ['dashboard/src/**/*.spec.ts'],
    languageOptions: { parserOptions: { ecmaFeatures: { jsx: true } } },
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*'], message: 'The dashboard runs in the browser: no node: imports.' }] },
      ],
    },
  },
  // Formatting is Prettier's (npm run format); no lint rule argues with it.
  prettier,
);
