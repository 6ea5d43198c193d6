/**
 * Uppy (its core, the Dashboard and the tus uploader) as one browser script, bundled by
 * scripts/build-console-assets.ts and served by the Worker at /console/assets/uppy.js with its stylesheet at
 * /console/assets/uppy.css: no CDN. It defines the global `Uppy` as Uppy's own CDN build does
 * (`new Uppy.Uppy().use(Uppy.Dashboard, …).use(Uppy.Tus, …)`): the console's Uploads page runs it, and so can
 * a customer's page that uploads through a direct upload URL.
 */
export { default as Uppy } from "@uppy/core";
export { default as Dashboard } from "@uppy/dashboard";
export { default as Tus } from "@uppy/tus";
