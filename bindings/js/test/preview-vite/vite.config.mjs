// The Vite build of the embedding test app (test/preview-element.test.mjs).
export default {
  logLevel: "error",
  worker: { format: "es" },
  build: { emptyOutDir: true, chunkSizeWarningLimit: 4096 },
};
