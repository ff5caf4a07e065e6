// `?raw` imports are the file's text: wrangler reads them as Text modules (wrangler.toml
// [[rules]]), and Vite, which builds the Worker for the workerd tests, does the same.
declare module "*?raw" {
  const text: string;
  export default text;
}
