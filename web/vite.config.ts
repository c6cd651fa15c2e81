// The web console: Preact + Vite, built into dist/web and served by the gateway under /console/.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/console/',
  plugins: [preact()],
  build: { outDir: fileURLToPath(new URL('../dist/web', import.meta.url)), emptyOutDir: true, sourcemap: true },
  // `npm run web:dev`: the gateway on :8080 answers the API calls.
  server: { proxy: { '/v1': 'http://127.0.0.1:8080', '/console/api': 'http://127.0.0.1:8080' } },
});
