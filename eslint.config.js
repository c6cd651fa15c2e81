// One lint configuration for src/, test/, bench/ (and web/ when present).
// Type-checked rules catch the promise mistakes that hurt a real-time server most (a floating
// promise is an unhandled rejection; a promise handed to an event listener is never awaited).
// The import rules keep the planes one-way (DESIGN.md "Planes"): another plane is entered only
// through its index.ts, and the lower planes never reach up into the API.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import prettier from 'eslint-config-prettier';

// Folders under src/ that are planes: each is entered through its index.ts only.
const PLANES = [
  'api',
  'cli',
  'config',
  'coord',
  'events',
  'jobs',
  'media',
  'sessions',
  'speech',
  'store',
  'stream',
  'telephony',
  'webhooks',
];

// One-way dependencies: the planes on the left never import the planes on the right.
const NEVER_IMPORTS = {
  media: ['api', 'sessions', 'stream', 'telephony', 'speech', 'store', 'cli', 'jobs', 'webhooks'],
  speech: ['api', 'sessions', 'stream', 'telephony', 'cli', 'jobs'],
  telephony: ['api', 'stream', 'cli', 'jobs'],
  sessions: ['api', 'stream', 'cli', 'jobs'],
  store: ['api', 'sessions', 'stream', 'telephony', 'media', 'speech', 'cli', 'jobs', 'coord'],
  events: PLANES.filter((p) => p !== 'events'),
  config: PLANES.filter((p) => p !== 'config'),
};

const planeZones = [
  // Through the door only: src/<other>/** → src/<plane>/index.ts.
  ...PLANES.map((plane) => ({
    target: [`./src/!(${plane})/**/*`, './src/*.ts'],
    from: `./src/${plane}`,
    except: ['./index.ts'],
    message: `import the ${plane} plane through src/${plane}/index.ts`,
  })),
  ...Object.entries(NEVER_IMPORTS).flatMap(([plane, forbidden]) =>
    forbidden.map((other) => ({
      target: `./src/${plane}`,
      from: `./src/${other}`,
      message: `planes import one way: ${plane}/ must not depend on ${other}/`,
    })),
  ),
];

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.voxbridge/**', 'web/dist/**', '**/*.js', '**/*.cjs', '**/*.mjs'],
  },
  {
    // The server code, its tests and benchmarks: one TypeScript program (tsconfig.check.json).
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'vitest.config.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    plugins: { 'import-x': importX },
    languageOptions: {
      parserOptions: {
        project: './tsconfig.check.json',
        tsconfigRootDir: import.meta.dirname,
      },
    },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.check.json' })],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-base-to-string': ['error', { ignoredTypeNames: ['RawData', 'Error', 'RegExp', 'URL', 'URLSearchParams'] }],
      'no-constant-condition': ['error', { checkLoops: false }],
      // Type-checked rules that fight the code's deliberate boundary handling (JSON from sockets,
      // SIP and child processes is `unknown`/`any` until its schema validates it).
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The web console (when present) builds with its own toolchain: lint it without type information.
    files: ['web/**/*.ts', 'web/**/*.tsx'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
  },
  {
    // Tests and benchmarks read arbitrary JSON off sockets and hand mocks around.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: planeZones }],
      // Cycles matter in the product's module graph; tests and benches only import it (leaves).
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  prettier,
);
