// Starts Swagger UI on /docs from a file, not an inline script: the page's
// Content-Security-Policy allows scripts from plugyard itself only.
"use strict";
window.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("swagger-ui");
  // eslint-disable-next-line no-undef
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-openapi-url"),
    domNode: root,
    layout: "BaseLayout",
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset].filter(Boolean),
  });
});
