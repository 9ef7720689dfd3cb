// Upload a prediction file with a progress bar and a disabled button; without JavaScript the form posts as usual.
(function () {
  "use strict";

  function sizeText(bytes) {
    if (bytes < 1024 * 1024) {
      return Math.max(1, Math.round(bytes / 1024)) + " KB";
    }
    return (bytes / (1024 * 1024)).toFixed(1) + " MB";
  }

  // Show the server's answer (the phase page with the problems) as if the form had been posted.
  function showPage(html) {
    document.open();
    document.write(html);
    document.close();
  }

  function enhance(form) {
    var button = form.querySelector("button[type=submit]");
    var box = form.querySelector(".upload-progress");
    var file = form.querySelector("input[type=file]");
    if (!button || !box || !file || !window.FormData || !window.XMLHttpRequest) {
      return;
    }
    var bar = box.querySelector("progress");
    var text = box.querySelector(".upload-progress-text");
    var label = button.textContent;

    function reset(message) {
      button.disabled = false;
      button.textContent = label;
      form.removeAttribute("aria-busy");
      text.textContent = message;
    }

    form.addEventListener("submit", function (event) {
      if (!file.files || !file.files.length) {
        return; // the server answers "Choose a file to upload." in the form
      }
      event.preventDefault();
      var total = file.files[0].size;
      var request = new XMLHttpRequest();
      request.open("POST", form.action);
      request.upload.addEventListener("progress", function (progress) {
        if (progress.lengthComputable) {
          bar.value = Math.round((progress.loaded / progress.total) * 100);
          text.textContent = "Uploading… " + bar.value + "% of " + sizeText(total);
        }
      });
      request.upload.addEventListener("load", function () {
        bar.removeAttribute("value"); // indeterminate while the server checks the file
        text.textContent = "Uploaded. Checking the file…";
      });
      request.addEventListener("load", function () {
        var landed = request.responseURL || "";
        if (request.status >= 200 && request.status < 300 && /\/submissions\/\d+/.test(landed)) {
          text.textContent = "Accepted. Opening the submission…";
          window.location.assign(landed);
        } else if (request.responseText && /^\s*</.test(request.responseText)) {
          showPage(request.responseText);
        } else {
          reset("The upload was not accepted (HTTP " + request.status + "). Try again.");
        }
      });
      request.addEventListener("error", function () {
        reset("The upload stopped: the connection failed. Nothing was charged; try again.");
      });
      request.addEventListener("abort", function () {
        reset("The upload was cancelled.");
      });
      button.disabled = true;
      button.textContent = "Uploading…";
      form.setAttribute("aria-busy", "true");
      box.hidden = false;
      bar.value = 0;
      text.textContent = "Uploading… 0% of " + sizeText(total);
      request.send(new FormData(form));
    });
  }

  document.querySelectorAll("form[data-upload-progress]").forEach(enhance);
})();
