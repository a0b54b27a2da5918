// The Vite build of the embedding test app (preview/test/element.test.mjs).
export default {
  logLevel: "error",
  worker: { format: "es" },
  build: { emptyOutDir: true, chunkSizeWarningLimit: 4096 },
};
