// The console's own script: show_when on generated forms, the help of a chosen option,
// and runs of streaming operations over server-sent events. No framework, nothing
// inline (the Content-Security-Policy allows scripts from plugyard only). Every piece of
// markup placed here was rendered, and escaped, by the server.
"use strict";

(function () {
  // --- show_when -------------------------------------------------------------------
  // A field carries data-show-when: [{path, in: [values]}]; it shows when all hold.
  // The server applies the same rule when the form is posted (forms/submission.py).
  function currentValue(form, path) {
    var inputs = form.querySelectorAll("[name]");
    for (var i = 0; i < inputs.length; i++) {
      var el = inputs[i];
      if (el.name !== path) continue;
      var box = el.closest("[data-show-when]");
      if (box && box.hidden) return undefined;
      if (el.type === "checkbox") return el.checked;
      if (el.tagName === "SELECT" && el.hasAttribute("data-json")) {
        if (el.value === "") return null;
        try { return JSON.parse(el.value); } catch (e) { return el.value; }
      }
      if (el.inputMode === "numeric" || el.inputMode === "decimal") {
        var n = Number(el.value);
        return el.value.trim() === "" || isNaN(n) ? el.value : n;
      }
      return el.value;
    }
    return undefined;
  }

  function holds(form, conditions) {
    return conditions.every(function (c) {
      var value = currentValue(form, c.path);
      return c.in.some(function (v) { return JSON.stringify(v) === JSON.stringify(value); });
    });
  }

  function applyShowWhen(form) {
    // Repeat until stable: a field may depend on one that has just been hidden.
    for (var round = 0; round < 5; round++) {
      var changed = false;
      form.querySelectorAll("[data-show-when]").forEach(function (box) {
        var conditions;
        try { conditions = JSON.parse(box.getAttribute("data-show-when")); } catch (e) { return; }
        var show = holds(form, conditions);
        if (box.hidden === show) {
          box.hidden = !show;
          box.querySelectorAll("input, select, textarea").forEach(function (el) {
            el.disabled = !show;
          });
          changed = true;
        }
      });
      if (!changed) return;
    }
  }

  function optionHelp(select) {
    var box = document.getElementById(select.id + "-option-help");
    if (!box) return;
    var chosen = select.options[select.selectedIndex];
    box.textContent = chosen ? chosen.getAttribute("data-help") || "" : "";
  }

  // --- streaming runs ----------------------------------------------------------------
  function parseEvents(buffer, onEvent) {
    var parts = buffer.split("\n\n");
    var rest = parts.pop();
    parts.forEach(function (block) {
      var name = "message", data = [];
      block.split("\n").forEach(function (line) {
        if (line.indexOf("event: ") === 0) name = line.slice(7);
        else if (line.indexOf("data: ") === 0) data.push(line.slice(6));
      });
      try { onEvent(name, JSON.parse(data.join("\n"))); } catch (e) { /* not ours */ }
    });
    return rest;
  }

  function streamRun(form, event) {
    event.preventDefault();
    var progress = document.getElementById("progress");
    var box = document.getElementById("progress-box");
    var result = document.getElementById("result-box");
    var errors = document.getElementById("form-errors");
    var button = form.querySelector("button[type=submit]");
    progress.textContent = "";
    result.textContent = "";
    errors.textContent = "";
    box.hidden = false;
    button.disabled = true;
    fetch(form.action, {
      method: "POST",
      body: new FormData(form),
      headers: { "Accept": "text/event-stream" },
      credentials: "same-origin",
    }).then(function (reply) {
      if (!reply.ok || !reply.body) { form.submit(); return; }
      var reader = reply.body.getReader();
      var decoder = new TextDecoder();
      var buffer = "";
      function onEvent(name, data) {
        if (name === "progress") {
          var item = document.createElement("li");
          item.textContent = data.message !== undefined ? data.message : JSON.stringify(data.data);
          progress.appendChild(item);
        } else if (name === "step") {
          progress.insertAdjacentHTML("beforeend", data.html); // rendered by the server
        } else if (name === "result") {
          result.innerHTML = data.html; // rendered and escaped by the server
          if (form.hasAttribute("data-final-steps")) {
            // The result lists the final steps: the streamed ones would show each twice.
            progress.textContent = "";
            box.hidden = true;
          }
        } else if (name === "invalid") {
          errors.innerHTML = data.html;
        }
      }
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) { button.disabled = false; return; }
          buffer = parseEvents(buffer + decoder.decode(chunk.value, { stream: true }), onEvent);
          return pump();
        });
      }
      return pump();
    }).catch(function () { button.disabled = false; });
  }

  // --- confirmation of destructive buttons -------------------------------------------
  function confirmClicks(event) {
    var button = event.target.closest("[data-confirm]");
    if (button && !window.confirm(button.getAttribute("data-confirm"))) event.preventDefault();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form").forEach(function (form) {
      if (form.querySelector("[data-show-when]")) {
        applyShowWhen(form);
        form.addEventListener("input", function () { applyShowWhen(form); });
        form.addEventListener("change", function () { applyShowWhen(form); });
      }
      if (form.hasAttribute("data-stream")) {
        form.addEventListener("submit", function (event) { streamRun(form, event); });
      }
    });
    document.querySelectorAll("select[data-json]").forEach(function (select) {
      optionHelp(select);
      select.addEventListener("change", function () { optionHelp(select); });
    });
    document.addEventListener("click", confirmClicks);
  });
})();
