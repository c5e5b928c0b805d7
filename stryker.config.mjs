// StrykerJS mutation testing for the rules (src/core), the runtime (src/runtime) and the dsh adapter (src/dsh): `npm run test:mutation`.
// Not part of `npm test` or CI (it takes a long time). The report lands in reports/mutation/ (git-ignored), or in
// $STRYKER_REPORT_DIR; `npx stryker run --mutate 'src/dsh/**/*.ts'` limits a run to one folder.
const reports = process.env.STRYKER_REPORT_DIR ?? 'reports/mutation';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: ['src/core/**/*.ts', 'src/runtime/**/*.ts', 'src/dsh/**/*.ts', '!src/**/*.d.ts'],
  coverageAnalysis: 'perTest',
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 2),
  timeoutMS: 20_000,
  reporters: ['clear-text', 'html', 'json', 'progress'],
  htmlReporter: { fileName: `${reports}/index.html` },
  jsonReporter: { fileName: `${reports}/mutation.json` },
  tempDirName: process.env.STRYKER_TEMP_DIR ?? '.stryker-tmp',
  cleanTempDir: true,
  ignoreStatic: true,
  // TypeScript 7 has no JavaScript API for Stryker's tsconfig rewrite; vitest transpiles on its own, so point it at no file.
  tsconfigFile: 'no-tsconfig-for-stryker.json',
};
