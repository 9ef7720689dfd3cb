// Draw the ranking page's grouped bar chart of head versus tail scores per entry.
(function () {
  "use strict";
  var data = document.getElementById("headtail-data");
  var canvas = document.getElementById("headtail-chart");
  if (!data || !canvas || typeof Chart === "undefined") {
    return;
  }
  var chart = JSON.parse(data.textContent);
  var labels = chart.labels.map(function (name, i) {
    return chart.baseline[i] ? name + " (baseline)" : name;
  });
  var styles = getComputedStyle(document.documentElement);
  var headColor = styles.getPropertyValue("--head").trim() || "#2f5fb3";
  var tailColor = styles.getPropertyValue("--tail").trim() || "#d9822b";
  // Baselines are drawn paler so participants' bars stand out.
  function shade(color) {
    return chart.baseline.map(function (isBaseline) { return isBaseline ? color + "73" : color; });
  }
  canvas.parentElement.style.height = Math.max(220, 70 + labels.length * 44) + "px";

  new Chart(canvas, {
    type: "bar",
    data: {
      labels: labels,
      datasets: [
        { label: "Head (popular)", data: chart.head, backgroundColor: shade(headColor), borderRadius: 2 },
        { label: "Tail (long-tail)", data: chart.tail, backgroundColor: shade(tailColor), borderRadius: 2 }
      ]
    },
    options: {
      indexAxis: "y",
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      scales: {
        x: { min: 0, max: 1, title: { display: true, text: chart.metric } },
        y: { ticks: { autoSkip: false } }
      },
      plugins: {
        legend: { position: "top", align: "start" },
        tooltip: {
          callbacks: {
            label: function (ctx) {
              return ctx.dataset.label + ": " + (ctx.raw === null ? "–" : Number(ctx.raw).toFixed(4));
            }
          }
        }
      }
    }
  });
})();
