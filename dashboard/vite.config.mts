import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The shared wire types and helpers are consumed from source, so the dashboard needs no build of
// @spectator/shared (which is compiled to CommonJS for Node) and tree-shaking sees plain ESM.
const sharedEntry = fileURLToPath(new URL('../shared/src/index.ts', import.meta.url));

export default defineConfig(({ command, mode }) => {
  // A production build is a production build even when the calling process has another NODE_ENV
  // (jest sets `test`, which would otherwise bundle React's development build, twice the size).
  if (command === 'build' && mode === 'production') process.env.NODE_ENV = 'production';
  return {
    plugins: [react()],
    resolve: { alias: { '@spectator/shared': sharedEntry } },
    // Served by the backend at `/`; relative asset URLs also work behind a path prefix.
    base: './',
    build: {
      outDir: 'dist',
      emptyOutDir: true,
      sourcemap: true,
      target: 'es2022',
      rolldownOptions: {
        // @spectator/shared is pure (no side effects) but re-exports its ignore-rule parser, which
        // imports the YAML library; declaring both side-effect free lets unused parts drop out
        // (about 10 kB gzip of YAML the dashboard never calls).
        treeshake: { moduleSideEffects: (id: string) => !/[\\/](shared[\\/]src|node_modules[\\/]yaml)[\\/]/.test(id) },
      },
    },
    server: {
      // `npm run dev -w @spectator/dashboard` proxies the API to a locally started backend.
      proxy: { '/api': { target: process.env.SPECTATOR_BACKEND_URL ?? 'http://127.0.0.1:3000', ws: true } },
    },
  };
});
