// A running job's page: fetch it again every 2 seconds and replace its progress card, until the job ends.
// (No meta refresh: it reloads the whole page under a screen reader's or a keyboard user's feet.)
(function () {
  "use strict";

  var card = document.querySelector(".job-card[data-job-running]");
  if (!card || !window.fetch || !window.DOMParser) {
    return;
  }
  var url = card.getAttribute("data-poll-url");

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        return response.ok ? response.text() : Promise.reject(response.status);
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var next = fresh.querySelector(".job-card");
        var heading = fresh.querySelector("h1");
        if (next) {
          card.innerHTML = next.innerHTML;
        }
        if (heading && document.querySelector("h1")) {
          document.querySelector("h1").innerHTML = heading.innerHTML;
        }
        if (next && next.hasAttribute("data-job-running")) {
          window.setTimeout(poll, 2000);
        } else {
          card.removeAttribute("data-job-running");
        }
      })
      .catch(function () {
        window.setTimeout(poll, 10000); // the server is away for a moment: try again later
      });
  }

  window.setTimeout(poll, 2000);
})();
