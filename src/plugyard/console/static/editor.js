// The pipeline editor: drag a palette component onto a slot (or pick it with the
// keyboard, then press a slot). Every edit is posted to the server, which judges it by
// the engine's placement rules and answers the document, the tree and the diagram
// again, all rendered and escaped there; a refused drop answers the rule's code.
"use strict";

(function () {
  var picked = null;

  function status(html) {
    document.getElementById("drop-status").innerHTML = html;
  }

  function alertOf(code, message) {
    var box = document.createElement("div");
    box.className = "alert";
    box.setAttribute("role", "alert");
    box.setAttribute("data-code", code);
    var p = document.createElement("p");
    p.textContent = "Refused: " + code + " — " + message;
    box.appendChild(p);
    return box;
  }

  function send(fields, slotElement) {
    var form = document.getElementById("editor-form");
    var body = new FormData(form);
    Object.keys(fields).forEach(function (k) { body.set(k, fields[k]); });
    return fetch(form.action, {
      method: "POST",
      body: body,
      headers: { "Accept": "application/json" },
      credentials: "same-origin",
    }).then(function (reply) {
      return reply.json().then(function (answer) {
        var box = document.getElementById("drop-status");
        box.textContent = "";
        if (!answer.ok) {
          box.appendChild(alertOf(answer.code, answer.message));
          if (slotElement) slotElement.classList.add("refused");
          return;
        }
        document.getElementById("document").value = answer.document;
        document.getElementById("tree").innerHTML = answer.tree; // server-rendered
        document.getElementById("diagram").innerHTML = answer.diagram; // server-rendered
        var note = document.createElement("p");
        note.className = "notice";
        note.setAttribute("role", "status");
        note.setAttribute("data-code", "ok");
        note.textContent = fields.op === "drop" ? "Placed." : "Removed.";
        box.appendChild(note);
      });
    }).catch(function () {
      status("");
      document.getElementById("drop-status").appendChild(alertOf("network", "no answer"));
    });
  }

  function pick(button) {
    document.querySelectorAll(".palette .item[aria-pressed=true]").forEach(function (b) {
      b.setAttribute("aria-pressed", "false");
    });
    picked = button.getAttribute("data-component");
    button.setAttribute("aria-pressed", "true");
  }

  function dropOn(slot, component) {
    slot.classList.remove("over");
    send({ op: "drop", slot: slot.getAttribute("data-slot"), component: component }, slot);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var palette = document.querySelector(".palette");
    var tree = document.getElementById("tree");
    if (!palette || !tree) return;
    palette.querySelectorAll(".item").forEach(function (item) {
      item.setAttribute("aria-pressed", "false");
    });
    palette.addEventListener("dragstart", function (event) {
      var item = event.target.closest(".drag");
      if (!item) return;
      event.dataTransfer.setData("text/plain", item.getAttribute("data-component"));
      event.dataTransfer.effectAllowed = "copy";
    });
    palette.addEventListener("click", function (event) {
      var item = event.target.closest(".item");
      if (item) pick(item);
    });
    palette.addEventListener("keydown", function (event) {
      var item = event.target.closest(".item");
      if (item && (event.key === "Enter" || event.key === " ")) {
        event.preventDefault();
        pick(item);
      }
    });
    tree.addEventListener("dragover", function (event) {
      var slot = event.target.closest(".slot");
      if (!slot) return;
      event.preventDefault();
      slot.classList.add("over");
    });
    tree.addEventListener("dragleave", function (event) {
      var slot = event.target.closest(".slot");
      if (slot) slot.classList.remove("over");
    });
    tree.addEventListener("drop", function (event) {
      var slot = event.target.closest(".slot");
      if (!slot) return;
      event.preventDefault();
      dropOn(slot, event.dataTransfer.getData("text/plain"));
    });
    tree.addEventListener("click", function (event) {
      var slot = event.target.closest(".slot");
      if (slot && picked) { dropOn(slot, picked); return; }
      var remove = event.target.closest("[data-remove]");
      if (remove) send({ op: "remove", pointer: remove.getAttribute("data-remove") }, null);
    });
  });
})();
