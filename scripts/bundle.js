// Build step: the executables and the library bundled by esbuild into dist/bundle and dist/library, so a start reads a few files instead of the ~150 ES modules and ajv's CommonJS files (CLI-34).
import { chmodSync, readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

/** The executables, bundled into dist/bundle under the same names as in dist/cli; package.json `bin` points at these. */
export const EXECUTABLES = ['run', 'serve', 'mcp', 'worker'];

/**
 * The packages inlined into the bundle (CLI-34): ajv and what it requires, which a plain run loads
 * for a Request's own schemas, as ~90 CommonJS files otherwise. Every other package stays
 * external and is loaded from node_modules when a run uses it, so the guard of what a start loads
 * still sees each heavy package by its path.
 */
export const INLINED = ['ajv', 'ajv-formats', 'fast-uri', 'fast-deep-equal', 'json-schema-traverse', 'require-from-string'];

/** True when the import `path` names one of the inlined packages or a file of one. */
function inlined(path) {
  return INLINED.some((name) => path === name || path.startsWith(`${name}/`));
}

/**
 * The sources load ajv through `createRequire(import.meta.url)` so ES modules can require it lazily;
 * in the bundle that module-level `require` is dropped, so esbuild sees the `require()` calls and
 * inlines ajv as lazily evaluated CommonJS (the banner's `require` serves what stays external).
 */
const bundledRequire = {
  name: 'bundled-require',
  setup(context) {
    context.onResolve({ filter: /^[^./]/ }, (arguments_) =>
      arguments_.path.startsWith('node:') || inlined(arguments_.path) ? undefined : { path: arguments_.path, external: true },
    );
    context.onLoad({ filter: /[/\\]src[/\\]protocol[/\\]schemas\.ts$/ }, (arguments_) => {
      const text = readFileSync(arguments_.path, 'utf8');
      const line = 'const require = createRequire(import.meta.url);';
      if (!text.includes(line)) throw new Error(`${arguments_.path}: expected the line \`${line}\` the bundle replaces`);
      return { contents: text.replace(line, ''), loader: 'ts' };
    });
  },
};

/**
 * The options both bundles share. Every chunk sits one folder below dist/, like dist/cli: the
 * sources' `import.meta.url` paths name the package root as `../../` and dist's files through their
 * folder (`../protocol/…`). Lazy `import()`s stay lazy chunks; the linked source maps keep stack
 * traces readable for `--enable-source-maps` and debuggers, and cost nothing unless asked for.
 */
const COMMON = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  chunkNames: '[name]-[hash]',
  banner: { js: "import { createRequire as bundleCreateRequire } from 'node:module';\nconst require = bundleCreateRequire(import.meta.url);" },
  logLevel: 'warning',
};

rmSync('dist/bundle', { recursive: true, force: true });
rmSync('dist/library', { recursive: true, force: true });
await build({
  ...COMMON,
  entryPoints: Object.fromEntries(EXECUTABLES.map((name) => [name, `src/cli/${name}.ts`])),
  outdir: 'dist/bundle',
  plugins: [bundledRequire],
});
for (const name of EXECUTABLES) chmodSync(`dist/bundle/${name}.js`, 0o755);
// The library (`import('delegate-run')`) keeps every package external, ajv included: its import loads
// no ajv, which a program using it may never need.
await build({ ...COMMON, entryPoints: { index: 'src/index.ts' }, outdir: 'dist/library', packages: 'external' });
