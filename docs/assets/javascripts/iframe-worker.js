// A Web Worker for pages opened over file://, where browsers refuse `new Worker(url)`:
// the worker's script runs in a hidden iframe of the page instead, and messages pass
// between the two as they would between a page and a worker. mkdocs-material's search
// runs in a worker; its offline plugin would load squidfunk's iframe-worker shim from a
// CDN for this, and this site loads nothing from outside (mkdocs.yml names this file in
// `extra.polyfills`, which keeps the plugin from adding the CDN copy). Served over
// http(s), the browser's own Worker is left alone.
(function () {
  "use strict";
  if (window.location.protocol !== "file:") {
    return;
  }

  function later(callback) {
    window.setTimeout(callback, 0);
  }

  class IFrameWorker extends EventTarget {
    constructor(url) {
      super();
      this.onmessage = null;
      this.onerror = null;
      this.pending = [];
      this.ready = false;
      this.frame = document.createElement("iframe");
      this.frame.hidden = true;
      this.frame.setAttribute("aria-hidden", "true");
      this.frame.setAttribute("tabindex", "-1");
      (document.body || document.documentElement).appendChild(this.frame);
      const scope = this.frame.contentWindow;
      const worker = this;
      // The worker's side: what it posts comes back here; importScripts has no
      // synchronous equivalent in a page (the English search index needs none).
      scope.postMessage = function (data) {
        later(function () {
          worker.deliver(data);
        });
      };
      scope.importScripts = function () {
        throw new Error("importScripts is not available to a worker run over file://");
      };
      const script = scope.document.createElement("script");
      script.src = new URL(url, window.location.href).href;
      script.onload = function () {
        worker.ready = true;
        worker.pending.splice(0).forEach(function (data) {
          worker.postMessage(data);
        });
      };
      script.onerror = function () {
        const event = new ErrorEvent("error", { message: "cannot load " + script.src });
        if (typeof worker.onerror === "function") {
          worker.onerror(event);
        }
        worker.dispatchEvent(event);
      };
      scope.document.head.appendChild(script);
    }

    postMessage(data) {
      if (!this.ready) {
        this.pending.push(data);
        return;
      }
      const scope = this.frame.contentWindow;
      later(function () {
        scope.dispatchEvent(new scope.MessageEvent("message", { data: data }));
      });
    }

    deliver(data) {
      const event = new MessageEvent("message", { data: data });
      if (typeof this.onmessage === "function") {
        this.onmessage(event);
      }
      this.dispatchEvent(event);
    }

    terminate() {
      this.frame.remove();
    }
  }

  window.Worker = IFrameWorker;
})();
