/** A WebAssembly text file, compiled by esbuild.js (`wabt`) and bundled as the module's bytes. */
declare module '*.wat' {
  const bytes: Uint8Array<ArrayBuffer>;
  export default bytes;
}
