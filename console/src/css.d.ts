// Stylesheets imported for their side effect: esbuild bundles them into the console's one .css file.
declare module '*.css';
