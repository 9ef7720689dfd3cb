// Small progressive enhancements; every page works without JavaScript.
(function () {
  "use strict";

  // Show each UTC time's local equivalent as a tooltip (the page text stays UTC).
  document.querySelectorAll("time[datetime]").forEach(function (el) {
    var when = new Date(el.getAttribute("datetime"));
    if (!isNaN(when.getTime())) {
      el.title = "Your local time: " + when.toLocaleString();
    }
  });

  // Ask before irreversible organizer actions (close a phase, re-score everything).
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) {
        event.preventDefault();
      }
    });
  });

  // Show the chosen file's name and size next to the upload field.
  document.querySelectorAll("input[type=file]").forEach(function (input) {
    input.addEventListener("change", function () {
      var note = input.parentElement.querySelector(".file-chosen");
      if (!note) {
        note = document.createElement("p");
        note.className = "hint file-chosen";
        input.insertAdjacentElement("afterend", note);
      }
      var file = input.files && input.files[0];
      note.textContent = file ? file.name + " · " + file.size.toLocaleString() + " bytes" : "";
    });
  });
})();
